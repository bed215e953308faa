"""Ingestion throughput: crawl M distinct cards from loopback servers through the real crawler.

    .venv/bin/python bench/ingest.py --cards 2000 --runs 3

One process serves M distinct synthetic cards (bench/synth.py) from ``--origins`` HTTP servers on
127.0.0.1, one port each, so the cards come from many origins as they would in production (the
crawler keeps a per-origin gap, REGISTRY_ORIGIN_MIN_GAP_SECONDS, between crawls of one origin;
agents are queued round-robin over the origins). For each run, M agents pointing at the cards
are created, then crawled through ``cards.crawling.agent_crawl`` (fetch over HTTP, parse,
validate, snapshot, index):

* ``inprocess``: sequentially, in this one process;
* ``celery``: by ONE real worker process (``celery -A registry worker --concurrency=1``) on
  Redis, every task enqueued with ``cards.tasks.crawl_agent.delay``; the clock runs from the
  first enqueue until no agent is ``pending``.

Reports cards/s per mode (median of runs), the mean fetch and process times the crawler
recorded, tasks the worker deferred for politeness, and CPU used by other processes during the
run (the machine may be shared). Every crawl must end ``ok`` with a snapshot, else exit 1.

By default the agents live in a dedicated database (registry_bench_ingest), emptied per run.
With ``--keep-existing`` (e.g. against a seeded 100k database) only the benchmark's own agents
are deleted before and after each run.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import selectors
import signal
import subprocess
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import synth  # noqa: E402
from bench._common import (  # noqa: E402
    ROOT,
    CpuTracker,
    bench_env,
    check_loopback,
    children_of,
    ensure_database,
    machine_cpu_seconds,
    machine_summary,
    median,
    setup_django,
    wait_quiet,
)

HOST = "127.0.0.1"
DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/registry_bench_ingest"
# Redis db 15 is the test suite's (flushed by it); other checkouts were seen using 14.
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/9"
FETCH_ENV = {
    "REGISTRY_FETCH_ALLOW_HTTP": "true",
    "REGISTRY_FETCH_ALLOWED_NETWORKS": "127.0.0.0/8",
}
SERVER_LIFETIME = 1800  # seconds: the card server stops by itself after this
MARK = f"/bench-ingest-{os.getpid()}/"  # in every URL of this run's agents
QUEUE = f"bench-ingest-{os.getpid()}"  # a Celery queue no other worker listens to


# --- the card servers (one process, one selector loop, many ports) ---------------------------


def serve_cards(seed: int, count: int, origins: int, mark: str, conn: Any) -> None:
    bodies = {f"{mark}cards/{i}/agent-card.json": synth.card_bytes(seed, i) for i in range(count)}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            body = bodies.get(self.path)
            status = 200 if body is not None else 404
            body = body if body is not None else b'{"error": "not found"}'
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            return

    servers = []
    selector = selectors.DefaultSelector()
    for _ in range(origins):
        httpd = ThreadingHTTPServer((HOST, 0), Handler)
        httpd.daemon_threads = True
        selector.register(httpd.socket, selectors.EVENT_READ, httpd)
        servers.append(httpd)
    conn.send([httpd.server_address[1] for httpd in servers])
    deadline = time.monotonic() + SERVER_LIFETIME
    while time.monotonic() < deadline and not conn.poll(0):
        for key, _ in selector.select(timeout=0.2):
            key.data._handle_request_noblock()  # accept, then a thread per request
    for httpd in servers:
        httpd.server_close()


# --- agents --------------------------------------------------------------------------------


def card_url(ports: list[int], index: int) -> str:
    return f"http://{HOST}:{ports[index % len(ports)]}{MARK}cards/{index}/agent-card.json"


def delete_own_agents(truncate: bool) -> None:
    from django.db import connection

    from cards.models import Agent

    if truncate:
        with connection.cursor() as cur:
            cur.execute("TRUNCATE cards_agent, cards_snapshot RESTART IDENTITY CASCADE")
        return
    Agent.objects.filter(url__contains=MARK).update(latest_snapshot=None)
    Agent.objects.filter(url__contains=MARK).delete()  # the ORM knows every dependent table


def create_agents(ports: list[int], count: int) -> list[str]:
    """M agents, in round-robin origin order (consecutive ids are on different origins)."""
    from django.utils import timezone

    from cards.models import Agent

    now = timezone.now()
    agents = [
        Agent(
            url=card_url(ports, i), discover=False, card_url=card_url(ports, i), next_crawl_at=now
        )
        for i in range(count)
    ]
    Agent.objects.bulk_create(agents, batch_size=2000)
    return [str(a.pk) for a in agents]


def outcome_summary() -> dict[str, Any]:
    from django.db.models import Avg, Count, Max, Min

    from cards.models import Agent, Mode, SkillTag, Snapshot

    own = Agent.objects.filter(url__contains=MARK)
    stats = own.aggregate(
        n=Count("id"),
        fetch=Avg("fetch_ms"),
        process=Avg("process_ms"),
        first=Min("last_crawled_at"),
        last=Max("last_crawled_at"),
    )
    stats["status"] = dict(own.values_list("status").annotate(c=Count("id")))
    stats["snapshots"] = Snapshot.objects.filter(agent__url__contains=MARK).count()
    stats["tags"] = SkillTag.objects.filter(agent__url__contains=MARK).count()
    stats["modes"] = Mode.objects.filter(agent__url__contains=MARK).count()
    return stats


# --- the two modes ---------------------------------------------------------------------------


def own_pids(server_pid: int, worker: Any) -> list[int]:
    """This benchmark's processes: itself, the card server, the worker, their DB backends."""
    from django.db import connection

    pids = [os.getpid(), server_pid]
    if worker is not None and worker.poll() is None:
        pids += [worker.pid, *children_of(worker.pid)]
    with connection.cursor() as cur:
        cur.execute(
            "SELECT pid FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        pids += [pid for (pid,) in cur.fetchall()]
    return pids


def run_inprocess(ids: list[str], timeout: float) -> tuple[float, dict[str, int]]:
    try:
        from cards.crawling import agent_crawl
    except ImportError:  # before the crawl code moved out of services
        from cards.services import agent_crawl  # type: ignore[attr-defined,no-redef]

    outcomes: dict[str, int] = {}
    started = time.perf_counter()
    deadline = started + timeout
    for agent_id in ids:
        outcome = agent_crawl(agent_id=agent_id)
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
        if time.perf_counter() > deadline:
            print("  in-process run hit its time limit", flush=True)
            break
    return time.perf_counter() - started, outcomes


def worker_name() -> str:
    return f"bench-ingest-{os.getpid()}"


def start_worker(args: argparse.Namespace, log: Path) -> subprocess.Popen[bytes]:
    env = bench_env(
        args.database_url,
        REDIS_URL=args.redis_url,
        CELERY_TASK_ALWAYS_EAGER="false",
        REGISTRY_LOG_LEVEL=args.worker_loglevel,
        PYTHONWARNINGS="ignore:No directory at",
        BENCH_CELERY_QUEUE=QUEUE,
        BENCH_PROPOSAL_DB_REUSE="1" if getattr(args, "proposal_db_reuse", False) else "0",
        **FETCH_ENV,
    )
    celery = str(Path(sys.executable).with_name("celery"))
    # bench.celery_app is registry.celery.app with a private default queue (see that module).
    command = [
        celery,
        "-A",
        "bench.celery_app",
        "worker",
        f"--concurrency={args.concurrency}",
        f"--loglevel={args.worker_loglevel}",
        f"--hostname={worker_name()}@%h",
        "-Q",
        QUEUE,
        *args.worker_arg,
    ]
    return subprocess.Popen(
        command,
        cwd=ROOT,
        env=env,
        stdout=log.open("ab"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def wait_worker(worker: subprocess.Popen[bytes], timeout: float = 60) -> None:
    from registry.celery import app

    deadline = time.time() + timeout
    while time.time() < deadline:
        if worker.poll() is not None:
            raise SystemExit(f"the Celery worker exited with {worker.returncode}")
        replies = app.control.ping(timeout=1.0)
        if any(worker_name() in host for reply in replies for host in reply):
            return
    raise SystemExit("the Celery worker did not answer a ping")


def stop_worker(worker: subprocess.Popen[bytes]) -> None:
    if worker.poll() is None:
        worker.send_signal(signal.SIGTERM)  # warm shutdown of this worker only
        try:
            worker.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(worker.pid, signal.SIGKILL)  # its own session: the worker and its child
            worker.wait(5)


def run_celery(ids: list[str], timeout: float, redis_url: str) -> tuple[float, float]:
    import redis

    from cards.models import Agent
    from cards.tasks import crawl_agent

    # If anything flushes this Redis database meanwhile, queued tasks vanish: detect it.
    client = redis.Redis.from_url(redis_url)
    sentinel = f"{QUEUE}:sentinel"
    client.set(sentinel, "1", ex=int(timeout) + 60)
    started = time.perf_counter()
    for agent_id in ids:
        crawl_agent.delay(agent_id)
    enqueued = time.perf_counter() - started
    deadline = started + timeout
    pending = Agent.objects.filter(url__contains=MARK, status=Agent.Status.PENDING)
    while time.perf_counter() < deadline:
        if not pending.exists():
            break
        if not client.exists(sentinel):
            raise SystemExit(
                f"something flushed the Redis database of {redis_url} during the run (queued "
                "tasks were lost); use --redis-url with a database nobody else uses"
            )
        time.sleep(0.05)
    else:
        print("  Celery run hit its time limit", flush=True)
    client.delete(sentinel)
    return time.perf_counter() - started, enqueued


def count_in_log(log: Path, offset: int, needle: bytes) -> tuple[int, int]:
    with log.open("rb") as fh:
        fh.seek(offset)
        data = fh.read()
    return data.count(needle), offset + len(data)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-m", "--cards", type=int, default=2000)
    parser.add_argument("--origins", type=int, default=250, help="loopback ports serving cards")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--modes", default="inprocess,celery")
    parser.add_argument("--database-url", default=DEFAULT_DATABASE_URL)
    parser.add_argument(
        "--redis-url",
        default=DEFAULT_REDIS_URL,
        help="Redis for the broker (the benchmark uses a queue of its own there)",
    )
    parser.add_argument(
        "--keep-existing",
        action="store_true",
        help="do not empty the database; delete only this benchmark's agents",
    )
    parser.add_argument("--seed", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=240, help="seconds per run, at most")
    parser.add_argument(
        "--quiet-wait",
        type=float,
        default=60.0,
        help="before each run, wait up to this long for other load to drop",
    )
    parser.add_argument("--quiet-cores", type=float, default=0.3)
    parser.add_argument(
        "--concurrency", type=int, default=1, help="the worker's --concurrency (processes)"
    )
    parser.add_argument(
        "--proposal-db-reuse",
        action="store_true",
        help="keep the worker's database connection across tasks (bench/celery_app.py); the "
        "registry does this itself since commit 5b0dc56, so this only changes older checkouts",
    )
    parser.add_argument(
        "--worker-arg", action="append", default=[], help="extra celery worker argument"
    )
    parser.add_argument(
        "--worker-loglevel", default="INFO", help="the worker's log level (`make worker`: INFO)"
    )
    args = parser.parse_args()
    check_loopback(args.database_url)
    check_loopback(args.redis_url)
    modes = [m for m in args.modes.split(",") if m]
    if set(modes) - {"inprocess", "celery"}:
        raise SystemExit("modes are inprocess and celery")

    ensure_database(args.database_url)
    setup_django(
        args.database_url,
        REDIS_URL=args.redis_url,
        CELERY_TASK_ALWAYS_EAGER="false",
        BENCH_CELERY_QUEUE=QUEUE,
        **FETCH_ENV,
    )
    from django.core.management import call_command
    from django.db import connection

    import bench.celery_app  # noqa: F401 - the private queue for .delay() from here

    call_command("migrate", verbosity=0, interactive=False)

    ctx = multiprocessing.get_context("spawn")
    parent, child = ctx.Pipe()
    server = ctx.Process(
        target=serve_cards, args=(args.seed, args.cards, args.origins, MARK, child), daemon=True
    )
    server.start()
    if not parent.poll(120):
        raise SystemExit("the card server did not start")
    ports = parent.recv()
    print(
        f"card server: {args.cards} cards on {len(ports)} origins "
        f"({HOST}:{ports[0]}...{ports[-1]})",
        flush=True,
    )

    log = Path("/tmp") / f"{worker_name()}-worker.log"
    log.write_bytes(b"")
    log_offset = 0
    worker = None
    results: list[dict[str, Any]] = []
    failed = False
    try:
        if "celery" in modes:
            import redis

            redis.Redis.from_url(args.redis_url).delete(QUEUE)  # our own queue, empty
            worker = start_worker(args, log)
            wait_worker(worker)
            print(f"Celery worker ready (log: {log})", flush=True)
        for run in range(1, args.runs + 1):
            for mode in modes:
                delete_own_agents(truncate=not args.keep_existing)
                ids = create_agents(ports, args.cards)
                connection.close()  # the crawl opens its own, as a worker would
                _, log_offset = count_in_log(log, log_offset, b"")
                if args.quiet_wait > 0:
                    wait_quiet(args.quiet_cores, args.quiet_wait)
                tracker = CpuTracker(lambda: own_pids(server.pid, worker)).__enter__()
                busy0, _ = machine_cpu_seconds()
                enqueued = 0.0
                if mode == "inprocess":
                    elapsed, outcomes = run_inprocess(ids, args.timeout)
                else:
                    elapsed, enqueued = run_celery(ids, args.timeout, args.redis_url)
                    outcomes = {}
                busy1, _ = machine_cpu_seconds()
                tracker.__exit__()
                deferred, log_offset = count_in_log(log, log_offset, b"'deferred'")
                stats = outcome_summary()
                span = (stats["last"] - stats["first"]).total_seconds() if stats["last"] else 0
                row = {
                    "run": run,
                    "mode": mode,
                    "cards": args.cards,
                    "seconds": elapsed,
                    "cards_per_s": stats["status"].get("ok", 0) / elapsed,
                    "steady_cards_per_s": (stats["n"] - 1) / span if span else float("nan"),
                    "enqueue_s": enqueued,
                    "fetch_ms": stats["fetch"],
                    "process_ms": stats["process"],
                    "status": stats["status"],
                    "outcomes": outcomes,
                    "deferred": deferred,
                    "snapshots": stats["snapshots"],
                    "tags": stats["tags"],
                    "modes": stats["modes"],
                    "machine_cores": (busy1 - busy0) / elapsed,
                    "own_cores": tracker.seconds / elapsed,
                    "other_cores": max(0.0, busy1 - busy0 - tracker.seconds) / elapsed,
                }
                results.append(row)
                print(
                    f"run {run} {mode:9} {row['cards_per_s']:6.1f} cards/s "
                    f"({elapsed:.1f}s; enqueue {enqueued:.1f}s; "
                    f"mean fetch {row['fetch_ms']:.1f} ms, process {row['process_ms']:.1f} ms; "
                    f"{deferred} deferred; status {row['status']}; {row['snapshots']} snapshots, "
                    f"{row['tags']} tags, {row['modes']} modes; cores: benchmark incl. its "
                    f"PostgreSQL backends {row['own_cores']:.2f}, other {row['other_cores']:.2f})",
                    flush=True,
                )
                if row["status"] != {"ok": args.cards} or row["snapshots"] != args.cards:
                    failed = True
                    print("  FAILED: not every card was stored", flush=True)
        if args.keep_existing:
            delete_own_agents(truncate=False)
    finally:
        if worker is not None:
            stop_worker(worker)
            import redis

            # the queue and the bindings kombu keeps for it (no expiry of their own)
            redis.Redis.from_url(args.redis_url).delete(
                QUEUE, f"_kombu.binding.{QUEUE}", f"_kombu.binding_permanent.{QUEUE}"
            )
        parent.send("stop")
        server.join(10)
        if server.is_alive():
            server.kill()

    print()
    print(
        f"M={args.cards} origins={args.origins} runs={args.runs} "
        f"worker concurrency={args.concurrency} proposal_db_reuse={args.proposal_db_reuse} "
        f"machine={machine_summary()}"
    )
    print(
        "| mode | cards/s (median) | mean fetch ms | mean process ms | deferred "
        "| other load (cores) |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    for mode in modes:
        mine_rows = [r for r in results if r["mode"] == mode]
        print(
            f"| {mode} | {median([r['cards_per_s'] for r in mine_rows]):.1f} "
            f"| {median([r['fetch_ms'] for r in mine_rows]):.1f} "
            f"| {median([r['process_ms'] for r in mine_rows]):.1f} "
            f"| {median([r['deferred'] for r in mine_rows]):.0f} "
            f"| {median([r['other_cores'] for r in mine_rows]):.2f} |"
        )
    if failed:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
