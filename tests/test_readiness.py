"""``/readyz`` follows what a node cannot serve without (issue 46, section 1).

Redis is made unreachable by pointing this process's broker URL at a port of its own that
refuses connections (a bound socket that never listens) or that accepts and never answers (a
listening socket nobody reads: Redis hung); the database by pointing the connection at a
refusing port. The machine's PostgreSQL and Redis are never stopped.
"""

from __future__ import annotations

import json
import logging
import socket
import time
from collections.abc import Iterator
from typing import Any

import pytest
from django.db import connection
from rest_framework.test import APIClient

from registry import health
from tests.metrics.scraping import Samples, scrape
from tests.workers import redis_available, redis_url

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def refusing_port() -> Iterator[int]:
    """A port on 127.0.0.1 bound by this test and not listening: connections are refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield sock.getsockname()[1]


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A port that accepts connections (the kernel's backlog) and never answers."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(16)
        yield sock.getsockname()[1]


@pytest.fixture(autouse=True)
def _fresh_transitions(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(health, "_transitions", health._Transitions())


@pytest.fixture
def redis_up(settings: Any) -> str:
    url = redis_url()
    if not redis_available(url):
        pytest.skip(f"Redis is not reachable at {url}")
    settings.CELERY_BROKER_URL = url
    return url


def _up(samples: Samples, dependency: str) -> float:
    key = ("registry_dependency_up", frozenset({("dependency", dependency)}))
    assert key in samples, f"no registry_dependency_up sample for {dependency}"
    return samples[key]


def _probe(client: APIClient) -> tuple[int, dict[str, Any], float]:
    started = time.monotonic()
    response = client.get("/readyz")
    took = time.monotonic() - started
    return response.status_code, json.loads(response.content), took


def test_ready_when_the_database_and_redis_answer(client_anon: APIClient, redis_up: str) -> None:
    status, body, _ = _probe(client_anon)
    assert status == 200, body
    assert body == {"status": "ready", "database": "ok", "broker": "ok"}
    samples = scrape(client_anon)
    assert _up(samples, "database") == 1.0
    assert _up(samples, "redis") == 1.0


def test_redis_refusing_is_degraded_not_unready(
    client_anon: APIClient,
    settings: Any,
    refusing_port: int,
    caplog: pytest.LogCaptureFixture,
) -> None:
    settings.CELERY_BROKER_URL = f"redis://127.0.0.1:{refusing_port}/0"
    caplog.set_level(logging.INFO)
    answers = [_probe(client_anon) for _ in range(5)]
    for status, body, took in answers:
        assert status == 200, body
        assert body["status"] == "degraded", body
        assert body["database"] == "ok"
        assert body["broker"].startswith("unreachable: "), body
        assert took < 3.0, took  # refused at once; the margin is for a loaded machine
    # One warning when Redis went away, none per probe, and never an ERROR.
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text
    warned = [r.getMessage() for r in caplog.records if r.name == "registry.health"]
    assert len(warned) == 1 and "redis unreachable" in warned[0], warned

    samples = scrape(client_anon)
    assert _up(samples, "database") == 1.0
    assert _up(samples, "redis") == 0.0


def test_redis_hung_answers_degraded_within_two_seconds(
    client_anon: APIClient, settings: Any, silent_port: int
) -> None:
    settings.CELERY_BROKER_URL = f"redis://127.0.0.1:{silent_port}/0"
    status, body, took = _probe(client_anon)
    assert status == 200, body
    assert body["status"] == "degraded"
    assert body["broker"] == "unreachable: TimeoutError", body
    # The check gives Redis 1 s to connect and 1 s to answer; the margins are for a loaded
    # machine (the suite runs beside itself), not for the probe or the scrape's 0.6 s.
    assert took < 3.0, took
    started = time.monotonic()
    samples = scrape(client_anon)
    assert time.monotonic() - started < 2.5
    assert _up(samples, "redis") == 0.0


def test_redis_back_is_ready_again_and_says_so_once(
    client_anon: APIClient,
    settings: Any,
    redis_up: str,
    refusing_port: int,
    caplog: pytest.LogCaptureFixture,
) -> None:
    settings.CELERY_BROKER_URL = f"redis://127.0.0.1:{refusing_port}/0"
    caplog.set_level(logging.INFO)
    assert _probe(client_anon)[1]["status"] == "degraded"
    settings.CELERY_BROKER_URL = redis_up
    assert _probe(client_anon)[1]["status"] == "ready"
    assert _probe(client_anon)[1]["status"] == "ready"
    warned = [r.getMessage() for r in caplog.records if r.name == "registry.health"]
    assert len(warned) == 2 and "reachable again" in warned[1], warned


@pytest.fixture
def database_unreachable(refusing_port: int) -> Iterator[None]:
    """This process's connection pointed at a port that refuses, then put back."""
    connection.close()
    saved = connection.settings_dict["PORT"]
    connection.settings_dict["PORT"] = refusing_port
    try:
        yield
    finally:
        connection.close()
        connection.settings_dict["PORT"] = saved


def test_the_database_unreachable_is_503_without_an_error_per_probe(
    client_anon: APIClient,
    redis_up: str,
    database_unreachable: None,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)
    for _ in range(3):
        response = client_anon.get("/readyz")
        assert response.status_code == 503, response.content
        assert response["Content-Type"] == "application/problem+json"
        body = response.json()
        assert body["type"] == "/problems/not-ready"
        assert body["status"] == 503
        assert body["database"] == "unreachable: OperationalError", body
        assert body["broker"] == "ok"
        assert body["detail"] == "database unreachable: OperationalError"
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text
    warned = [r.getMessage() for r in caplog.records if r.name == "registry.health"]
    assert len(warned) == 1 and "not ready" in warned[0], warned


def test_the_gauge_says_the_database_is_down(
    client_anon: APIClient, redis_up: str, database_unreachable: None
) -> None:
    """The scrape's other collectors read the database too: they are left out, this is not."""
    samples = scrape(client_anon)
    assert _up(samples, "database") == 0.0
    assert _up(samples, "redis") == 1.0


def test_no_redis_configured_is_ready_without_a_redis_sample(
    client_anon: APIClient, settings: Any
) -> None:
    settings.CELERY_BROKER_URL = None
    settings.REDIS_URL = None
    status, body, _ = _probe(client_anon)
    assert status == 200
    assert body == {"status": "ready", "database": "ok", "broker": "not configured"}
    samples = scrape(client_anon)
    assert _up(samples, "database") == 1.0
    assert ("registry_dependency_up", frozenset({("dependency", "redis")})) not in samples
