"""Functional smoke test of ``scripts/bench_core.py``: the corpus builder and one measurement round
work end to end at a tiny size with the hashing embedder. No timing is asserted."""

from __future__ import annotations

import importlib.util
import json
import math
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "bench_core.py"


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_core", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_core"] = module  # dataclasses look their module up while the class is built
    try:
        spec.loader.exec_module(module)
    finally:
        sys.modules.pop("bench_core", None)
    return module


def _tiny(bench: ModuleType) -> Any:
    return bench.Params(
        pool_size=60,
        chunk=100,
        pinned=3,
        warmup=2,
        save_n=8,
        batch_size=10,
        batches=2,
        recall_unique=10,
        recall_repeats=6,
        snapshot_n=6,
        snapshot_distinct=4,
        profile_n=2,
    )


def _positive(value: Any) -> bool:
    return isinstance(value, int | float) and math.isfinite(value) and value > 0


def test_generator_texts_are_distinct_and_mixed(bench: ModuleType) -> None:
    gen = bench.TextGenerator(7)
    fams = [gen.family() for _ in range(400)]
    texts = [gen.text(f) for f in fams]
    assert len(set(texts)) == len(texts)
    langs = {gen.families[f].lang for f in fams}
    assert langs == {"en", "zh", "mixed"}
    words = [bench._word_count(t) for t in texts]
    assert min(words) >= 4
    assert max(words) <= 90


def test_run_writes_expected_report(bench: ModuleType, tmp_path: Path) -> None:
    out = tmp_path / "results"
    report = bench.run(
        ["hashing"], [300], out, _tiny(bench), profile_dir=tmp_path / "profiles", log=lambda _msg: None
    )
    saved = json.loads((out / "core_latency.json").read_text())
    md = (out / "core_latency.md").read_text()
    assert "| hashing | 300 | save |" in md
    assert "synthetic" in md

    assert set(saved) >= {"generated_at", "machine", "corpus", "results", "targets"}
    assert set(saved["machine"]) >= {"cores", "python", "numpy"}
    assert saved["corpus"]["synthetic"] is True
    assert len(saved["results"]) == 1
    result = saved["results"][0]
    assert result["model"] == "hashing"
    assert result["size"] == 300
    assert result["corpus"]["size"] == 300
    assert result["corpus"]["pinned"] == 3
    for key in ("save_ms", "save_embed_ms", "recall_ms", "recall_cold_ms", "query_embed_ms", "snapshot_ms"):
        stats = result[key]
        assert set(stats) >= {"p50", "p95", "p99", "mean", "n"}, key
        assert stats["n"] > 0, key
        for name in ("p50", "p95", "p99", "mean"):
            assert _positive(stats[name]), (key, name, stats[name])
        assert stats["p50"] <= stats["p95"] <= stats["p99"], key
    assert result["save_ms"]["n"] == 8
    assert result["recall_ms"]["n"] == 16
    assert result["recall_cold_ms"]["n"] == 10  # each distinct query misses the LRU once
    assert result["snapshot_ms"]["n"] == 6
    assert _positive(result["batch_per_s"])
    assert _positive(result["rss_mb"])
    assert 0 < result["cache_hit_rate"] < 1
    assert result["cache_hit_rate"] == pytest.approx(6 / 16)
    assert set(result["recall_parts_ms"]) == {
        "query_embed",
        "keyword_search",
        "vector_search",
        "fetch",
        "touch",
    }
    assert report["results"][0]["size"] == 300
    # hashing has no targets; every target of the real models is reported as not measured
    assert all(t["pass"] is None for t in saved["targets"].values())
    assert sorted(p.name for p in (tmp_path / "profiles").iterdir()) == [
        "hashing_300_batch.txt",
        "hashing_300_recall.txt",
        "hashing_300_save.txt",
        "hashing_300_snapshot.txt",
    ]


def test_targets_pass_and_miss(bench: ModuleType) -> None:
    def result(size: int, recall_p95: float, save_p95: float, batch: float) -> dict[str, Any]:
        return {
            "model": "e5",
            "size": size,
            "recall_ms": {"p95": recall_p95},
            "recall_cold_ms": {"p95": recall_p95},
            "snapshot_ms": {"p95": 10.0},
            "save_ms": {"p95": save_p95},
            "batch_per_s": batch,
        }

    targets = bench.evaluate_targets([result(10_000, 99.0, 50.0, 41.0), result(100_000, 30.0, 70.0, 39.0)])
    recall = targets["e5: recall_ms.p95 <= 40 at 100k"]
    assert recall["pass"] is True
    assert [c["size"] for c in recall["checks"]] == [100_000]  # the 10k figure is not held to it
    assert targets["e5: save_ms.p95 <= 60"]["pass"] is False
    assert targets["e5: batch_per_s >= 40"]["pass"] is False
    assert targets["use: save_ms.p95 <= 15"]["pass"] is None
