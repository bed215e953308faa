"""Serving layer, interleaved: gunicorn, granian's WSGI interface and registry/rsgi.py.

All serve the same application (``registry.wsgi``'s) with the same settings, database and
Redis, each on its own port, with 2 workers and 4 threads per worker: gunicorn as
gunicorn.conf.py runs it (``registry.serving.BufferedThreadWorker``, ``SO_REUSEPORT``);
``granian --interface wsgi --blocking-threads 4`` (HTTP parsed in Rust, the application
called on granian's blocking threads); and the Dockerfile's command, ``granian --interface
rsgi registry.rsgi:application`` (HTTP parsed in Rust, each request read in full on the event
loop, then run on a pool thread). For each round and each path, each server in turn
(the order alternating between rounds) gets a wrk warm-up and a recorded run; the medians of
req/s and of server CPU per request (utime+stime of the process tree, /proc) are printed.
First, on each server, tests/test_serving.py's slow-client check: ``--slow-clients`` sockets
send half a header block (then, separately, a header block and half of its body) and stop;
the server passes when fresh requests are still answered.

    .venv/bin/python bench/serving_compare.py \\
        --database-url postgres://postgres@127.0.0.1:5432/registry_h1_ours --rounds 3
"""

from __future__ import annotations

import argparse
import os
import random
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.peer_compare import (  # noqa: E402
    PYTHON,
    measure,
    ours_agents,
    ours_command,
    stop,
    wait_up,
)

# granian-asgi (registry.asgi, with the psycopg pool) and granian-rsgi-asyncio (the Dockerfile's
# command on asyncio's own event loop instead of uvloop) can be asked for too. A server name
# ending in "@base" serves that variant from --base-dir (another checkout, e.g. a worktree of
# the commit before a change) so both codes are measured in one interleaved run.
SERVERS = ("gunicorn", "granian-wsgi", "granian-rsgi")


def command(server: str, port: int, workers: int, threads: int) -> list[str]:
    server = server.removesuffix("@base")
    if server in ("gunicorn", "granian-rsgi"):  # as served (gunicorn.conf.py, the Dockerfile)
        return ours_command("gunicorn" if server == "gunicorn" else "granian", port, workers)
    if server == "granian-rsgi-asyncio":
        return [*ours_command("granian", port, workers), "--loop", "asyncio"]
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
        "REGISTRY_WEB_THREADS": str(args.server_threads),
        "REGISTRY_ANON_RATE": args.anon_rate,
        "REGISTRY_LOG_LEVEL": "WARNING",
    }
    if server == "granian-asgi":  # Django runs each request in a fresh thread: pool connections
        env["REGISTRY_DB_POOL"] = "true"
    process = subprocess.Popen(
        command(server, port, args.workers, args.server_threads),
        cwd=args.base_dir if server.endswith("@base") else ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wait_up(f"http://127.0.0.1:{port}/healthz", process, server)
    return process


FRESH = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
HALF_HEADER = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: slo"
HALF_BODY = (
    b"POST /api/v1/validate HTTP/1.1\r\nHost: 127.0.0.1\r\n"
    b'Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"card":'
)


def fresh_answers(port: int, tries: int = 4, timeout: float = 2.0) -> int:
    """How many fresh ``GET /healthz`` are answered 200 within ``timeout`` each."""
    answered = 0
    for _ in range(tries):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
                sock.sendall(FRESH)
                answered += sock.recv(16).startswith(b"HTTP/1.1 200")
        except OSError:
            pass
    return answered


def slow_client_check(port: int, start_of_request: bytes, clients: int) -> int:
    """tests/test_serving.py's check: ``clients`` sockets send the start of a request and stop;
    how many of 4 fresh requests are still answered within 2 s."""
    slow = []
    try:
        for _ in range(clients):
            sock = socket.create_connection(("127.0.0.1", port), timeout=5)
            sock.sendall(start_of_request)
            slow.append(sock)
        time.sleep(0.5)
        return fresh_answers(port)
    finally:
        for sock in slow:
            sock.close()


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
    parser.add_argument("--base-dir", type=Path, help="the checkout that serves NAME@base")
    parser.add_argument(
        "--slow-clients",
        type=int,
        default=24,
        help="sockets for the slow-client check (half a header block; half a body), 0: skip",
    )
    args = parser.parse_args()
    args.threads = 1  # wrk's threads (bench.peer_compare.measure)
    servers = [s for s in args.servers.split(",") if s]
    if any(s.endswith("@base") for s in servers) and args.base_dir is None:
        raise SystemExit("a server NAME@base needs --base-dir")
    agents = ours_agents(args.database_url)
    if not agents:
        raise SystemExit("no synthetic agents: seed with bench/seed.py first")
    ids = [str(a[0]) for a in random.Random(7).sample(agents, min(1000, len(agents)))]
    queries = {"floor": ["/healthz"], "by-id": [f"/api/v1/agents/{i}" for i in ids]}
    ports = {server: args.base_port + k for k, server in enumerate(servers)}
    running: dict[str, subprocess.Popen[bytes]] = {}
    results: dict[tuple[str, str], list[dict[str, Any]]] = {}
    try:
        for server in servers:  # inside the try: a server that fails to start stops the others
            running[server] = start(args, server, ports[server])
        for server in servers if args.slow_clients else []:
            for what, start_of_request in (("header", HALF_HEADER), ("body", HALF_BODY)):
                fresh = slow_client_check(ports[server], start_of_request, args.slow_clients)
                print(
                    f"{server}: {args.slow_clients} clients stopped in the {what}: "
                    f"{fresh} of 4 fresh /healthz answered within 2 s",
                    flush=True,
                )
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
