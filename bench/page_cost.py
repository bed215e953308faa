"""What one read of the worst card the registry accepts costs, door by door (issue 43, item 2).

Usage (loopback PostgreSQL; the database is dropped and made anew):

    python bench/page_cost.py --database-url postgres://postgres@127.0.0.1:5432/registry_bench_pages

It ingests the cards of bench/worst_card.py through the real pipeline (parse, rules, index,
schemas, render: ``cards.crawling.card_ingest``) on PostgreSQL, stores a live report with many
check rows on each (``live.store.record``, as a run does), then reads each door ``--repeat``
times and prints, per card and door, the median server CPU (``time.process_time`` around the
Django test client's request, in this process) and the answer's bytes. Every agent page is
rendered (the page cache off), except the door "agent page, kept": the cache on, so each read
after the warm one is the kept page (cards/catalogue/page_cache.py). MCP is read over HTTP
from the registry's ASGI application under uvicorn in a thread of this process: its CPU is the
process's, the client's small share included. ``--profile`` adds the top functions of one agent
page read (cProfile, cumulative) for the card named.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import pstats
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench import worst_card  # noqa: E402
from bench._common import ensure_database, median, setup_django  # noqa: E402

GOAL_PAGE_CPU_MS = 50.0
GOAL_BYTES = 1_000_000
CARD_DOOR = "REST card (as fetched)"


def ingest(kind: str, cap: int) -> Any:
    from cards.crawling import card_ingest
    from cards.models import Agent
    from registry.http import FetchResult

    url = f"https://worst.example/{kind}/agent-card.json"
    body = worst_card.card_bytes(kind, cap)
    agent = Agent.objects.create(url=url, card_url=url)
    started = time.perf_counter()
    card_ingest(agent_id=agent.pk, result=FetchResult.local(url, body))
    took = time.perf_counter() - started
    agent.refresh_from_db()
    print(f"{kind}: card {len(body):,} bytes, {agent.skills.count():,} skills, "
          f"{len(agent.interfaces):,} interfaces, ingest {took:.1f} s")  # fmt: skip
    return agent


def store_report(agent: Any) -> int:
    from django.utils import timezone

    from cards.rendering.documents import when
    from live import store

    now = timezone.now()
    rows = min(3 * max(len(agent.interfaces), 1), 27_000)
    report = worst_card.live_report(agent.interfaces, when=when(now) or "", rows=rows)
    store.record(agent.pk, report, now)
    return rows


def measure(call: Callable[[], tuple[int, int]], repeat: int) -> tuple[float, int, int]:
    """(median CPU ms, bytes, status) of ``call`` (returns status and bytes)."""
    call()  # warm: templates, compiled SQL, caches of the process
    times = []
    size = status = 0
    for _ in range(repeat):
        start = time.process_time()
        status, size = call()
        times.append((time.process_time() - start) * 1000)
    return median(times), size, status


def django_get(path: str, *, kept: bool = False, **extra: Any) -> Callable[[], tuple[int, int]]:
    """A GET of ``path``; ``kept``: with the agent page's cache on (each read after the first
    is the kept page; cards/catalogue/page_cache.py), else every page is rendered."""
    from django.test import Client, override_settings

    client = Client()
    keep = override_settings(REGISTRY_AGENT_PAGE_CACHE_SECONDS=600)

    def call() -> tuple[int, int]:
        if kept:
            with keep:
                response = client.get(path, **extra)
        else:
            response = client.get(path, **extra)
        return response.status_code, len(response.content)

    return call


def django_post(path: str, body: Any) -> Callable[[], tuple[int, int]]:
    from django.test import Client

    client = Client()
    data = json.dumps(body)

    def call() -> tuple[int, int]:
        response = client.post(path, data=data, content_type="application/json")
        return response.status_code, len(response.content)

    return call


def mcp_call(base: str, tool: str, arguments: dict[str, Any]) -> Callable[[], tuple[int, int]]:
    import httpx

    client = httpx.Client(timeout=120)
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments}}  # fmt: skip
    headers = {
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2025-06-18",
    }

    def call() -> tuple[int, int]:
        response = client.post(base + "/mcp", json=body, headers=headers)
        return response.status_code, len(response.content)

    return call


def doors(agent: Any, base: str | None) -> dict[str, Callable[[], tuple[int, int]]]:
    from cards.models import Skill

    pk = agent.pk
    first_skill = Skill.objects.filter(agent=agent).order_by("position").first()
    found: dict[str, Callable[[], tuple[int, int]]] = {
        "agent page": django_get(f"/agents/{pk}"),
        "agent page, kept": django_get(f"/agents/{pk}", kept=True),
        "agent page, skills page 2": django_get(f"/agents/{pk}?skills_page=2"),
        "REST detail": django_get(f"/api/v1/agents/{pk}"),
        "REST skills list": django_get(f"/api/v1/agents/{pk}/skills?limit=100"),
        CARD_DOOR: django_get(f"/api/v1/agents/{pk}/card"),
        "REST search (tag)": django_get(f"/api/v1/agents?tag={worst_card.TAG}&limit=100"),
        "A2A agentQuery (tag)": django_post("/a2a", worst_card.tag_query_call()),
        "ARD agent": django_get(f"/ard/agents/{agent.ard_identifier}"),
        "ARD search": django_post(
            "/ard/search", {"query": {"text": "worst card"}, "pageSize": 100}
        ),  # fmt: skip
    }
    if first_skill is not None:
        found["Try it page (one skill)"] = django_get(
            f"/agents/{pk}/try", data={"skill": first_skill.skill_id}
        )
    if base is not None:
        found["MCP get_agent"] = mcp_call(base, "get_agent", {"id": str(pk)})
        found["MCP search_agents (tag)"] = mcp_call(
            base, "search_agents", {"tag": [worst_card.TAG], "limit": 100}
        )
    return found


def profile_page(agent: Any, top: int) -> str:
    from django.test import Client

    client = Client()
    client.get(f"/agents/{agent.pk}")
    profiler = cProfile.Profile()
    profiler.enable()
    client.get(f"/agents/{agent.pk}")
    profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(top)
    return out.getvalue()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--database-url", default="postgres://postgres@127.0.0.1:5432/registry_bench_pages"
    )
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--cards", default="skills,interfaces,strings")
    parser.add_argument("--no-mcp", action="store_true", help="skip the MCP doors (HTTP)")
    parser.add_argument("--profile", default="", help="a card kind: profile its agent page")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--json", default="", help="also write the results to this file")
    args = parser.parse_args()

    ensure_database(args.database_url, recreate=True)
    setup_django(
        args.database_url,
        REGISTRY_ANON_RATE="off",
        REGISTRY_AGENT_PAGE_CACHE_SECONDS="0",  # pages rendered each time, but "kept"
        CELERY_TASK_ALWAYS_EAGER="true",
        ALLOWED_HOSTS="testserver,127.0.0.1,localhost",
    )
    from django.conf import settings
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    cap = settings.REGISTRY_FETCH_MAX_BYTES
    print(f"card cap (REGISTRY_FETCH_MAX_BYTES): {cap:,} bytes")
    agents = {kind: ingest(kind, cap) for kind in args.cards.split(",")}
    for kind, agent in agents.items():
        print(f"{kind}: stored a live report of {store_report(agent):,} check rows")

    results: list[dict[str, Any]] = []

    def run(base: str | None) -> None:
        for kind, agent in agents.items():
            for door, call in doors(agent, base).items():
                cpu, size, status = measure(call, args.repeat)
                results.append(
                    {
                        "card": kind,
                        "door": door,
                        "cpu_ms": round(cpu, 1),
                        "bytes": size,
                        "status": status,
                    }  # fmt: skip
                )
                print(f"{kind:10} {door:28} {status:4} {cpu:9.1f} ms {size:>12,} bytes", flush=True)

    if args.no_mcp:
        run(None)
    else:
        from tests.support import serving_asgi

        with serving_asgi() as base:
            run(base)

    worst: dict[str, dict[str, Any]] = {}
    for row in results:
        if row["status"] >= 400:
            continue
        held = worst.setdefault(row["door"], dict(row))
        if row["bytes"] > held["bytes"]:
            held["bytes"], held["card"] = row["bytes"], row["card"]
        held["cpu_ms"] = max(held["cpu_ms"], row["cpu_ms"])
    print("\nworst card per door (CPU: the highest median; bytes: the largest answer)")
    for door, row in worst.items():
        over = " OVER 1 MB" if row["bytes"] > GOAL_BYTES else ""
        if door == CARD_DOOR:  # the card's own bytes, served as fetched: the fetch cap bounds it
            over = " (the card as fetched, within the fetch cap)" if row["bytes"] <= cap else over
        if door == "agent page" and row["cpu_ms"] > GOAL_PAGE_CPU_MS:
            over += " OVER 50 ms"
        print(f"  {door:28} {row['cpu_ms']:9.1f} ms {row['bytes']:>12,} bytes{over}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    if args.profile:
        print(profile_page(agents[args.profile], args.top))


if __name__ == "__main__":
    main()
