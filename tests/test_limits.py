"""Per-client limits: anonymous reads, /validate by URL, trusted proxies, staff, failing open."""

from __future__ import annotations

import ipaddress
import json
import logging
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.test import override_settings
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from cards import politeness
from tests.factories import agent_from_card, minimal_card
from tests.support import CardServer

pytestmark = pytest.mark.django_db


def token_client(**user: Any) -> APIClient:
    account = get_user_model().objects.create_user(username=user.pop("username", "u"), **user)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=account).key}")
    return client


def test_anonymous_reads_are_limited_per_client_with_retry_after(settings: Any) -> None:
    settings.REGISTRY_ANON_RATE = "3/minute"
    agent = agent_from_card(minimal_card())
    client = APIClient()
    for path in ("/api/v1/agents", f"/api/v1/agents/{agent.pk}", "/"):
        assert client.get(path).status_code == 200
    limited = client.get(f"/badges/{agent.pk}.svg")  # any route: pages and badges too
    assert limited.status_code == 429
    assert limited["Content-Type"] == "application/problem+json"
    assert 1 <= int(limited["Retry-After"]) <= 60
    assert limited.json()["type"] == "/problems/rate-limited"
    # Another client address has its own budget.
    assert client.get("/api/v1/agents", REMOTE_ADDR="127.0.0.9").status_code == 200
    # Probes are never limited.
    assert client.get("/healthz").status_code == 200


def test_accounts_and_staff_are_not_held_to_the_anonymous_limit(settings: Any) -> None:
    settings.REGISTRY_ANON_RATE = "1/minute"
    member, staff = token_client(username="member"), token_client(username="s", is_staff=True)
    for _ in range(3):
        assert member.get("/api/v1/agents").status_code == 200
        assert staff.get("/api/v1/agents").status_code == 200
    forged = APIClient()
    forged.credentials(HTTP_AUTHORIZATION="Token not-a-real-token")
    assert forged.get("/").status_code == 200  # an unknown token is anonymous, and counted
    assert forged.get("/").status_code == 429


def test_forwarded_addresses_count_only_from_trusted_proxies(settings: Any) -> None:
    settings.REGISTRY_ANON_RATE = "1/minute"
    client = APIClient()
    # Not trusted: a spoofed header does not buy a new budget.
    assert client.get("/api/v1/tags", HTTP_X_FORWARDED_FOR="198.51.100.1").status_code == 200
    assert client.get("/api/v1/tags", HTTP_X_FORWARDED_FOR="198.51.100.2").status_code == 429
    cache.clear()
    settings.REGISTRY_TRUSTED_PROXIES = [ipaddress.ip_network("127.0.0.1/32")]
    for address in ("198.51.100.1", "198.51.100.2"):
        response = client.get("/api/v1/tags", HTTP_X_FORWARDED_FOR=f"{address}, 127.0.0.1")
        assert response.status_code == 200
    again = client.get("/api/v1/tags", HTTP_X_FORWARDED_FOR="198.51.100.1")
    assert again.status_code == 429


def test_validate_by_url_has_a_tight_anonymous_limit(
    settings: Any, card_server: CardServer, loopback_allowed: Any
) -> None:
    settings.REGISTRY_VALIDATE_URL_ANON_RATE = "1/hour"
    url = card_server.serve("/card.json", json.dumps(minimal_card()).encode())
    anonymous = APIClient()
    assert anonymous.post("/api/v1/validate", {"url": url}, format="json").status_code == 200
    second = anonymous.post("/api/v1/validate", {"url": url}, format="json")
    assert second.status_code == 429 and int(second["Retry-After"]) > 0
    # Inline cards cost no fetch and are not limited by it; an account is not limited by it.
    inline = anonymous.post("/api/v1/validate", {"card": minimal_card()}, format="json")
    assert inline.status_code == 200
    member = token_client(username="v")
    for _ in range(2):
        assert member.post("/api/v1/validate", {"url": url}, format="json").status_code == 200


def test_validate_by_url_takes_a_politeness_slot_of_the_target_origin(
    settings: Any, card_server: CardServer, loopback_allowed: Any
) -> None:
    settings.CELERY_TASK_ALWAYS_EAGER = False  # politeness is shared through Redis
    settings.REGISTRY_ORIGIN_CONCURRENCY = 1
    settings.REGISTRY_ORIGIN_MIN_GAP_SECONDS = 0
    politeness._redis.cache_clear()
    try:
        url = card_server.serve("/card.json", json.dumps(minimal_card()).encode())
        member = token_client(username="p")
        origin = card_server.origin
        politeness.release(origin)
        assert politeness.acquire(origin) == 0  # a crawl holds the origin's only slot
        busy = member.post("/api/v1/validate", {"url": url}, format="json")
        assert busy.status_code == 429
        assert busy.json()["type"] == "/problems/origin-busy" and busy["Retry-After"]
        politeness.release(origin)
        assert member.post("/api/v1/validate", {"url": url}, format="json").status_code == 200
        assert politeness.acquire(origin) == 0  # the validation gave its slot back
        politeness.release(origin)
    finally:
        politeness._redis.cache_clear()


def test_limits_fail_open_when_the_cache_is_down(
    settings: Any, caplog: pytest.LogCaptureFixture
) -> None:
    settings.REGISTRY_ANON_RATE = "1/minute"
    down = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": "redis://127.0.0.1:1/0",
        }
    }
    with override_settings(CACHES=down), caplog.at_level(logging.WARNING):
        client = APIClient()
        for _ in range(3):
            assert client.get("/api/v1/tags").status_code == 200
    assert "rate limit anon not applied: the cache is unreachable" in caplog.text


def test_busy_clients_are_counted_in_batches_and_stopped_at_their_rate(settings: Any) -> None:
    """A client well under a large rate costs one Redis round trip per batch of requests, and
    is still refused once the shared count passes the rate."""
    from registry import limits
    from registry.rates import Rate

    rate = Rate.parse("640/minute")
    assert rate is not None and limits._batch(rate) == 16
    window = int(limits.clock() // 60)
    key = f"limit:anon:198.51.100.7:{window}"
    assert limits.hit("anon", "198.51.100.7", rate) == 0.0  # the first hit is sent at once
    assert cache.get(key) == 1
    for _ in range(15):
        assert limits.hit("anon", "198.51.100.7", rate) == 0.0
    assert cache.get(key) == 1  # 15 hits held locally ...
    limits.hit("anon", "198.51.100.7", rate)
    assert cache.get(key) == 17  # ... and sent with the 16th
    # Another process (simulated: the shared count moves on) brings the client to its limit.
    cache.incr(key, 620)
    waits = [limits.hit("anon", "198.51.100.7", rate) for _ in range(40)]
    # This process learns it with its next batch at the latest, then refuses every request.
    assert all(wait > 0 for wait in waits[16:])
    assert cache.get(key) <= 637 + 16
