"""``memvault serve`` as a real process: one waitress process and two gunicorn workers, both shut
down gracefully on SIGTERM; with two processes, a write through one is recalled through either."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

BIN = Path(sys.executable).with_name("memvault")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def call(port: int, method: str, path: str, body: dict[str, object] | None = None) -> dict[str, object]:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data, method=method)
    with urllib.request.urlopen(req, timeout=10) as r:
        return dict(json.loads(r.read()))


@pytest.mark.parametrize("workers", [1, 2])
def test_serve_answers_then_stops_gracefully_on_sigterm(tmp_path: Path, workers: int) -> None:
    port = free_port()
    env = {**os.environ, "MEMVAULT_EMBEDDER": "hashing"}
    proc = subprocess.Popen(
        [
            str(BIN),
            "--data-dir",
            str(tmp_path),
            "serve",
            "--dev",
            "--port",
            str(port),
            "--workers",
            str(workers),
            "--threads",
            "2",
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.time() + 60
        while True:
            try:
                assert call(port, "GET", "/v1/health")["status"] == "ok"
                break
            except OSError:
                if time.time() > deadline or proc.poll() is not None:
                    raise
                time.sleep(0.2)
        saved = call(
            port, "POST", "/v1/memories", {"agent_id": "a1", "type": "fact", "content": "ports: 8080 api"}
        )
        # several recalls: with two workers they land on both processes, each must see the write
        for _ in range(6):
            hits = call(port, "POST", "/v1/recall", {"agent_id": "a1", "query": "api ports"})["hits"]
            assert [h["memory"]["id"] for h in hits] == [saved["memory"]["id"]]  # type: ignore[index]
    finally:
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=40)
    assert proc.returncode == 0, out.decode(errors="replace")[-2000:]
