"""The sweep's claim logic, health transitions, backoff and the politeness gate."""

from __future__ import annotations

import json
import threading
from datetime import timedelta
from typing import Any

import pytest
from celery.signals import task_prerun
from django.utils import timezone
from rest_framework.test import APIClient

from cards import crawling, health, politeness, scheduling, services
from cards.models import Agent, CrawlAttempt
from cards.tasks import sweep
from tests.factories import minimal_card
from tests.support import CardServer, Reply


def make_agents(n: int, *, due: bool = True, prefix: str = "a") -> list[Agent]:
    when = timezone.now() - timedelta(minutes=1) if due else timezone.now() + timedelta(hours=1)
    return [
        Agent.objects.create(url=f"https://{prefix}{i}.example.com/card.json", next_crawl_at=when)
        for i in range(n)
    ]


@pytest.mark.django_db(transaction=True)
def test_two_concurrent_sweeps_claim_disjoint_sets() -> None:
    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip("SKIP LOCKED needs PostgreSQL")
    make_agents(30)
    barrier = threading.Barrier(2)
    claimed: list[list[Any]] = []

    def claim() -> None:
        barrier.wait()
        try:
            claimed.append(scheduling.claim_due(limit=20))
        finally:
            connection.close()

    threads = [threading.Thread(target=claim) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    first, second = (set(ids) for ids in claimed)
    assert not first & second
    assert len(first) + len(second) == 30
    assert scheduling.claim_due(limit=20) == []  # every due row is leased now


@pytest.mark.django_db
def test_the_claim_skips_agents_not_due_and_takes_them_again_when_the_lease_expires() -> None:
    due = make_agents(3)
    make_agents(2, due=False, prefix="later")
    Agent.objects.create(url="https://never.example.com", next_crawl_at=None)
    assert set(scheduling.claim_due(limit=10)) == {a.pk for a in due}
    assert scheduling.claim_due(limit=10) == []
    later = timezone.now() + scheduling.LEASE + timedelta(seconds=1)
    assert set(scheduling.claim_due(limit=10, now=later)) == {a.pk for a in due}


@pytest.mark.django_db
def test_a_sweep_crawls_due_agents(card_server: CardServer, loopback_allowed: None) -> None:
    url = card_server.serve("/due.json", json.dumps(minimal_card(name="Due")).encode())
    agent = Agent.objects.create(url=url, card_url=url, next_crawl_at=timezone.now())
    assert sweep() == 1
    agent.refresh_from_db()
    assert agent.name == "Due" and agent.health == "healthy"
    assert agent.lease_until is None
    assert agent.next_crawl_at > timezone.now() + timedelta(hours=5)


@pytest.mark.django_db
def test_a_sweep_queues_due_agents_in_batches(
    card_server: CardServer, loopback_allowed: None, settings: Any
) -> None:
    """Five due agents, batches of two: three tasks (two batches and one alone), every agent
    crawled and its lease cleared."""
    settings.REGISTRY_CRAWL_BATCH = 2
    agents = []
    for n in range(5):
        url = card_server.serve(f"/due{n}.json", json.dumps(minimal_card(name=f"Due {n}")).encode())
        agents.append(Agent.objects.create(url=url, card_url=url, next_crawl_at=timezone.now()))
    ran: list[tuple[str, int]] = []

    def count(sender: Any = None, args: Any = None, **kwargs: Any) -> None:
        if sender.name.startswith("cards.crawl_agent"):
            ran.append((sender.name, len(args[0]) if sender.name == "cards.crawl_agents" else 1))

    task_prerun.connect(count)
    try:
        assert sweep() == 5
    finally:
        task_prerun.disconnect(count)
    assert sorted(ran) == [
        ("cards.crawl_agent", 1),
        ("cards.crawl_agents", 2),
        ("cards.crawl_agents", 2),
    ]
    for n, agent in enumerate(agents):
        agent.refresh_from_db()
        assert (agent.name, agent.status, agent.lease_until) == (f"Due {n}", "ok", None)


@pytest.mark.django_db
def test_health_moves_through_degraded_unreachable_and_back(
    card_server: CardServer, loopback_allowed: None, settings: Any
) -> None:
    settings.REGISTRY_UNREACHABLE_AFTER_FAILURES = 3
    state = {"fail": True}
    body = json.dumps(minimal_card()).encode()
    card_server.routes["/h.json"] = lambda h: (
        Reply(status=503, body=b"down") if state["fail"] else Reply(body=body)
    )
    agent = Agent.objects.create(
        url=card_server.url("/h.json"), card_url=card_server.url("/h.json")
    )
    seen = []
    delays = []
    for _ in range(3):
        with pytest.raises(services.TransientCrawlError):
            crawling.agent_crawl(agent_id=agent.pk)
        agent.refresh_from_db()
        seen.append(agent.health)
        delays.append((agent.next_crawl_at - timezone.now()).total_seconds())
    assert seen == ["degraded", "degraded", "unreachable"]
    assert delays[1] > delays[0] * 0.9  # backoff grows (with jitter)
    assert delays[2] > 23 * 3600  # unreachable: re-checked daily
    state["fail"] = False
    crawling.agent_crawl(agent_id=agent.pk)
    agent.refresh_from_db()
    assert agent.health == "healthy" and agent.consecutive_failures == 0
    attempts = list(CrawlAttempt.objects.filter(agent=agent).order_by("started_at"))
    assert [a.success for a in attempts] == [False, False, False, True]
    assert attempts[0].http_status == 503 and attempts[-1].bytes == len(body)
    assert health.uptime(agent, days=7) == 0.25


@pytest.mark.django_db
def test_retry_after_is_a_floor_for_the_next_crawl(
    card_server: CardServer, loopback_allowed: None
) -> None:
    url = card_server.serve("/slow.json", b"", status=429, headers={"Retry-After": "7200"})
    agent = Agent.objects.create(url=url, card_url=url)
    with pytest.raises(services.TransientCrawlError):
        crawling.agent_crawl(agent_id=agent.pk)
    agent.refresh_from_db()
    assert agent.next_crawl_at >= timezone.now() + timedelta(seconds=7190)


@pytest.mark.django_db
def test_an_agent_answering_404_for_a_week_is_gone_and_hidden(
    card_server: CardServer, loopback_allowed: None, client_anon: APIClient
) -> None:
    body = json.dumps(minimal_card(name="Vanishing")).encode()
    url = card_server.serve("/v.json", body)
    agent = Agent.objects.create(url=url, card_url=url)
    crawling.agent_crawl(agent_id=agent.pk)
    card_server.serve("/v.json", b"{}", status=404)
    crawling.agent_crawl(agent_id=agent.pk)
    agent.refresh_from_db()
    assert agent.health == "degraded" and agent.gone_since is not None
    Agent.objects.filter(pk=agent.pk).update(gone_since=timezone.now() - timedelta(days=8))
    crawling.agent_crawl(agent_id=agent.pk)
    agent.refresh_from_db()
    assert agent.health == "gone"
    assert client_anon.get("/api/v1/agents").json()["results"] == []
    gone = client_anon.get("/api/v1/agents", {"health": "gone"}).json()["results"]
    assert [row["name"] for row in gone] == ["Vanishing"]
    assert agent.name == "Vanishing"  # the last card is kept


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("max-age=3600", 3600.0),
        ("public, s-maxage=60, max-age=10", 60.0),
        ("no-store", 0.0),
        ("", None),
    ],
)
def test_cache_control_max_age_is_read(header: str, expected: float | None) -> None:
    assert health.max_age_of({"cache-control": header}) == expected


def test_the_next_crawl_respects_max_age_within_bounds() -> None:
    policy = health.HealthPolicy(
        interval=6 * 3600,
        min_interval=300,
        max_interval=7 * 86400,
        unreachable_after=5,
        gone_after=7 * 86400,
        backoff_base=300,
        backoff_cap=86400,
    )
    assert 270 <= health.next_interval(10, policy) <= 330  # never more often than 5 minutes
    assert 3240 <= health.next_interval(3600, policy) <= 3960
    assert 0.9 * 6 * 3600 <= health.next_interval(None, policy) <= 1.1 * 6 * 3600
    assert health.next_interval(10**9, policy) <= 1.1 * 7 * 86400


@pytest.mark.django_db
def test_old_attempts_are_pruned(db: None) -> None:
    agent = Agent.objects.create(url="https://p.example.com")
    now = timezone.now()
    for days in (1, 89, 91, 200):
        CrawlAttempt.objects.create(
            agent=agent,
            started_at=now - timedelta(days=days),
            duration_ms=1,
            outcome="stored",
            success=True,
        )
    assert scheduling.prune_attempts(older_than_days=90, now=now) == 2
    assert CrawlAttempt.objects.count() == 2


def test_a_busy_origin_makes_its_next_crawl_wait_but_not_other_origins(
    politeness_redis: Any,
) -> None:
    slow, fast = "https://slow.example.com", "https://fast.example.com"
    assert politeness.acquire(slow) == 0
    assert politeness.acquire(slow) > 0  # one in flight at the slow origin already
    assert politeness.acquire(fast) == 0  # another origin is not held up
    politeness.release(slow)
    assert politeness.acquire(slow) == 0


def test_a_minimum_gap_between_starts_is_shared(politeness_redis: Any, settings: Any) -> None:
    settings.REGISTRY_ORIGIN_CONCURRENCY = 5
    settings.REGISTRY_ORIGIN_MIN_GAP_SECONDS = 30
    origin = "https://gap.example.com"
    assert politeness.acquire(origin) == 0
    wait = politeness.acquire(origin)
    assert 25 < wait <= 30
    politeness.postpone("https://other.example.com", 120)
    assert politeness.acquire("https://other.example.com") > 100
