"""Live checks (docs/live-checks.md): how many an agent per second a core runs, and what they
cost the crawl.

    .venv/bin/python bench/live_checks.py --agents 20 --rounds 5 [--kind sdk|handmade]

A second process serves ``--agents`` real A2A agents on 127.0.0.1 (tests/live/agents.py:
a2a-sdk's own server, or the hand-made conformant agent), each with a JSON-RPC and an HTTP+JSON
interface. This process crawls each agent's card once (the real crawl), then runs
``live.runner.check_agent`` on every agent ``--rounds`` times (transport checks: 13 requests an
agent, nothing that starts work; ``--messages`` adds the opted-in message checks) and reports,
per round:

- agents/s and requests/s on the wall clock (one thread, as one worker process runs them);
- the CPU of this process (the registry's side: fetcher, checks, report, the documents
  rendered again), of its PostgreSQL backend, and of the agents' server, per agent checked;
- agents per second per core of the registry's CPU (this process plus its PostgreSQL backend).

Then the crawl's side: the median CPU of a re-crawl of an unchanged card (``agent_crawl``) and,
in the same run, of the crawl task's hook (``live.tasks.after_crawl``, which with a broker only
returns: due checks are queued by the beat's sweep), and of the sweep itself (``live.tasks.sweep``:
one query and one message to Redis, ``--broker``, an agent due).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._common import (  # noqa: E402
    ensure_database,
    loopback_agents,
    machine_summary,
    median,
    process_cpu_seconds,
    setup_django,
)

DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/registry_bench_live"
SERVE = """
import json, logging, sys, time
logging.disable(logging.CRITICAL)
from contextlib import ExitStack
from tests.live.agents import sdk_agent, handmade_agent
count, kind = int(sys.argv[1]), sys.argv[2]
with ExitStack() as stack:
    make = sdk_agent if kind == "sdk" else handmade_agent
    agents = [stack.enter_context(make()) for _ in range(count)]
    print(json.dumps([a.card_url for a in agents]), flush=True)
    sys.stdin.read()
"""


def serve_agents(count: int, kind: str) -> tuple[subprocess.Popen[str], list[str]]:
    server = subprocess.Popen(
        [sys.executable, "-c", SERVE, str(count), kind],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert server.stdout is not None
    line = server.stdout.readline()
    if not line:
        raise SystemExit("the agents' server did not start")
    return server, json.loads(line)


def backend_pid() -> int:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return int(cursor.fetchone()[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--agents", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--kind", choices=["sdk", "handmade"], default="sdk")
    parser.add_argument("--messages", action="store_true", help="opt every agent in to messages")
    parser.add_argument("--database-url", default=DEFAULT_DATABASE_URL)
    parser.add_argument("--broker", default="redis://127.0.0.1:6379/13")
    parser.add_argument(
        "--profile", action="store_true", help="one more round under cProfile: where time goes"
    )
    args = parser.parse_args()

    ensure_database(args.database_url, recreate=True)
    setup_django(
        args.database_url,
        **loopback_agents(
            args.broker,
            REGISTRY_FETCH_ALLOWED_NETWORKS="127.0.0.0/8",
            REGISTRY_LIVE_MESSAGES_PER_DAY="1000000",
            CELERY_TASK_ALWAYS_EAGER="false",
        ),
    )
    from django.core.management import call_command

    call_command("migrate", verbosity=0)

    from cards import crawling
    from cards.models import Agent
    from live import runner, tasks

    print(json.dumps(machine_summary()))
    server, urls = serve_agents(args.agents, args.kind)
    try:
        ids = []
        for url in urls:
            row = Agent.objects.create(url=url, card_url=url, probe_messages=args.messages)
            outcome = crawling.agent_crawl(agent_id=row.pk)
            if outcome != "stored":
                raise SystemExit(f"crawl of {url}: {outcome}")
            ids.append(row.pk)
        backend = backend_pid()
        print(f"{len(ids)} {args.kind} agents crawled; checking {args.rounds} rounds")
        for round_no in range(1, args.rounds + 1):
            wall0, cpu0 = time.monotonic(), time.process_time()
            db0, srv0 = process_cpu_seconds(backend), process_cpu_seconds(server.pid)
            requests = outcomes = 0
            failed = []
            for agent_id in ids:
                agent = runner.target(agent_id)
                assert agent is not None
                report = runner.check_agent(agent, force=True)
                requests += sum(1 for c in report["checks"] if c["exchange"])
                outcomes += 1
                if report["outcome"] != "pass":
                    failed.append((agent_id, report["outcome"]))
            wall = time.monotonic() - wall0
            cpu = time.process_time() - cpu0
            db = process_cpu_seconds(backend) - db0
            srv = process_cpu_seconds(server.pid) - srv0
            n = len(ids)
            print(
                f"round {round_no}: {n / wall:.1f} agents/s, {requests / wall:.0f} requests/s "
                f"wall; registry CPU {1000 * cpu / n:.1f} ms + PostgreSQL {1000 * db / n:.1f} ms "
                f"an agent ({n / (cpu + db):.1f} agents/s per core); agents' server "
                f"{1000 * srv / n:.1f} ms an agent; not pass: {len(failed)}"
            )

        if args.profile:
            import cProfile
            import pstats

            profiler = cProfile.Profile()
            profiler.enable()
            for agent_id in ids:
                target = runner.target(agent_id)
                assert target is not None
                runner.check_agent(target, force=True)
            profiler.disable()
            stats = pstats.Stats(profiler)
            raw = stats.stats  # type: ignore[attr-defined]
            total = sum(row[2] for row in raw.values())
            print(f"profile of one round: {total:.2f} s of CPU and waits; the project's")
            print("functions by cumulative time (share of the round):")
            ours = [
                (key, row)
                for key, row in raw.items()
                if any(f"/{part}/" in key[0] for part in ("live", "registry", "cards"))
            ]
            for (filename, line, name), row in sorted(ours, key=lambda kv: -kv[1][3])[:16]:
                where = f"{Path(filename).parent.name}/{Path(filename).name}:{line}({name})"
                print(f"  {100 * row[3] / total:5.1f}%  {row[1]:6d} calls  {where}")

        # The crawl's side: a re-crawl of an unchanged card, and the hook the crawl task calls
        # after it (with a broker it returns at once: the beat's sweep queues due checks).
        crawl_cpu, hook_cpu = [], []
        for agent_id in ids * 3:
            start = time.process_time()
            crawling.agent_crawl(agent_id=agent_id)
            crawl_cpu.append(time.process_time() - start)
            start = time.process_time()
            tasks.after_crawl(str(agent_id), "unchanged")
            hook_cpu.append(time.process_time() - start)
        print(
            f"crawl of an unchanged card: median {1000 * median(crawl_cpu):.2f} ms CPU; the "
            f"crawl task's hook: median {1_000_000 * median(hook_cpu):.1f} us CPU "
            f"({100 * median(hook_cpu) / median(crawl_cpu):.2f}% of the crawl)"
        )
        # The sweep, off the crawl's path: find the due agents and queue them (Redis).
        from cards.models import Agent as Rows

        Rows.objects.filter(pk__in=ids).update(live_checked_at=None)
        sweeps = []
        for _ in range(5):
            start = time.process_time()
            queued = tasks.sweep()
            sweeps.append(time.process_time() - start)
            from django.core.cache import cache

            cache.clear()
        print(
            f"sweep queueing {queued} due agents: median {1000 * median(sweeps):.2f} ms CPU "
            f"({1000 * median(sweeps) / max(queued, 1):.3f} ms an agent)"
        )
    finally:
        if server.stdin:
            server.stdin.close()
        server.wait(timeout=30)
        import redis

        redis.Redis.from_url(args.broker).flushdb()
        os.environ.pop("REDIS_URL", None)


if __name__ == "__main__":
    main()
