"""Serving layer, interleaved: gunicorn (gunicorn.conf.py) against granian's WSGI interface.

Both serve the same application (``registry.wsgi``) with the same settings, database and Redis,
each on its own port, with 2 workers and 4 threads per worker: gunicorn as docs/benchmarks.md
"Serving" describes it (``registry.serving.BufferedThreadWorker``, ``SO_REUSEPORT``), granian
as ``granian --interface wsgi --workers 2 --blocking-threads 4`` (HTTP parsed in Rust, the
application called on blocking threads). For each round and each path, each server in turn
(the order alternating between rounds) gets a wrk warm-up and a recorded run; the medians of
req/s and of server CPU per request (utime+stime of the process tree, /proc) are printed.

    .venv/bin/python bench/serving_compare.py \\
        --database-url postgres://postgres@127.0.0.1:5432/registry_h1_ours --rounds 3
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.peer_compare import PYTHON, measure, ours_agents, stop, wait_up  # noqa: E402

SERVERS = ("gunicorn", "granian")  # and "granian-asgi": registry.asgi, the psycopg pool on


def command(server: str, port: int, workers: int, threads: int) -> list[str]:
    if server == "gunicorn":
        return [str(PYTHON.parent / "gunicorn"), "-c", "gunicorn.conf.py", "registry.wsgi"]
    asgi = server == "granian-asgi"
    return [
        str(PYTHON.parent / "granian"),
        "--interface", "asgi" if asgi else "wsgi",
        "--host", "127.0.0.1",
        "--port", str(port),
        "--workers", str(workers),
        *([] if asgi else ["--blocking-threads", str(threads)]),
        "--no-ws",
        "--log-level", "warning",
        "registry.asgi:application" if asgi else "registry.wsgi:application",
    ]  # fmt: skip


def start(args: argparse.Namespace, server: str, port: int) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "DATABASE_URL": args.database_url,
        "REDIS_URL": args.redis_url,
        "DJANGO_SECRET_KEY": "bench-only-secret-not-for-production",
        "DJANGO_DEBUG": "false",
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "GUNICORN_BIND": f"127.0.0.1:{port}",
        "GUNICORN_WORKERS": str(args.workers),
        "GUNICORN_THREADS": str(args.server_threads),
        "REGISTRY_ANON_RATE": args.anon_rate,
        "REGISTRY_LOG_LEVEL": "WARNING",
    }
    if server == "granian-asgi":  # Django runs each request in a fresh thread: pool connections
        env["REGISTRY_DB_POOL"] = "true"
    process = subprocess.Popen(
        command(server, port, args.workers, args.server_threads),
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wait_up(f"http://127.0.0.1:{port}/healthz", process, server)
    return process


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/9")
    parser.add_argument("--anon-rate", default="100000000/minute")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--server-threads", type=int, default=4, help="threads per worker")
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--duration", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--servers", default=",".join(SERVERS))
    parser.add_argument("--base-port", type=int, default=8391)
    args = parser.parse_args()
    args.threads = 1  # wrk's threads (bench.peer_compare.measure)
    servers = [s for s in args.servers.split(",") if s]
    agents = ours_agents(args.database_url)
    if not agents:
        raise SystemExit("no synthetic agents: seed with bench/seed.py first")
    ids = [str(a[0]) for a in random.Random(7).sample(agents, min(1000, len(agents)))]
    queries = {"floor": ["/healthz"], "by-id": [f"/api/v1/agents/{i}" for i in ids]}
    ports = {server: args.base_port + k for k, server in enumerate(servers)}
    running = {server: start(args, server, ports[server]) for server in servers}
    results: dict[tuple[str, str], list[dict[str, Any]]] = {}
    try:
        for number in range(args.rounds):
            for name, paths in queries.items():
                order = servers if number % 2 == 0 else servers[::-1]
                for server in order:
                    row = measure(args, ports[server], running[server], paths)
                    results.setdefault((name, server), []).append(row)
                    print(
                        f"round {number + 1} {name:6s} {server:9s} {row['rps']:8.0f} req/s "
                        f"p50 {row['p50']:6.2f} p99 {row['p99']:7.2f} ms "
                        f"cpu {row['cpu_ms']:.3f} ms/req non2xx {row['non2xx']} "
                        f"errors {row['socket_errors'] or '-'} (load {row['load']:.1f})",
                        flush=True,
                    )
    finally:
        for process in running.values():
            stop(process)
    print()
    print("| query | server | req/s (median) | CPU ms/req (median) | p50 / p99 ms (median) |")
    print("|---|---|---:|---:|---:|")
    for (name, server), rows in results.items():
        rps = statistics.median(r["rps"] for r in rows)
        cpu = statistics.median(r["cpu_ms"] for r in rows)
        p50 = statistics.median(r["p50"] for r in rows)
        p99 = statistics.median(r["p99"] for r in rows)
        print(f"| {name} | {server} | {rps:,.0f} | {cpu:.3f} | {p50:.1f} / {p99:.1f} |")


if __name__ == "__main__":
    main()
