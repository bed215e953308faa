"""The registry's own series move where the work is done, read back through /metrics with
Prometheus' text parser: a real crawl of a card on a loopback server, a search on each door,
a live check of a real agent, a request refused by a limit, a budget spent, an import, and the
gauges read at scrape time (the crawl schedule's lag, the embedding backlog, the snapshot age).

Counters are compared before and after (the process's registry lives for the whole run)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import httpx
import pytest
from django.conf import settings as django_settings
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from cards.models import Agent
from live import runner
from schemas_app import budget
from search.embedding import pending
from tests.factories import agent_from_card, minimal_card
from tests.live.agents import handmade_agent
from tests.metrics.scraping import Samples, parse, scrape, value, with_name
from tests.support import CardServer, serving_asgi

pytestmark = pytest.mark.django_db

MCP_HEADERS = {"accept": "application/json, text/event-stream"}


@pytest.fixture
def http() -> Client:
    return Client(HTTP_HOST="127.0.0.1")


def moved(http: Client, act: Callable[[], Any]) -> tuple[Samples, Samples]:
    """The samples before and after ``act``."""
    before = scrape(http)
    act()
    return before, scrape(http)


def delta(before: Samples, after: Samples, name: str, **labels: str) -> float:
    return value(after, name, **labels) - value(before, name, **labels)


def weather_card(name: str = "Weatherly") -> bytes:
    card = minimal_card(
        name=name,
        description="Forecasts the weather for a city.",
        skills=[{"id": "forecast", "name": "Forecast", "description": "Weather.", "tags": ["wx"]}],
    )
    return json.dumps(card).encode()


def test_a_real_crawl_is_counted_by_outcome_and_timed(
    http: Client,
    client_auth: APIClient,
    card_server: CardServer,
    loopback_allowed: None,
    django_capture_on_commit_callbacks: Any,
) -> None:
    card_server.serve("/.well-known/agent-card.json", weather_card())

    def submit() -> None:
        with django_capture_on_commit_callbacks(execute=True):
            response = client_auth.post(
                "/api/v1/agents", {"url": card_server.origin}, format="json"
            )
        assert response.status_code == 202, response.content
        assert Agent.objects.get(pk=response.json()["id"]).status == "ok"

    before, after = moved(http, submit)
    assert delta(before, after, "registry_crawls_total", outcome="stored") == 1
    assert delta(before, after, "registry_crawl_duration_seconds_count") == 1
    assert delta(before, after, "registry_crawl_duration_seconds_sum") > 0
    # django-prometheus's series around the same work: the request, the queries, the cache.
    assert delta(before, after, "django_db_execute_total", alias="default", vendor="postgresql")
    assert delta(before, after, "django_cache_get_total", backend="redis") > 0
    submitted = {"status": "202", "view": "agent-list", "method": "POST"}
    assert delta(
        before, after, "django_http_responses_total_by_status_view_method_total", **submitted
    )

    # A card that is gone: the same crawl path, counted under its own outcome.
    card_server.serve("/gone.json", b'{"error": "gone"}', status=404)
    agent = Agent.objects.create(url=card_server.url("/gone.json"))
    from cards import crawling

    before = scrape(http)
    assert crawling.agent_crawl(agent_id=agent.pk) == "error"
    after = scrape(http)
    assert delta(before, after, "registry_crawls_total", outcome="error") == 1
    assert delta(before, after, "registry_crawls_total", outcome="stored") == 0


def a2a_query(text: str) -> dict[str, Any]:
    part = {"data": {"text": text, "limit": 3}, "metadata": {"mimeType": QUERY_MODE}}
    message = {"messageId": "m-1", "role": "ROLE_USER", "parts": [part]}
    return {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}


QUERY_MODE = "application/json;schema=agentQuery"


def test_a_search_on_each_django_door_is_counted_under_its_door(http: Client) -> None:
    agent_from_card(json.loads(weather_card()))
    doors: dict[str, Callable[[], Any]] = {
        "rest": lambda: http.get("/api/v1/agents", {"q": "weather in porto"}),
        "catalogue": lambda: http.get("/", {"q": "weather in porto"}),
        "ard": lambda: http.post(
            "/ard/search", {"query": {"text": "weather in porto"}}, content_type="application/json"
        ),
        "a2a": lambda: http.post(
            "/a2a", a2a_query("weather in porto"), content_type="application/json"
        ),
    }
    for door, search in doors.items():
        before = scrape(http)
        response = search()
        assert response.status_code == 200, (door, response.content[:300])
        after = scrape(http)
        counted = {
            labels: after_value - value(before, "registry_searches_total", **dict(labels))
            for labels, after_value in with_name(after, "registry_searches_total").items()
        }
        moved_doors = {dict(labels)["door"]: n for labels, n in counted.items() if n}
        assert moved_doors == {door: 1}, (door, moved_doors)
        assert delta(before, after, "registry_search_duration_seconds_count", door=door) == 1
        modes = {dict(labels)["mode"] for labels, n in counted.items() if n}
        assert modes <= {"semantic", "lexical"}
    # The change feed and a listing in the list order are not searches by need, but the list
    # is still a search (filters only): lexical.
    before = scrape(http)
    http.get("/api/v1/agents", {"tag": "wx", "mode": "lexical"})
    after = scrape(http)
    assert delta(before, after, "registry_searches_total", door="rest", mode="lexical") == 1


@pytest.mark.django_db(transaction=True)
def test_a_search_through_mcp_is_counted_as_the_mcp_door() -> None:
    agent_from_card(json.loads(weather_card()))
    with serving_asgi() as base, httpx.Client(base_url=base, timeout=30) as client:
        before = parse(client.get("/metrics").text)
        call = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "search_agents", "arguments": {"text": "weather in porto"}},
        }
        answer = client.post("/mcp", json=call, headers=MCP_HEADERS)
        assert answer.status_code == 200, answer.text[:300]
        assert not answer.json()["result"].get("isError"), answer.text[:300]
        after = parse(client.get("/metrics").text)
    assert delta(before, after, "registry_search_duration_seconds_count", door="mcp") == 1
    assert (
        sum(
            after_value - value(before, "registry_searches_total", **dict(labels))
            for labels, after_value in with_name(after, "registry_searches_total").items()
            if dict(labels)["door"] == "mcp"
        )
        == 1
    )


def test_a_live_check_is_counted_by_check_id_and_outcome(
    http: Client, user: Any, loopback_allowed: None, settings: Any
) -> None:
    settings.REGISTRY_LIVE_RUN_SECONDS = 12.0
    from cards import crawling

    with handmade_agent() as agent:
        row = Agent.objects.create(url=agent.card_url, card_url=agent.card_url, submitted_by=user)
        assert crawling.agent_crawl(agent_id=row.pk) == "stored"
        target = runner.target(row.pk)
        assert target is not None
        before = scrape(http)
        report = runner.check_agent(target)
        after = scrape(http)
    expected: dict[tuple[str, str], int] = {}
    for check in report["checks"]:
        key = (check["id"], check["outcome"])
        expected[key] = expected.get(key, 0) + 1
    assert len(expected) > 3
    for (check_id, outcome), count in expected.items():
        labels = {"check": check_id, "outcome": outcome}
        assert delta(before, after, "registry_live_checks_total", **labels) == count, labels
    assert delta(before, after, "registry_live_runs_total", outcome=report["outcome"]) == 1


def test_a_refused_request_is_counted_under_its_limit(
    http: Client, settings: Any, client_auth: APIClient
) -> None:
    settings.REGISTRY_ANON_RATE = "2/minute"
    before = scrape(http)
    statuses = [http.get("/api/v1/tags").status_code for _ in range(4)]
    after = scrape(http)  # scrapes are never limited
    assert statuses == [200, 200, 429, 429]
    assert delta(before, after, "registry_limiter_refusals_total", limit="anon") == 2

    settings.REGISTRY_SUBMISSION_RATE = "1/hour"
    before = scrape(http)
    first = client_auth.post("/api/v1/agents", {"url": "https://one.limits.example"}, format="json")
    second = client_auth.post(
        "/api/v1/agents", {"url": "https://two.limits.example"}, format="json"
    )
    after = scrape(http)
    assert first.status_code == 202 and second.status_code == 429
    assert delta(before, after, "registry_limiter_refusals_total", limit="submissions") == 1
    assert delta(before, after, "registry_limiter_refusals_total", limit="anon") == 0


def test_a_spent_schema_budget_is_counted_once(http: Client) -> None:
    before = scrape(http)
    with budget.scope(0.0):
        for _ in range(3):  # every later validation of the request is refused too
            with pytest.raises(budget.BudgetExhausted):
                budget.run(lambda: True)
    after = scrape(http)
    assert delta(before, after, "registry_schema_budgets_exhausted_total", reason="cpu") == 1


def test_an_import_is_counted_by_job_and_item_outcome(
    http: Client,
    client_auth: APIClient,
    card_server: CardServer,
    loopback_allowed: None,
    django_capture_on_commit_callbacks: Any,
) -> None:
    good = card_server.serve("/one.json", weather_card("Imported"))
    urls = [good, card_server.url("/missing.json"), "ftp://nope.example"]
    before = scrape(http)
    with django_capture_on_commit_callbacks(execute=True):
        created = client_auth.post("/api/v1/imports", {"urls": urls}, format="json")
    assert created.status_code == 202
    after = scrape(http)
    assert delta(before, after, "registry_import_jobs_total", outcome="completed") == 1
    for outcome in ("crawled", "failed", "invalid"):
        assert delta(before, after, "registry_import_items_total", outcome=outcome) == 1, outcome
    listing = card_server.serve("/list.json", b'{"nothing": true}')
    before = scrape(http)
    with django_capture_on_commit_callbacks(execute=True):
        client_auth.post("/api/v1/imports", {"url": listing}, format="json")
    after = scrape(http)
    assert delta(before, after, "registry_import_jobs_total", outcome="failed") == 1


# Committed rows: the scrape reads in a thread of its own, on its own connection.
@pytest.mark.django_db(transaction=True)
def test_the_crawl_schedule_lag_is_read_when_scraped(http: Client) -> None:
    Agent.objects.create(
        url="https://later.lag.example", next_crawl_at=timezone.now() + timedelta(hours=1)
    )
    assert value(scrape(http), "registry_crawl_schedule_lag_seconds") == 0
    Agent.objects.create(
        url="https://due.lag.example", next_crawl_at=timezone.now() - timedelta(seconds=90)
    )
    Agent.objects.create(
        url="https://late.lag.example", next_crawl_at=timezone.now() - timedelta(seconds=300)
    )
    lag = value(scrape(http), "registry_crawl_schedule_lag_seconds")
    assert 300 <= lag < 360


def test_the_embedding_backlog_is_read_from_redis_when_scraped(http: Client) -> None:
    if not django_settings.REDIS_URL:
        pytest.skip("no REDIS_URL: the embedding backlog lives in Redis")
    import redis

    client = redis.Redis.from_url(django_settings.REDIS_URL)
    client.delete(pending.KEY)
    try:
        idle = scrape(http)
        assert value(idle, "registry_embedding_pending_agents") == 0
        assert value(idle, "registry_embedding_oldest_pending_seconds") == 0
        client.zadd(pending.KEY, {"agent-a": time.time() - 120, "agent-b": time.time()})
        waiting = scrape(http)
        assert value(waiting, "registry_embedding_pending_agents") == 2
        assert 120 <= value(waiting, "registry_embedding_oldest_pending_seconds") < 180
    finally:
        client.delete(pending.KEY)


def test_the_vector_snapshot_age_is_the_served_snapshots(
    http: Client, settings: Any, tmp_path: Any
) -> None:
    from search.index import snapshot, vectors, writing

    settings.REGISTRY_EMBEDDING_DIR = tmp_path
    vectors.reset()
    vectors.index().refresh(force=True)  # no snapshot yet: everything from the database
    samples = scrape(http)
    assert value(samples, "registry_vector_snapshot_built_timestamp_seconds") == 0
    assert ("registry_vector_snapshot_age_seconds", frozenset()) not in samples
    started = time.time()
    writing.save_snapshot()
    vectors.reset()
    vectors.index().refresh(force=True)
    samples = scrape(http)
    built = value(samples, "registry_vector_snapshot_built_timestamp_seconds")
    assert started - 1 <= built <= time.time()
    assert 0 <= value(samples, "registry_vector_snapshot_age_seconds") <= time.time() - started + 1
    assert snapshot.built_at("s12-345-1700000000123") == 1700000000.123
    assert snapshot.built_at("older") == 0.0
