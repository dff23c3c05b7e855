"""Load benchmark of the running local server over loopback, driven by wrk.

    .venv/bin/python scripts/bench_server.py [--size 10000] [--models e5 use] [--connections 8]

For each model: a data dir with ``--size`` memories in one scope (built like scripts/bench_core.py:
real embeddings of a pool of texts, each memory a pool vector plus small noise, distinct texts),
an API key, then ``memvault serve`` (waitress, 8 threads) in its own process, and wrk (one thread,
``--connections`` connections, ``--duration`` seconds) posting recalls with the key:

* ``repeated``: 200 distinct realistic queries cycled (after the first pass every query embedding
  comes from the server's LRU cache: an agent fleet asking recurring questions);
* ``unique``: every request a query the server has not seen (each pays a real query embedding).

wrk's Lua ``done`` hook reports p50/p90/p95/p99 latency and the non-2xx count. Results go to
``bench/results/server_load.{md,json}``. The machine is shared and noisy: both workloads and both
models run in one invocation so they are compared under the same conditions.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_core
from memvault.adapters.local.keys import SqliteKeyStore, load_pepper
from memvault.adapters.local.sqlite_db import SqliteDatabase
from memvault.bootstrap import build_services
from memvault.config import Settings

ROOT = Path(__file__).resolve().parents[1]
TARGETS = {"recall_per_s": 300.0, "p95_ms": 50.0}

LUA = r"""
local bodies = {}
local i = 0
local file = io.open(os.getenv("MEMVAULT_BODIES"), "r")
for line in file:lines() do bodies[#bodies + 1] = line end
file:close()
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer " .. os.getenv("MEMVAULT_KEY")
request = function()
  i = i + 1
  return wrk.format(nil, "/v1/recall", nil, bodies[((i - 1) % #bodies) + 1])
end
done = function(summary, latency, requests)
  local out = string.format(
    '{"requests": %d, "duration_us": %d, "errors_status": %d, "errors_socket": %d, ' ..
    '"p50_us": %d, "p90_us": %d, "p95_us": %d, "p99_us": %d, "max_us": %d, "mean_us": %.1f}',
    summary.requests, summary.duration, summary.errors.status,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(95), latency:percentile(99),
    latency.max, latency.mean)
  io.stderr:write("WRKJSON " .. out .. "\n")
end
"""


def ensure_wrk() -> str:
    path = shutil.which("wrk")
    if path:
        return path
    print("wrk not found: installing Debian's package (apt-get install wrk)")
    subprocess.run(["apt-get", "update", "-qq"], check=False)
    subprocess.run(["apt-get", "install", "-y", "-qq", "wrk"], check=True)
    found = shutil.which("wrk")
    if not found:
        raise SystemExit("wrk is required: apt-get install wrk")
    return found


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def build_data(model: str, size: int, data_dir: Path, cache: Path) -> tuple[str, dict[str, Any]]:
    settings = Settings(embedder=model, data_dir=data_dir)  # type: ignore[arg-type]
    svc = build_services(settings)
    gen = bench_core.TextGenerator(seed=7)
    pool = bench_core.build_pool(svc.embedder, gen, min(1500, size), cache, log=print)
    stats = bench_core.load_corpus(svc, bench_core.SCOPE, size, pool, gen, seed=11, log=print)
    keys = SqliteKeyStore(SqliteDatabase(settings.database_path), load_pepper(data_dir / "pepper"))
    key, _ = keys.create(bench_core.SCOPE.tenant_id, roles=["read", "write"], now=datetime.now(UTC))
    return key, stats.summary()


def bodies(n: int, seed: int) -> list[str]:
    import random

    queries = bench_core._distinct(bench_core.QUERIES, n, random.Random(seed))
    scope = bench_core.SCOPE
    return [
        json.dumps({"agent_id": scope.agent_id, "user_id": scope.user_id, "query": q}, ensure_ascii=False)
        for q in queries
    ]


def start_server(
    model: str, data_dir: Path, port: int, threads: int, workers: int
) -> subprocess.Popen[bytes]:
    env = {**os.environ, "MEMVAULT_EMBEDDER": model}
    proc = subprocess.Popen(
        [
            str(ROOT / ".venv" / "bin" / "memvault"),
            "--data-dir",
            str(data_dir),
            "serve",
            "--port",
            str(port),
            "--threads",
            str(threads),
            "--workers",
            str(workers),
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/health", timeout=2) as r:
                if r.status == 200:
                    return proc
        except OSError:
            time.sleep(0.3)
    proc.kill()
    raise SystemExit("server did not start")


def run_wrk(
    wrk: str, port: int, key: str, body_file: Path, lua: Path, connections: int, duration: int
) -> dict[str, Any]:
    env = {**os.environ, "MEMVAULT_KEY": key, "MEMVAULT_BODIES": str(body_file)}
    proc = subprocess.run(
        [
            wrk,
            "-t1",
            f"-c{connections}",
            f"-d{duration}s",
            "--timeout",
            "10s",
            "-s",
            str(lua),
            f"http://127.0.0.1:{port}",
        ],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    line = next(x for x in proc.stderr.splitlines() if x.startswith("WRKJSON "))
    data: dict[str, Any] = json.loads(line[len("WRKJSON ") :])
    seconds = data["duration_us"] / 1e6
    return {
        "requests": data["requests"],
        "seconds": round(seconds, 2),
        "recall_per_s": round(data["requests"] / seconds, 1),
        "p50_ms": data["p50_us"] / 1000,
        "p90_ms": data["p90_us"] / 1000,
        "p95_ms": data["p95_us"] / 1000,
        "p99_ms": data["p99_us"] / 1000,
        "max_ms": data["max_us"] / 1000,
        "non_2xx": data["errors_status"],
        "socket_errors": data["errors_socket"],
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", type=int, default=10_000)
    ap.add_argument("--models", nargs="+", default=["e5", "use"])
    ap.add_argument("--connections", type=int, default=8)
    ap.add_argument("--duration", type=int, default=20)
    ap.add_argument("--threads", type=int, default=8, help="server threads per process")
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2], help="server processes to compare")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results")
    args = ap.parse_args(argv)
    wrk = ensure_wrk()
    cache = Path(tempfile.gettempdir()) / "memvault-bench-cache"
    results = []
    with tempfile.TemporaryDirectory(prefix="memvault-load-") as tmp:
        work = Path(tmp)
        lua = work / "recall.lua"
        lua.write_text(LUA)
        repeated = work / "repeated.jsonl"
        repeated.write_text("\n".join(bodies(200, seed=3)) + "\n")
        unique = work / "unique.jsonl"
        unique.write_text("\n".join(bodies(20_000, seed=5)) + "\n")
        for model in args.models:
            data_dir = work / f"data-{model}"
            print(f"[{model}] building {args.size} memories")
            key, corpus = build_data(model, args.size, data_dir, cache)
            for workers in args.workers:
                port = free_port()
                server = start_server(model, data_dir, port, args.threads, workers)
                try:
                    # warm-up: load each process's matrix and model, fill the caches with the repeated set
                    run_wrk(wrk, port, key, repeated, lua, 2 * workers, 3)
                    for workload, body_file in (("repeated", repeated), ("unique", unique)):
                        r = run_wrk(wrk, port, key, body_file, lua, args.connections, args.duration)
                        r.update(
                            model=model,
                            workload=workload,
                            size=args.size,
                            connections=args.connections,
                            workers=workers,
                        )
                        print(
                            f"[{model} x{workers}] {workload}: {r['recall_per_s']} recalls/s,"
                            f" p95 {r['p95_ms']:.1f} ms, non-2xx {r['non_2xx']}"
                        )
                        results.append(r)
                finally:
                    server.send_signal(signal.SIGTERM)
                    server.wait(timeout=30)
            results[-1]["corpus"] = corpus
    report = {
        "generated_at": datetime.now(UTC).isoformat(),
        "command": "python scripts/bench_server.py " + " ".join(argv or sys.argv[1:]),
        "machine": {"cores": os.cpu_count(), "python": sys.version.split()[0]},
        "setup": f"memvault serve ({args.threads} threads per process; 1 process: waitress, more: gunicorn)"
        f" and wrk (1 thread, {args.connections}"
        f" connections, {args.duration} s per workload) on the same 2-core machine, loopback",
        "targets": TARGETS,
        "results": results,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "server_load.json").write_text(json.dumps(report, indent=2, default=str))
    lines = [
        "# Local server under load (recall, loopback)",
        "",
        f"Command: `{report['command']}`. {report['setup']}. {args.size} memories in one scope.",
        "Targets: >= 300 recalls/s and p95 <= 50 ms with 8 concurrent clients.",
        "",
        "| model | processes | workload | recalls/s | p50 ms | p95 ms | p99 ms | non-2xx | target |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        ok = r["recall_per_s"] >= TARGETS["recall_per_s"] and r["p95_ms"] <= TARGETS["p95_ms"]
        lines.append(
            f"| {r['model']} | {r['workers']} | {r['workload']} | {r['recall_per_s']} | {r['p50_ms']:.1f}"
            f" | {r['p95_ms']:.1f} | {r['p99_ms']:.1f} | {r['non_2xx']} | {'PASS' if ok else 'MISS'} |"
        )
    (args.out / "server_load.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
