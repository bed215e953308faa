"""Crawl throughput (issue 5): a first crawl and a 304 re-crawl of N distinct cards, real workers.

    .venv/bin/python bench/crawl.py --cards 10000 --runs 2 --concurrency 1,2
    .venv/bin/python bench/crawl.py --profile 300 [--no-cprofile]

One process serves N distinct synthetic cards (bench/synth.py) from ``--origins`` HTTP servers
on 127.0.0.1 (one port each; agents are queued round-robin over them). Every response carries
``ETag`` (the quoted SHA-256 of the body) and ``Last-Modified``; a request whose
``If-None-Match`` matches (or, without one, whose ``If-Modified-Since`` is not older) gets a
``304`` with no body.

For each run and each worker configuration (``celery -A bench.celery_app worker
--concurrency=C``: one prefork worker with C child processes, on a private queue; helpers from
bench/ingest.py), N agents are created and crawled twice through ``cards.tasks.crawl_agent``
(politeness gate, fetch, parse, validate, verify signatures, snapshot, index, attempt row):

1. ``first``: every card is new (200, a snapshot each);
2. ``recrawl``: the same agents again; the server answers 304 (no snapshot; signatures of the
   stored card are verified again).

Before each pass the worker's consumer is cancelled, all N tasks are enqueued, and the clock
starts when the consumer is added back; it stops when every agent's ``last_crawled_at`` is
later than the pass start. So cards/s measures the workers, not the enqueueing (reported
separately). After each pass the outcome is checked: every agent ``ok``, N snapshots (still N
after the re-crawl), N attempts with ``http_status=200`` (first) or ``304`` (re-crawl), and the
server's own count of 200 and 304 responses. Any failed check exits 1.

``--profile K`` instead crawls K agents in this process (no Celery), twice (first, 304), under
cProfile (or, with ``--no-cprofile``, without it), with per-phase timers, an SQL counter and the
CPU of this process, its PostgreSQL backend and the card server, and prints where a crawl's
time goes. Results: docs/benchmarks-crawl.md.
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import io
import json
import multiprocessing
import os
import pstats
import selectors
import subprocess
import sys
import threading
import time
from email.utils import formatdate, parsedate_to_datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import ingest, synth  # noqa: E402
from bench._common import (  # noqa: E402
    CpuTracker,
    PhaseTimer,
    check_loopback,
    children_of,
    ensure_database,
    machine_cpu_seconds,
    machine_summary,
    median,
    process_cpu_seconds,
    setup_django,
    wait_quiet,
)

HOST = ingest.HOST
DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/registry_bench_crawl"
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/8"
SERVER_LIFETIME = 3600  # seconds: the card server stops by itself after this
LAST_MODIFIED_TS = 1_750_000_000  # a fixed instant (June 2025) for every card
OTHER_BENCHMARKS = r"bench/(search_load|seed|ingest|schemas|signatures)\.py"


# --- the card server: ETag, Last-Modified, 304 -------------------------------------------------


def _etag_matches(header: str, etag: str) -> bool:
    candidates = [c.strip().removeprefix("W/") for c in header.split(",")]
    return "*" in candidates or etag in candidates


def serve_etag_cards(seed: int, count: int, origins: int, mark: str, conn: Any) -> None:
    """Serve ``count`` cards on ``origins`` loopback ports until told to stop (or a time limit).

    The pipe takes ``"stats"`` (answered with the responses sent so far, by status) and
    ``"stop"``.
    """
    bodies: dict[str, tuple[bytes, str]] = {}
    for i in range(count):
        body = synth.card_bytes(seed, i)
        bodies[f"{mark}cards/{i}/agent-card.json"] = (body, f'"{hashlib.sha256(body).hexdigest()}"')
    last_modified = formatdate(LAST_MODIFIED_TS, usegmt=True)
    sent: dict[int, int] = {}
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            entry = bodies.get(self.path)
            if entry is None:
                self._send(404, b'{"error": "not found"}', {})
                return
            body, etag = entry
            headers = {"ETag": etag, "Last-Modified": last_modified}
            inm = self.headers.get("If-None-Match")
            ims = self.headers.get("If-Modified-Since")
            fresh = False
            if inm is not None:
                fresh = _etag_matches(inm, etag)
            elif ims:
                try:
                    fresh = parsedate_to_datetime(ims).timestamp() >= LAST_MODIFIED_TS
                except (TypeError, ValueError):
                    fresh = False
            if fresh:
                self._send(304, b"", headers)
            else:
                self._send(200, body, headers)

        def _send(self, status: int, body: bytes, headers: dict[str, str]) -> None:
            self.send_response(status)
            if status != 304:
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            if body:
                self.wfile.write(body)
            with lock:
                sent[status] = sent.get(status, 0) + 1

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
    while time.monotonic() < deadline:
        if conn.poll(0):
            message = conn.recv()
            if message == "stats":
                with lock:
                    conn.send(dict(sent))
                continue
            break
        for key, _ in selector.select(timeout=0.2):
            key.data._handle_request_noblock()  # accept, then a thread per request
    for httpd in servers:
        httpd.server_close()


class CardServer:
    def __init__(self, seed: int, count: int, origins: int) -> None:
        ctx = multiprocessing.get_context("spawn")
        self._pipe, child = ctx.Pipe()
        self.process = ctx.Process(
            target=serve_etag_cards, args=(seed, count, origins, ingest.MARK, child), daemon=True
        )
        self.process.start()
        if not self._pipe.poll(120):
            raise SystemExit("the card server did not start")
        self.ports: list[int] = self._pipe.recv()

    def stats(self) -> dict[int, int]:
        self._pipe.send("stats")
        if not self._pipe.poll(10):
            raise SystemExit("the card server did not answer")
        return self._pipe.recv()

    def stop(self) -> None:
        try:
            self._pipe.send("stop")
        except OSError:
            pass
        self.process.join(10)
        if self.process.is_alive():
            self.process.kill()


# --- waiting for the machine ---------------------------------------------------------------


def other_benchmarks() -> list[str]:
    found = subprocess.run(
        ["pgrep", "-af", OTHER_BENCHMARKS], capture_output=True, text=True, check=False
    ).stdout
    return [line for line in found.splitlines() if line.strip()]


def other_benchmark_pids() -> list[int]:
    """The other benchmarks' processes and their children (their own PostgreSQL backends are
    not among them, so the CPU they use is a lower bound of the others' load)."""
    pids = [int(line.split()[0]) for line in other_benchmarks()]
    return pids + [child for pid in pids for child in children_of(pid)]


def wait_for_machine(max_other_wait: float, quiet_cores: float, quiet_wait: float) -> float:
    """Wait (bounded) until no other benchmark runs and the machine is quiet; return the load."""
    deadline = time.monotonic() + max_other_wait
    announced = False
    while other_benchmarks() and time.monotonic() < deadline:
        if not announced:
            print("  waiting for another benchmark to finish ...", flush=True)
            announced = True
        time.sleep(5)
    if other_benchmarks():
        print("  another benchmark is still running; measuring anyway", flush=True)
    return wait_quiet(quiet_cores, quiet_wait) if quiet_wait > 0 else float("nan")


# --- one pass through the worker -----------------------------------------------------------


def crawl_pass(
    ids: list[str], timeout: float, redis_url: str, *, embedded: bool = False, batch: int = 1
) -> dict[str, Any]:
    """Enqueue every crawl with the consumer off, then time the worker until all are crawled
    (and, with ``embedded``, until every agent has its vectors too). ``batch`` > 1: queued as
    the sweep queues them, that many agents per ``cards.crawl_agents`` task."""
    import redis
    from django.db import InterfaceError, OperationalError, connection
    from django.utils import timezone

    from cards.models import Agent
    from cards.services import enqueue_crawls
    from cards.tasks import crawl_agent
    from registry.celery import app
    from search.models import AgentEmbedding

    replies = app.control.ping(timeout=1.0)
    destination = [h for r in replies for h in r if h.startswith(ingest.worker_name() + "@")]
    if not destination:
        raise SystemExit("the worker did not answer a ping")
    client = redis.Redis.from_url(redis_url)
    sentinel = f"{ingest.QUEUE}:sentinel"
    client.set(sentinel, "1", ex=int(timeout) + 120)
    app.control.cancel_consumer(ingest.QUEUE, destination=destination, reply=True, timeout=5)
    pass_start = timezone.now()
    t0 = time.perf_counter()
    if batch > 1:  # as the sweep does, at the priority a plain delay() gets
        for start in range(0, len(ids), batch):
            enqueue_crawls(ids[start : start + batch], priority=app.conf.task_default_priority)
    else:
        for agent_id in ids:
            crawl_agent.delay(agent_id)
    enqueue_s = time.perf_counter() - t0
    queued = client.llen(ingest.QUEUE)
    crawled = Agent.objects.filter(url__contains=ingest.MARK, last_crawled_at__gte=pass_start)
    connection.close()
    started = time.perf_counter()
    app.control.add_consumer(ingest.QUEUE, destination=destination, reply=True, timeout=5)
    deadline = started + timeout
    done = 0
    samples = overlapped = 0
    next_sample = started
    db_errors = 0
    while time.perf_counter() < deadline:
        try:
            done = crawled.count()
        except (OperationalError, InterfaceError) as exc:  # e.g. PostgreSQL restarted by others
            db_errors += 1
            print(f"  database error while polling ({exc}); retrying", flush=True)
            connection.close()
            time.sleep(1.0)
            continue
        if done >= len(ids):
            break
        if time.perf_counter() >= next_sample:  # is another benchmark running meanwhile?
            samples += 1
            overlapped += bool(other_benchmarks())
            next_sample += 2.0
        if not client.exists(sentinel):
            raise SystemExit(f"something flushed {redis_url} during the run (tasks were lost)")
        time.sleep(0.2)
    else:
        print(f"  pass hit its time limit ({done} of {len(ids)} crawled)", flush=True)
    elapsed = time.perf_counter() - started
    embedded_s = float("nan")
    if embedded:  # the embedding runs behind the crawls: wait for its last vector
        own = AgentEmbedding.objects.filter(
            agent__url__contains=ingest.MARK, updated_at__gte=pass_start
        )
        while time.perf_counter() < deadline and own.count() < len(ids):
            time.sleep(0.2)
        embedded_s = time.perf_counter() - started
    client.delete(sentinel)
    return {
        "seconds": elapsed,
        "embedded_s": embedded_s,
        "enqueue_s": enqueue_s,
        "queued": queued,
        "crawled": done,
        "overlap": overlapped / samples if samples else 0.0,
        "db_errors": db_errors,
        "pass_start": pass_start,
    }


def pass_checks(kind: str, n: int, pass_start: Any) -> dict[str, Any]:
    from django.db.models import Avg, Count

    from cards.models import Agent, CrawlAttempt, Snapshot

    own = Agent.objects.filter(url__contains=ingest.MARK)
    attempts = CrawlAttempt.objects.filter(
        agent__url__contains=ingest.MARK, started_at__gte=pass_start
    )
    by_status = dict(attempts.values_list("http_status").annotate(c=Count("id")))
    by_outcome = dict(attempts.values_list("outcome").annotate(c=Count("id")))
    stats = own.aggregate(fetch=Avg("fetch_ms"), process=Avg("process_ms"))
    found = {
        "status": dict(own.values_list("status").annotate(c=Count("id"))),
        "snapshots": Snapshot.objects.filter(agent__url__contains=ingest.MARK).count(),
        "attempts_by_http_status": by_status,
        "attempts_by_outcome": by_outcome,
        "last_http_status": dict(own.values_list("last_http_status").annotate(c=Count("id"))),
        "fetch_ms": stats["fetch"],
        "process_ms": stats["process"],
        "tags": ingest.outcome_summary()["tags"],
    }
    http, outcome = (200, "stored") if kind == "first" else (304, "not-modified")
    problems = []
    if found["status"] != {"ok": n}:
        problems.append(f"agent status {found['status']}")
    if found["snapshots"] != n:
        problems.append(f"{found['snapshots']} snapshots, expected {n}")
    if by_status != {http: n}:
        problems.append(f"attempts by http_status {by_status}, expected {{{http}: {n}}}")
    if by_outcome != {outcome: n}:
        problems.append(f"attempts by outcome {by_outcome}, expected {{{outcome!r}: {n}}}")
    if found["last_http_status"] != {http: n}:
        problems.append(f"last_http_status {found['last_http_status']}")
    found["problems"] = problems
    return found


def count_in_log(log: Path, offset: int, needles: list[bytes]) -> tuple[list[int], int]:
    with log.open("rb") as fh:
        fh.seek(offset)
        data = fh.read()
    return [data.count(n) for n in needles], offset + len(data)


def _overlap(row: dict[str, Any]) -> str:
    return f"{row['overlap']:.0%} ({row['other_bench_cores']:.2f})"


def run_benchmark(args: argparse.Namespace) -> None:
    from django.core.management import call_command
    from django.db import connection

    import bench.celery_app  # noqa: F401 - the private queue for .delay() from here

    call_command("migrate", verbosity=0, interactive=False)
    concurrencies = [int(c) for c in args.concurrency.split(",") if c]
    server = CardServer(args.seed, args.cards, args.origins)
    print(
        f"card server: {args.cards} cards on {len(server.ports)} origins "
        f"({HOST}:{server.ports[0]}...{server.ports[-1]}); politeness: "
        f"REGISTRY_ORIGIN_CONCURRENCY={os.environ['REGISTRY_ORIGIN_CONCURRENCY']} "
        f"REGISTRY_ORIGIN_MIN_GAP_SECONDS={os.environ['REGISTRY_ORIGIN_MIN_GAP_SECONDS']}",
        flush=True,
    )
    log = Path("/tmp") / f"{ingest.worker_name()}-crawl-worker.log"
    log.write_bytes(b"")
    results: list[dict[str, Any]] = []
    failed = False
    worker = None
    try:
        import redis

        for run in range(1, args.runs + 1):
            for concurrency in concurrencies:
                ingest.delete_own_agents(truncate=True)
                ids = ingest.create_agents(server.ports, args.cards)
                connection.close()
                redis.Redis.from_url(args.redis_url).delete(ingest.QUEUE)
                worker_args = argparse.Namespace(
                    database_url=args.database_url,
                    redis_url=args.redis_url,
                    worker_loglevel=args.worker_loglevel,
                    proposal_db_reuse=args.proposal_db_reuse,
                    concurrency=concurrency,
                    worker_arg=args.worker_arg,
                )
                worker = ingest.start_worker(worker_args, log)
                ingest.wait_worker(worker)
                time.sleep(1.0)  # the pool's children finish starting
                _, offset = count_in_log(log, 0, [])
                for kind in ("first", "recrawl"):
                    load = wait_for_machine(args.other_wait, args.quiet_cores, args.quiet_wait)
                    others_before = other_benchmarks()
                    mine = [os.getpid(), server.process.pid, worker.pid, *children_of(worker.pid)]
                    sent0 = server.stats()
                    busy0, _ = machine_cpu_seconds()
                    own0 = sum(process_cpu_seconds(p) for p in mine)
                    with CpuTracker(other_benchmark_pids, interval=1.0) as others_cpu:
                        timing = crawl_pass(
                            ids,
                            args.timeout,
                            args.redis_url,
                            embedded=kind == "first",
                            batch=args.batch,
                        )
                    busy1, _ = machine_cpu_seconds()
                    own1 = sum(process_cpu_seconds(p) for p in mine)
                    sent1 = server.stats()
                    others_after = other_benchmarks()
                    (deferred, retried), offset = count_in_log(
                        log, offset, [b"'deferred'", b" retry: "]
                    )
                    checks = pass_checks(kind, args.cards, timing["pass_start"])
                    sent = {k: sent1.get(k, 0) - sent0.get(k, 0) for k in sorted(sent1)}
                    sent = {k: v for k, v in sent.items() if v}
                    expected = {200: args.cards} if kind == "first" else {304: args.cards}
                    if sent != expected:
                        checks["problems"].append(f"server sent {sent}, expected {expected}")
                    elapsed = timing["seconds"]
                    row = {
                        "run": run,
                        "concurrency": concurrency,
                        "pass": kind,
                        "cards": args.cards,
                        "cards_per_s": timing["crawled"] / elapsed,
                        "embedded_per_s": args.cards / timing["embedded_s"],
                        "deferred": deferred,
                        "retried": retried,
                        "server_sent": sent,
                        "load_before": load,
                        "machine_cores": (busy1 - busy0) / elapsed,
                        "own_cores": (own1 - own0) / elapsed,
                        "other_bench_cores": others_cpu.seconds / elapsed,
                        "other_benchmarks": bool(others_before or others_after),
                        **timing,
                        **checks,
                    }
                    row.pop("pass_start")
                    results.append(row)
                    print(
                        f"run {run} c={concurrency} {kind:7} {row['cards_per_s']:6.1f} cards/s "
                        f"({elapsed:.1f}s; all embedded after {timing['embedded_s']:.1f}s: "
                        f"{row['embedded_per_s']:.1f} agents/s; "
                        f"enqueue {timing['enqueue_s']:.1f}s; mean fetch "
                        f"{row['fetch_ms']:.1f} ms, process {row['process_ms']:.1f} ms; "
                        f"{deferred} deferred, {retried} retried; server sent {sent}; "
                        f"status {row['status']}; {row['snapshots']} snapshots; attempts "
                        f"{row['attempts_by_http_status']}; cores: machine "
                        f"{row['machine_cores']:.2f}, bench processes {row['own_cores']:.2f} "
                        f"({row['own_cores'] * elapsed / args.cards * 1000:.1f} ms of CPU per "
                        "card, PostgreSQL not counted); "
                        f"load before {load:.2f}"
                        + (
                            f"; ANOTHER BENCHMARK RAN during {row['overlap']:.0%} of the pass, "
                            f"using {row['other_bench_cores']:.2f} cores"
                            if row["other_benchmarks"]
                            else ""
                        )
                        + ")",
                        flush=True,
                    )
                    if row["db_errors"]:
                        row["problems"].append("the database went away during the pass")
                    if args.json:
                        Path(args.json).write_text(json.dumps(results, indent=2, default=str))
                    if row["problems"]:
                        failed = True
                        print(f"  FAILED: {'; '.join(row['problems'])}", flush=True)
                ingest.stop_worker(worker)
                worker = None
    finally:
        if worker is not None:
            ingest.stop_worker(worker)
        import redis

        # the queue and the bindings kombu keeps for it (no expiry of their own)
        redis.Redis.from_url(args.redis_url).delete(
            ingest.QUEUE,
            f"_kombu.binding.{ingest.QUEUE}",
            f"_kombu.binding_permanent.{ingest.QUEUE}",
        )
        server.stop()

    print()
    print(
        f"N={args.cards} origins={args.origins} runs={args.runs} "
        f"concurrency={args.concurrency} proposal_db_reuse={args.proposal_db_reuse} "
        f"batch={args.batch} "
        f"machine={machine_summary()}"
    )
    print(
        "| worker processes | pass | cards/s (median) | runs | mean fetch ms | deferred "
        "| machine cores | other benchmark running (cores) |"
    )
    print("|---:|---|---:|---|---:|---:|---:|---|")
    for concurrency in concurrencies:
        medians = {}
        for kind in ("first", "recrawl"):
            rows = [r for r in results if r["concurrency"] == concurrency and r["pass"] == kind]
            if not rows:
                continue
            medians[kind] = median([r["cards_per_s"] for r in rows])
            print(
                f"| {concurrency} | {kind} | {medians[kind]:.1f} "
                f"| {', '.join(format(r['cards_per_s'], '.1f') for r in rows)} "
                f"| {median([r['fetch_ms'] for r in rows]):.1f} "
                f"| {median([r['deferred'] for r in rows]):.0f} "
                f"| {median([r['machine_cores'] for r in rows]):.2f} "
                f"| {', '.join(_overlap(r) for r in rows)} |"
            )
        if "first" in medians and "recrawl" in medians:
            print(f"|   | recrawl/first | {medians['recrawl'] / medians['first']:.2f}x | | | | | |")
    if failed:
        raise SystemExit(1)


# --- the profile: where one crawl's time goes -----------------------------------------------


def run_profile(args: argparse.Namespace) -> None:
    from django.core.management import call_command
    from django.db import connection

    from cards import health, pipeline, trust
    from cards.crawling import crawl, ingest, not_modified
    from cards.models import Agent, Snapshot
    from cards.rendering import store
    from schemas_app import services as schemas_services

    call_command("migrate", verbosity=0, interactive=False)
    server = CardServer(args.seed, args.profile, min(args.origins, args.profile))
    try:
        ingest.delete_own_agents(truncate=True)
        ids = ingest.create_agents(server.ports, args.profile)
        timer = PhaseTimer()
        for owner, attr, label in [
            (crawl, "fetch_card", "fetch (HTTP)"),
            (pipeline, "check", "parse + validate (pipeline.check)"),
            (pipeline, "verify", "verify signatures"),
            (not_modified, "parse_card_bytes", "parse stored card (304)"),
            (ingest, "summarise", "changes summary"),
            (ingest, "apply_summary", "apply_summary"),
            (ingest, "index_card", "index_card"),
            (schemas_services, "index_agent_schemas", "index_agent_schemas"),
            (store, "agent_render", "render documents (cards.rendering)"),
            (health, "after_success", "health.after_success"),
            (trust, "record_signature", "trust.record_signature"),
            (ingest, "record_attempt", "CrawlAttempt insert"),
            (not_modified, "record_attempt", "CrawlAttempt insert"),
            (Snapshot.objects, "get_or_create", "Snapshot get_or_create"),
            (Agent, "save", "Agent.save"),
            (trust, "pinned_jwks", "pinned_jwks"),
        ]:
            timer.wrap(owner, attr, label)
        connection.close()
        load = wait_for_machine(args.other_wait, args.quiet_cores, args.quiet_wait)
        print(f"machine load before the profile: {load:.2f} cores")
        # What a Celery worker pays per task as shipped: Django's fixup closes the connection
        # after every task, so each task opens a new one.
        t = time.perf_counter()
        for _ in range(50):
            connection.close()
            connection.ensure_connection()
        reconnect_ms = (time.perf_counter() - t) / 50 * 1000
        print(f"reconnect to PostgreSQL: {reconnect_ms:.2f} ms (mean of 50)")
        for kind in ("first", "recrawl"):
            timer.reset()
            profiler = cProfile.Profile()
            outcomes: dict[str, int] = {}
            connection.ensure_connection()
            with connection.cursor() as cur:
                cur.execute("SELECT pg_backend_pid()")
                backend = cur.fetchone()[0]
            with connection.execute_wrapper(timer.sql):
                cpu = [process_cpu_seconds(backend), process_cpu_seconds(server.process.pid)]
                own = time.process_time()
                t = time.perf_counter()
                if not args.no_cprofile:
                    profiler.enable()
                for agent_id in ids:
                    outcome = crawl.agent_crawl(agent_id=agent_id)
                    outcomes[outcome] = outcomes.get(outcome, 0) + 1
                profiler.disable()
                wall = time.perf_counter() - t
                own = time.process_time() - own
                cpu = [
                    process_cpu_seconds(backend) - cpu[0],
                    process_cpu_seconds(server.process.pid) - cpu[1],
                ]
            n = len(ids)
            under = "without cProfile" if args.no_cprofile else "under cProfile"
            print(
                f"\n=== {kind}: {n} crawls in process, {wall:.2f}s, {n / wall:.1f} cards/s, "
                f"{wall / n * 1000:.2f} ms per crawl ({under}); outcomes {outcomes}"
            )
            print(
                f"CPU per crawl: this process {own / n * 1000:.2f} ms, its PostgreSQL backend "
                f"{cpu[0] / n * 1000:.2f} ms, the card server {cpu[1] / n * 1000:.2f} ms"
            )
            print(
                f"SQL: {timer.sql_count / n:.1f} statements per crawl, "
                f"{timer.sql_seconds / n * 1000:.2f} ms per crawl"
            )
            print("phase (inclusive wall time, per crawl):")
            for label, total in sorted(timer.totals.items(), key=lambda kv: -kv[1]):
                print(
                    f"  {label:34} {total / n * 1000:7.2f} ms  ({timer.calls[label] / n:.1f} calls)"
                )
            if args.no_cprofile:
                continue
            out = io.StringIO()
            stats = pstats.Stats(profiler, stream=out)
            stats.sort_stats("tottime").print_stats(args.profile_top)
            stats.sort_stats("cumulative").print_stats(args.profile_top)
            print(out.getvalue())
        timer.restore()
        ingest.delete_own_agents(truncate=True)
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", "--cards", type=int, default=10_000)
    parser.add_argument("--origins", type=int, default=1000, help="loopback ports serving cards")
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument(
        "--concurrency", default="1,2", help="worker --concurrency values (child processes)"
    )
    parser.add_argument("--database-url", default=DEFAULT_DATABASE_URL)
    parser.add_argument("--redis-url", default=DEFAULT_REDIS_URL)
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--timeout", type=float, default=300, help="seconds per pass, at most")
    parser.add_argument(
        "--other-wait",
        type=float,
        default=600,
        help="before each pass, wait up to this long for other bench scripts to finish",
    )
    parser.add_argument("--quiet-wait", type=float, default=60.0)
    parser.add_argument("--quiet-cores", type=float, default=0.3)
    parser.add_argument(
        "--origin-concurrency", default="2", help="REGISTRY_ORIGIN_CONCURRENCY for the worker"
    )
    parser.add_argument(
        "--origin-min-gap", default="1.0", help="REGISTRY_ORIGIN_MIN_GAP_SECONDS for the worker"
    )
    parser.add_argument(
        "--proposal-db-reuse",
        action="store_true",
        help="measure a proposed change: keep the worker's database connection across tasks "
        "(bench/celery_app.py); not the registry as shipped",
    )
    parser.add_argument(
        "--batch",
        type=int,
        default=1,
        help="agents per task, queued as the sweep queues them (REGISTRY_CRAWL_BATCH); "
        "1: one cards.crawl_agent task each, as a submission is queued",
    )
    parser.add_argument("--worker-arg", action="append", default=[])
    parser.add_argument("--worker-loglevel", default="INFO", help="`make worker` uses INFO")
    parser.add_argument("--json", help="write every pass's results here")
    parser.add_argument(
        "--profile", type=int, default=0, help="profile K in-process crawls instead"
    )
    parser.add_argument("--profile-top", type=int, default=30)
    parser.add_argument(
        "--no-cprofile", action="store_true", help="with --profile: phase timers and CPU only"
    )
    args = parser.parse_args()
    check_loopback(args.database_url)
    check_loopback(args.redis_url)
    os.environ["REGISTRY_ORIGIN_CONCURRENCY"] = args.origin_concurrency
    os.environ["REGISTRY_ORIGIN_MIN_GAP_SECONDS"] = args.origin_min_gap
    ensure_database(args.database_url)
    setup_django(
        args.database_url,
        REDIS_URL=args.redis_url,
        CELERY_TASK_ALWAYS_EAGER="true" if args.profile else "false",
        BENCH_CELERY_QUEUE=ingest.QUEUE,
        **ingest.FETCH_ENV,
    )
    if args.profile:
        run_profile(args)
    else:
        run_benchmark(args)


if __name__ == "__main__":
    main()
