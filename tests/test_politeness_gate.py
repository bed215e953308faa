"""The politeness gate (registry/http/gate.py) on real loopback servers that note when each
request arrived: one destination, whatever its spelling and however many origins share its
address, gets a gap between requests and no more than its hourly ceiling, across processes."""

from __future__ import annotations

import dataclasses
import ipaddress
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.utils import timezone

from registry.http import FetchError, FetchPolicy, fetch, gate
from tests.support import CardServer, Reply, running_server
from tests.workers import run_import, wait_for

LOOPBACK = (ipaddress.ip_network("127.0.0.0/8"), ipaddress.ip_network("::1/128"))


def policy(**changes: Any) -> FetchPolicy:
    base = FetchPolicy(
        allow_http=True,
        allowed_networks=LOOPBACK,
        connect_timeout=2.0,
        read_timeout=3.0,
        total_timeout=5.0,
    )
    return dataclasses.replace(base, **changes)


@pytest.fixture
def fresh_gate() -> Iterator[None]:
    """No turn or count of an earlier test in Redis or in this process."""
    import redis

    client = redis.Redis.from_url(django_settings.REDIS_URL)
    for key in client.scan_iter("registry:gate:*"):
        client.delete(key)
    gate.reset_memory()
    yield
    for key in client.scan_iter("registry:gate:*"):
        client.delete(key)


@pytest.fixture
def timed_server() -> Iterator[tuple[CardServer, list[float]]]:
    arrivals: list[float] = []
    with running_server() as server:

        def card(_: Any) -> Reply:
            arrivals.append(time.monotonic())
            return Reply(body=b"{}")

        server.routes["/card.json"] = card
        yield server, arrivals


def gaps(times: list[float]) -> list[float]:
    return [b - a for a, b in zip(times, times[1:], strict=False)]


def test_spellings_of_one_host_share_its_gap(
    fresh_gate: None, timed_server: tuple[CardServer, list[float]]
) -> None:
    """127.0.0.1, localhost, 127.1, 2130706433 and 0x7f000001 are one destination: without the
    gate these five requests arrived within milliseconds."""
    server, arrivals = timed_server
    chosen = policy(min_gap=1.0, max_wait=5.0)
    for host in ("127.0.0.1", "localhost", "127.1", "2130706433", "0x7f000001"):
        fetch(f"http://{host}:{server.port}/card.json", policy=chosen)
    assert len(arrivals) == 5
    assert min(gaps(arrivals)) >= 0.7, gaps(arrivals)


def test_many_origins_on_one_address_share_its_gap(fresh_gate: None) -> None:
    """Three servers (three origins) on 127.0.0.1: one gap between all their requests."""
    arrivals: list[float] = []

    def card(_: Any) -> Reply:
        arrivals.append(time.monotonic())
        return Reply(body=b"{}")

    with running_server() as one, running_server() as two, running_server() as three:
        for server in (one, two, three):
            server.routes["/card.json"] = card
        chosen = policy(min_gap=1.0, max_wait=5.0)
        for _ in range(2):
            for server in (one, two, three):
                fetch(server.url("/card.json"), policy=chosen)
    assert len(arrivals) == 6
    assert min(gaps(arrivals)) >= 0.7, gaps(arrivals)


def test_a_turn_too_far_off_is_refused_as_busy_without_a_request(
    fresh_gate: None, timed_server: tuple[CardServer, list[float]]
) -> None:
    server, arrivals = timed_server
    chosen = policy(min_gap=30.0, max_wait=0.5)
    fetch(server.url("/card.json"), policy=chosen)
    with pytest.raises(FetchError) as caught:
        fetch(server.url("/card.json"), policy=chosen)
    assert caught.value.code == "destination-busy"
    assert caught.value.transient
    assert 25 < (caught.value.retry_after or 0) <= 30
    assert len(arrivals) == 1


def test_the_hourly_ceiling_holds_across_origins_of_one_address(fresh_gate: None) -> None:
    arrivals: list[float] = []

    def card(_: Any) -> Reply:
        arrivals.append(time.monotonic())
        return Reply(body=b"{}")

    chosen = policy(hourly_limit=4)
    refused = []
    with running_server() as one, running_server() as two:
        one.routes["/card.json"] = two.routes["/card.json"] = card
        for number in range(10):
            server = one if number % 2 else two
            try:
                fetch(server.url("/card.json"), policy=chosen)
            except FetchError as err:
                refused.append(err)
    assert len(arrivals) == 4
    assert len(refused) == 6
    assert {err.code for err in refused} == {"destination-ceiling"}
    assert all(0 < (err.retry_after or 0) <= 3600 for err in refused)


def test_retry_after_from_one_origin_rests_the_whole_address(fresh_gate: None) -> None:
    """A 429 with Retry-After on one port: no request of the registry starts at that address
    (another port, another spelling) before then."""
    with running_server() as busy, running_server() as other:
        busy.routes["/card.json"] = Reply(
            status=429, body=b"{}", headers={"Retry-After": "120", "Content-Type": "x/y"}
        )
        other.serve("/card.json", b"{}")
        chosen = policy(min_gap=0.01, max_wait=1.0)
        with pytest.raises(FetchError):
            fetch(busy.url("/card.json"), policy=chosen)
        with pytest.raises(FetchError) as caught:
            fetch(f"http://localhost:{other.port}/card.json", policy=chosen)
        assert caught.value.code == "destination-busy"
        assert (caught.value.retry_after or 0) > 100
        assert other.hits("/card.json") == 0


def test_the_gate_is_shared_by_processes_through_redis(
    fresh_gate: None, timed_server: tuple[CardServer, list[float]]
) -> None:
    """This process takes a turn with a long gap; another process (a second worker) asking
    for the same destination by another spelling is told to wait, and sends nothing."""
    server, arrivals = timed_server
    fetch(server.url("/card.json"), policy=policy(min_gap=60.0))
    script = f"""
import ipaddress, sys, django
django.setup()
from registry.http import FetchError, FetchPolicy, fetch
p = FetchPolicy(allow_http=True, allowed_networks=(ipaddress.ip_network("127.0.0.0/8"),),
                min_gap=60.0, max_wait=0.5)
try:
    fetch("http://localhost:{server.port}/card.json", policy=p)
except FetchError as err:
    sys.exit(3 if err.code == "destination-busy" else 4)
"""
    other = subprocess.run(  # noqa: S603 - this interpreter, a fixed script
        [sys.executable, "-c", script],
        env={**_environment(), "DJANGO_SETTINGS_MODULE": "registry.settings"},
        timeout=120,
        check=False,
    )
    assert other.returncode == 3
    assert len(arrivals) == 1


def _environment() -> dict[str, str]:
    import os

    return {**os.environ, "REDIS_URL": django_settings.REDIS_URL}


def test_without_redis_the_gate_is_kept_in_the_process(
    fresh_gate: None, timed_server: tuple[CardServer, list[float]], settings: Any
) -> None:
    """Redis unreachable (a closed port): the gate is not open, it holds in this process."""
    settings.REDIS_URL = "redis://127.0.0.1:1/0"
    server, arrivals = timed_server
    chosen = policy(min_gap=1.0, max_wait=5.0)
    started = time.monotonic()
    for _ in range(3):
        fetch(server.url("/card.json"), policy=chosen)
    assert min(gaps(arrivals)) >= 0.7, gaps(arrivals)
    # One failed connect to Redis, then the process's gate: not one timeout per request.
    assert time.monotonic() - started < 3.0


def test_the_production_policy_has_the_gate_on(settings: Any) -> None:
    settings.REGISTRY_DESTINATION_MIN_GAP_SECONDS = 1.0
    settings.REGISTRY_DESTINATION_HOURLY_LIMIT = 1200
    production = FetchPolicy.from_settings()
    assert production.min_gap == 1.0
    assert production.hourly_limit == 1200


def test_names_of_a_destination() -> None:
    assert gate.origin_name("HTTP", "0x7f000001", 8080) == "http://127.0.0.1:8080"
    assert gate.origin_name("https", "Example.COM.", 443) == "https://example.com:443"
    assert gate.address_name(ipaddress.ip_address("::ffff:127.0.0.1")) == "ip:127.0.0.1"
    one = gate.address_name(ipaddress.ip_address("2001:db8::1"))
    other = gate.address_name(ipaddress.ip_address("2001:db8::ffff:2"))
    assert one == other == "ip:2001:db8::/64"


# --- what the crawls do with it -----------------------------------------------------------------


@pytest.mark.django_db
def test_a_crawl_the_gate_refuses_is_deferred_and_changes_nothing_else(
    fresh_gate: None, card_server: CardServer, loopback_allowed: None, settings: Any
) -> None:
    """The registry's own limit is not the agent's failure: no error, no attempt recorded, the
    status kept; the agent is due again when its destination's turn comes."""
    from cards import crawling
    from cards.models import Agent, CrawlAttempt
    from tests.factories import minimal_card

    url = card_server.serve("/card.json", json.dumps(minimal_card()).encode())
    agent = Agent.objects.create(url=url, card_url=url)
    settings.REGISTRY_DESTINATION_MIN_GAP_SECONDS = 60
    settings.REGISTRY_DESTINATION_MAX_WAIT_SECONDS = 0.2
    assert crawling.agent_crawl(agent_id=agent.pk) == "stored"
    attempts = CrawlAttempt.objects.filter(agent=agent).count()
    before = timezone.now()
    assert crawling.agent_crawl(agent_id=agent.pk) == crawling.DEFERRED
    agent.refresh_from_db()
    assert agent.status == "ok" and agent.last_error == ""
    assert CrawlAttempt.objects.filter(agent=agent).count() == attempts
    assert agent.next_crawl_at is not None
    assert agent.next_crawl_at >= before + timedelta(seconds=50)
    assert card_server.hits("/card.json") == 1


@pytest.mark.celery_worker
def test_an_import_on_one_address_is_spaced_by_the_gate_across_workers(
    fresh_gate: None,
    start_worker: Any,
    token: str,
    loopback_allowed: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Eight cards on three origins of one address (two ports, two spellings), two workers of
    four threads each, a 1 s gap: every request that reaches the address is about a gap after
    the one before (before the gate, crawls of other origins on one address ran together, and
    the gap held only between crawl starts at one origin)."""

    import tests.workers
    from cards import imports
    from tests.factories import minimal_card
    from tests.workers import worker_env

    monkeypatch.setattr(
        tests.workers,
        "worker_env",
        lambda url: {
            **worker_env(url),
            "REGISTRY_ORIGIN_MIN_GAP_SECONDS": "1",
            "REGISTRY_DESTINATION_MIN_GAP_SECONDS": "1",
            "REGISTRY_DESTINATION_MAX_WAIT_SECONDS": "30",
        },
    )
    arrivals: list[float] = []

    def card(number: int) -> Any:
        body = json.dumps(minimal_card(name=f"Gated {number}")).encode()

        def reply(_: Any) -> Reply:
            arrivals.append(time.monotonic())
            return Reply(body=body)

        return reply

    with running_server() as one, running_server() as two:
        urls = []
        for number in range(8):
            server = one if number % 2 else two
            server.routes[f"/g{number}.json"] = card(number)
            host = "localhost" if number % 4 == 1 else "127.0.0.1"
            urls.append(f"http://{host}:{server.port}/g{number}.json")
        start_worker(pool="threads", concurrency=4)
        start_worker(pool="threads", concurrency=4)
        job, finished = run_import(token, urls, timeout=180)
        assert finished, (imports.outcome_counts(job), arrivals)
    assert len(arrivals) == 8
    spaced = gaps(sorted(arrivals))
    assert min(spaced) >= 0.7, spaced


def _jsonrpc_error(_: Any) -> Reply:
    """An A2A endpoint that knows no task: every call is answered with TaskNotFoundError (the
    server has read the body already; the id is not echoed, which only fails a shape check)."""
    error = {"code": -32001, "message": "task not found"}
    return Reply(body=json.dumps({"jsonrpc": "2.0", "id": None, "error": error}).encode())


@pytest.mark.celery_worker
def test_two_accounts_cards_of_thousands_of_interfaces_cost_their_host_little(
    fresh_gate: None,
    start_worker: Any,
    loopback_allowed: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two accounts each register a card declaring 2,000 interfaces on one host (one address,
    each account's own port: its own origin, which it proved, as a probe needs since issue 44)
    and ask for its live checks, through a real worker: the host receives a few requests, a gap
    apart, not the thousands it did (2,000 interfaces gave 8,000 requests)."""
    from contextlib import ExitStack

    from rest_framework.authtoken.models import Token
    from rest_framework.test import APIClient

    import tests.workers
    from cards.models import Agent
    from tests.factories import minimal_card
    from tests.publishers.granted import grant
    from tests.workers import worker_env

    monkeypatch.setattr(
        tests.workers,
        "worker_env",
        lambda url: {
            **worker_env(url),
            "REGISTRY_DESTINATION_MIN_GAP_SECONDS": "0.5",
            "REGISTRY_DESTINATION_MAX_WAIT_SECONDS": "30",
            "REGISTRY_LIVE_PROBE_COOLDOWN_SECONDS": "0",
        },
    )
    arrivals: list[float] = []
    with ExitStack() as hosts:
        clients = []
        for name in ("alice", "bob"):
            host = hosts.enter_context(running_server())  # 127.0.0.1, a port of its own
            original = host.httpd.RequestHandlerClass.do_GET

            def counted(handler: Any, original: Any = original) -> None:
                arrivals.append(time.monotonic())
                original(handler)

            host.httpd.RequestHandlerClass.do_GET = counted  # type: ignore[method-assign]
            interfaces = [
                {
                    "url": host.url(f"/a2a/{n}"),
                    "protocolBinding": "JSONRPC",
                    "protocolVersion": "1.0",
                }
                for n in range(2000)
            ]
            for n in range(2000):
                host.routes[f"/a2a/{n}"] = _jsonrpc_error
            user = get_user_model().objects.create_user(username=name)
            grant(user, host.origin)  # each proved its own origin (tests/publishers/granted.py)
            client = APIClient()
            client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
            body = json.dumps(minimal_card(name=name, supportedInterfaces=interfaces)).encode()
            clients.append((client, host.serve(f"/{name}.json", body)))
        start_worker(pool="threads", concurrency=4, live=True)
        ids = []
        for client, url in clients:
            answer = client.post("/api/v1/agents", {"url": url}, format="json")
            assert answer.status_code == 202, answer.content
            ids.append(answer.json()["id"])

        def crawled() -> bool:
            return Agent.objects.filter(pk__in=ids, latest_snapshot__isnull=False).count() == 2

        assert wait_for(crawled, timeout=120)
        asked = time.monotonic()
        for (client, _), agent_id in zip(clients, ids, strict=True):
            assert client.post(f"/api/v1/agents/{agent_id}/probe").status_code == 202

        def checked() -> bool:
            rows = Agent.objects.filter(pk__in=ids).values_list("live", flat=True)
            return all((live or {}).get("checked_at") for live in rows)

        assert wait_for(checked, timeout=180)
        probed = [t for t in arrivals if t >= asked]
    # Each probe checks the one distinct interface (origin, binding and version): a handful of
    # requests, and every request a gap after the one before, whichever account caused it.
    # One JSON-RPC 1.0 interface checked an agent: 5 requests (get, cancel, an unknown method, a
    # body that is not JSON, an unsupported version).
    assert len(probed) == 2 * 5, len(probed)
    assert len(arrivals) <= 20, len(arrivals)
    assert min(gaps(sorted(arrivals))) >= 0.3, gaps(sorted(arrivals))
    for agent_id in ids:
        live = Agent.objects.get(pk=agent_id).live
        skipped = [c for c in live["checks"] if c["outcome"] == "skip"]
        assert any("1,999" in c["detail"] or "1999" in c["detail"] for c in skipped), skipped
