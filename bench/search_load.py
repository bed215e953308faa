"""Search latency under load: gunicorn on loopback, C client processes, p50/p99/rps per query kind.

    .venv/bin/python bench/search_load.py \
        --database-url postgres://postgres@127.0.0.1:5432/registry_bench_100k \
        --clients 8 --duration 15 --runs 3

Seed the database first (bench/seed.py). The server is gunicorn (sync workers, one per core,
by default) with DEBUG off, bound to 127.0.0.1 on a free port, serving
``bench.wsgi_timing:application`` (the registry's WSGI app plus X-Bench-* timing headers). Each
client is a separate process (no shared GIL with the others) with one ``http.client``
connection, kept alive where the worker class allows it (gthread; sync workers close after each
response and the client reconnects); clients run closed-loop (next request when the previous
answer is read). Each query kind runs alone for ``--duration`` seconds (bounded also by
``--max-requests`` per client), once per run; the report gives the median over runs.

Every response must be 200 with a JSON ``results`` list, and for tag queries every returned
agent must carry the tag(s); otherwise the script exits non-zero.
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing
import os
import random
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import synth  # noqa: E402
from bench._common import (  # noqa: E402
    DEFAULT_DATABASE_URL,
    ROOT,
    CpuTracker,
    bench_env,
    check_loopback,
    children_of,
    machine_cpu_seconds,
    machine_summary,
    median,
    percentile,
    wait_quiet,
)

HOST = "127.0.0.1"
KINDS = ("tag", "tag2", "input_schema", "output_png", "text")
DESCRIPTIONS = {
    "tag": "?tag=X, X uniform over the ~280-word tag vocabulary",
    "tag2": "?tag=X&tag=Y, two uniform vocabulary tags (all must match)",
    "input_schema": "?input_mode=application/json;schema=S, S uniform over 3,000 schema names",
    "output_png": "?output_mode=image/png",
    "text": "?q=W, W uniform over ~300 tag and description words",
}


def make_query(kind: str, rng: random.Random) -> tuple[str, list[str]]:
    """(path with query, tags every result must carry)."""
    if kind == "tag":
        tag = rng.choice(synth.TAGS)
        return "/api/v1/agents?" + urlencode({"tag": tag}), [tag]
    if kind == "tag2":
        a, b = rng.sample(synth.TAGS, 2)
        return "/api/v1/agents?" + urlencode([("tag", a), ("tag", b)]), [a, b]
    if kind == "input_schema":
        mode = "application/json;schema=" + rng.choice(synth.SCHEMAS)
        return "/api/v1/agents?" + urlencode({"input_mode": mode}), []
    if kind == "output_png":
        return "/api/v1/agents?" + urlencode({"output_mode": "image/png"}), []
    if kind == "text":
        return "/api/v1/agents?" + urlencode({"q": rng.choice(synth.QUERY_WORDS)}), []
    raise ValueError(kind)


# --- client process --------------------------------------------------------------------------


def client(
    port: int, kind: str, seed: int, start_at: float, stop_at: float, max_requests: int, out: Any
) -> None:
    rng = random.Random(seed)
    conn = http.client.HTTPConnection(HOST, port, timeout=30)
    samples: list[tuple[float, float, float, int]] = []  # latency, app ms, db ms, n results
    errors: list[str] = []
    wrong = 0
    while time.time() < start_at:
        time.sleep(0.001)
    while len(samples) + len(errors) < max_requests and time.time() < stop_at:
        path, must_tags = make_query(kind, rng)
        t0 = time.perf_counter()
        try:
            conn.request("GET", path, headers={"Accept": "application/json"})
            response = conn.getresponse()
            body = response.read()
        except (OSError, http.client.HTTPException) as exc:
            errors.append(f"{type(exc).__name__}: {exc}")
            conn.close()
            continue
        latency = (time.perf_counter() - t0) * 1000
        if response.status != 200:
            errors.append(f"HTTP {response.status} for {path}: {body[:200]!r}")
            continue
        try:
            results = json.loads(body)["results"]
        except (ValueError, KeyError, TypeError):
            errors.append(f"not a results page for {path}: {body[:200]!r}")
            continue
        for agent in results:
            tags = {t.lower() for skill in agent.get("skills", []) for t in skill.get("tags", [])}
            if any(tag not in tags for tag in must_tags):
                wrong += 1
        samples.append(
            (
                latency,
                float(response.getheader("X-Bench-App-Ms", "nan")),
                float(response.getheader("X-Bench-Db-Ms", "nan")),
                len(results),
            )
        )
    conn.close()
    cpu = os.times()
    out.send((samples, errors[:20], len(errors), wrong, cpu.user + cpu.system))
    out.close()


def run_kind(
    port: int,
    kind: str,
    clients: int,
    duration: float,
    max_requests: int,
    seed: int,
    own_pids: Callable[[], list[int]] = list,
) -> dict[str, Any]:
    """One kind, ``clients`` closed-loop clients, ``duration`` seconds.

    Also accounts for CPU: what the machine used in the window minus what the server, its
    PostgreSQL backends and the clients used is ``other_cores`` -- load from elsewhere.
    """
    ctx = multiprocessing.get_context("fork")
    tracker = CpuTracker(own_pids).__enter__()
    busy0, _ = machine_cpu_seconds()
    start_at = time.time() + 0.5
    stop_at = start_at + duration
    pipes, procs = [], []
    for c in range(clients):
        receiver, sender = ctx.Pipe(duplex=False)
        proc = ctx.Process(
            target=client,
            args=(port, kind, seed * 100 + c, start_at, stop_at, max_requests, sender),
        )
        proc.start()
        sender.close()
        pipes.append(receiver)
        procs.append(proc)
    samples: list[tuple[float, float, float, int]] = []
    errors: list[str] = []
    n_errors = wrong = 0
    client_cpu = 0.0
    for receiver, proc in zip(pipes, procs, strict=True):
        if receiver.poll(duration + 60):
            s, e, ne, w, c = receiver.recv()
            samples += s
            errors += e
            n_errors += ne
            wrong += w
            client_cpu += c
        else:
            errors.append("a client did not report")
            n_errors += 1
        proc.join(10)
        if proc.is_alive():
            proc.kill()
    window = time.time() - start_at + 0.5
    busy1, _ = machine_cpu_seconds()
    tracker.__exit__()
    own = tracker.seconds
    elapsed = time.time() - start_at
    elapsed = min(elapsed, duration) if samples else duration
    latencies = [s[0] for s in samples]
    machine = (busy1 - busy0) / window
    other = max(0.0, (busy1 - busy0) - own - client_cpu) / window
    return {
        "kind": kind,
        "clients": clients,
        "requests": len(samples),
        "errors": n_errors,
        "error_examples": errors[:5],
        "wrong_results": wrong,
        "rps": len(samples) / elapsed,
        "p50": percentile(latencies, 50),
        "p90": percentile(latencies, 90),
        "p99": percentile(latencies, 99),
        "server_p50": percentile([s[1] for s in samples], 50),
        "server_p99": percentile([s[1] for s in samples], 99),
        "db_p50": percentile([s[2] for s in samples], 50),
        "db_p99": percentile([s[2] for s in samples], 99),
        "nonempty": sum(1 for s in samples if s[3] > 0) / max(1, len(samples)),
        "full_page": sum(1 for s in samples if s[3] >= 20) / max(1, len(samples)),
        "machine_cores": machine,
        "server_cores": own / window,
        "client_cores": client_cpu / window,
        "other_cores": other,
    }


# --- server ----------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


def start_server(args: argparse.Namespace, port: int) -> subprocess.Popen[bytes]:
    gunicorn = str(Path(sys.executable).with_name("gunicorn"))
    command = [
        gunicorn,
        "--chdir",
        str(ROOT),
        "--bind",
        f"{HOST}:{port}",
        "--workers",
        str(args.workers),
        "--worker-class",
        args.worker_class,
        "--log-level",
        "warning",
        "--backlog",
        "256",
        "--timeout",
        "60",
        "bench.wsgi_timing:application",
    ]
    if args.worker_class == "gthread":
        command[command.index("--log-level") : command.index("--log-level")] = [
            "--threads",
            str(args.threads),
            "--keep-alive",
            "30",
        ]
    print("server:", " ".join(command[1:]), flush=True)
    env = bench_env(
        args.database_url,
        PYTHONWARNINGS="ignore:No directory at",
        BENCH_PROPOSAL_GC_FREEZE=str(args.proposal_gc_freeze),
    )
    return subprocess.Popen(command, env=env, cwd=ROOT, start_new_session=True)


def wait_ready(port: int, server: subprocess.Popen[bytes], timeout: float = 60) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"gunicorn exited with {server.returncode}")
        try:
            conn = http.client.HTTPConnection(HOST, port, timeout=5)
            conn.request("GET", "/api/v1/agents?limit=1")
            response = conn.getresponse()
            body = response.read()
            conn.close()
            if response.status == 200:
                if not json.loads(body)["results"]:
                    raise SystemExit("the database has no agents: run bench/seed.py first")
                return
        except OSError:
            pass
        time.sleep(0.3)
    raise SystemExit("gunicorn did not become ready")


def stop_server(server: subprocess.Popen[bytes]) -> None:
    if server.poll() is None:
        server.send_signal(signal.SIGTERM)  # the master stops its own workers
        try:
            server.wait(20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(5)


# --- report ----------------------------------------------------------------------------------


def table(rows: list[dict[str, Any]], runs: int) -> str:
    lines = [
        "| query kind | p50 ms | p99 ms | req/s | server p50 ms | SQL p50 ms | SQL p99 ms "
        "| non-empty | full page | other load (cores) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for kind in KINDS:
        mine = [r for r in rows if r["kind"] == kind]
        if not mine:
            continue

        def med(key: str, rows: list[dict[str, Any]] = mine) -> float:
            return median([r[key] for r in rows])

        lines.append(
            f"| {kind} | {med('p50'):.1f} | {med('p99'):.1f} | {med('rps'):.0f} "
            f"| {med('server_p50'):.1f} | {med('db_p50'):.2f} | {med('db_p99'):.2f} "
            f"| {med('nonempty'):.0%} | {med('full_page'):.0%} | {med('other_cores'):.2f} |"
        )
    return "\n".join(lines) + (
        f"\n\n(median of {runs} run(s) of each configuration; 'other load' is CPU used during "
        "the window by processes that are neither the server, its PostgreSQL backends nor the "
        "clients)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database-url", default=DEFAULT_DATABASE_URL)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--duration", type=float, default=15.0, help="seconds per kind per run")
    parser.add_argument("--max-requests", type=int, default=200_000, help="per client per kind")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--kinds", default=",".join(KINDS))
    parser.add_argument(
        "--workers",
        type=int,
        default=os.cpu_count() or 2,
        help="gunicorn worker processes (default: one per core, the best tail latency measured "
        "on 2 cores; see docs/benchmarks.md)",
    )
    parser.add_argument("--worker-class", default="sync", choices=("gthread", "sync"))
    parser.add_argument("--threads", type=int, default=2, help="threads per gthread worker")
    parser.add_argument("--warmup", type=float, default=3.0, help="seconds of warm-up per kind")
    parser.add_argument("--json", help="write every run's numbers here")
    parser.add_argument("--port", type=int, default=0, help="loopback port (default: a free one)")
    parser.add_argument(
        "--quiet-wait",
        type=float,
        default=60.0,
        help="before each measurement, wait up to this long for other load to drop "
        "under --quiet-cores (the machine may be shared)",
    )
    parser.add_argument("--quiet-cores", type=float, default=0.3)
    parser.add_argument(
        "--proposal-gc-freeze",
        type=int,
        default=0,
        metavar="N",
        help="measure a proposed change: each worker freezes the GC after N requests "
        "(see bench/wsgi_timing.py); not the registry as shipped",
    )
    args = parser.parse_args()
    check_loopback(args.database_url)
    kinds = [k for k in args.kinds.split(",") if k]
    unknown = set(kinds) - set(KINDS)
    if unknown:
        raise SystemExit(f"unknown kinds: {sorted(unknown)}")
    total = len(kinds) * (args.runs * args.duration + args.warmup)
    if total > 600:
        raise SystemExit(f"this would run {total:.0f}s; keep a run under 10 minutes")

    import psycopg

    port = args.port or free_port()
    server = start_server(args, port)
    rows: list[dict[str, Any]] = []
    failed = False
    watcher = [psycopg.connect(args.database_url, autocommit=True)]

    def own_pids() -> list[int]:
        pids = [server.pid, *children_of(server.pid)]
        try:
            if watcher[0].closed:  # PostgreSQL restarted under us: the run reports errors
                watcher[0] = psycopg.connect(args.database_url, autocommit=True)
            backends = (
                watcher[0]
                .execute(
                    "SELECT pid FROM pg_stat_activity "
                    "WHERE datname = current_database() AND pid <> pg_backend_pid()"
                )
                .fetchall()
            )
        except psycopg.Error:
            return pids
        return pids + [pid for (pid,) in backends]

    try:
        wait_ready(port, server)
        for kind in kinds:  # warm every worker's connection and PostgreSQL's cache
            run_kind(port, kind, args.clients, args.warmup, args.max_requests, seed=999)
        for run in range(1, args.runs + 1):
            for kind in kinds:
                if args.quiet_wait > 0:
                    wait_quiet(args.quiet_cores, args.quiet_wait)
                row = run_kind(
                    port,
                    kind,
                    args.clients,
                    args.duration,
                    args.max_requests,
                    seed=run * 1000 + KINDS.index(kind),
                    own_pids=own_pids,
                )
                row["run"] = run
                rows.append(row)
                print(
                    f"run {run} {kind:12} n={row['requests']:6d} rps={row['rps']:7.1f} "
                    f"p50={row['p50']:7.2f} p90={row['p90']:7.2f} p99={row['p99']:7.2f} ms "
                    f"server_p50={row['server_p50']:6.2f} server_p99={row['server_p99']:6.2f} "
                    f"sql_p50={row['db_p50']:6.2f} "
                    f"sql_p99={row['db_p99']:6.2f} nonempty={row['nonempty']:.0%} "
                    f"errors={row['errors']} wrong={row['wrong_results']} "
                    f"cores: server+db={row['server_cores']:.2f} "
                    f"clients={row['client_cores']:.2f} other={row['other_cores']:.2f}",
                    flush=True,
                )
                if row["errors"] or row["wrong_results"] or row["requests"] == 0:
                    failed = True
                    print("  FAILED:", row["error_examples"], flush=True)
                if kind != "tag2" and row["nonempty"] == 0:
                    failed = True
                    print(f"  FAILED: every {kind} answer was empty", flush=True)
    finally:
        stop_server(server)
        watcher[0].close()

    print()
    print(
        f"clients={args.clients} server=gunicorn {args.worker_class} workers={args.workers}"
        + (f" threads={args.threads}" if args.worker_class == "gthread" else "")
        + f" duration={args.duration}s runs={args.runs} machine={machine_summary()}"
        + (f" PROPOSAL gc-freeze={args.proposal_gc_freeze}" if args.proposal_gc_freeze else "")
    )
    print(table(rows, args.runs))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(
                {"args": vars(args), "machine": machine_summary(), "rows": rows}, fh, indent=1
            )
    if failed:
        raise SystemExit(1)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
