"""The Python client retries 429 and 503, honouring Retry-After, and gives up with ApiError."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from memvault.client import ApiError, MemvaultClient


class Flaky(BaseHTTPRequestHandler):
    """Answers the first ``failures`` requests with ``status`` (Retry-After: 0.2), then 200."""

    failures = 2
    status = 503
    seen: list[float] = []  # noqa: RUF012 - test double state

    def do_GET(self) -> None:
        Flaky.seen.append(time.monotonic())
        if len(Flaky.seen) <= Flaky.failures:
            body = json.dumps({"error": {"code": "busy", "message": "try later"}}).encode()
            self.send_response(Flaky.status)
            self.send_header("Retry-After", "0.2")
        else:
            body = json.dumps({"status": "ok", "version": "t", "embedder": "x", "backend": "local"}).encode()
            self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def flaky() -> Iterator[str]:
    Flaky.seen = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), Flaky)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


@pytest.mark.parametrize("status", [429, 503])
def test_client_retries_after_the_server_says_when(flaky: str, status: int) -> None:
    Flaky.status, Flaky.failures = status, 2
    assert MemvaultClient(flaky, retries=3).health()["status"] == "ok"
    assert len(Flaky.seen) == 3
    gaps = [b - a for a, b in zip(Flaky.seen, Flaky.seen[1:], strict=False)]
    assert all(g >= 0.18 for g in gaps)  # Retry-After: 0.2 was honoured


def test_client_gives_up_after_its_retries(flaky: str) -> None:
    Flaky.status, Flaky.failures = 503, 10
    with pytest.raises(ApiError) as err:
        MemvaultClient(flaky, retries=2).health()
    assert err.value.status == 503 and err.value.code == "busy"
    assert len(Flaky.seen) == 3
