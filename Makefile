.PHONY: dev test lint serve bench
dev:
	bash scripts/setup
test:
	bash scripts/test
lint:
	.venv/bin/ruff check layers/core/python tests scripts && .venv/bin/mypy
serve:
	.venv/bin/memvault serve --dev
bench:
	.venv/bin/python scripts/bench_core.py
