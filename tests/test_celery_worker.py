"""End to end through Redis and a real Celery worker process: submit, crawl, search."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings as django_settings
from rest_framework.test import APIClient

from cards.models import Agent
from tests.factories import minimal_card
from tests.support import CardServer

ROOT = Path(__file__).resolve().parents[1]


def redis_url() -> str:
    return os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/15"


def redis_available(url: str) -> bool:
    import redis

    try:
        return bool(redis.Redis.from_url(url, socket_connect_timeout=1).ping())
    except redis.RedisError:
        return False


@pytest.fixture
def celery_worker(
    transactional_db: None, settings: Any, tmp_path: Path
) -> Iterator[subprocess.Popen[bytes]]:
    url = redis_url()
    if not redis_available(url):
        pytest.skip(f"Redis is not reachable at {url}; `make test` starts it")
    import redis

    redis.Redis.from_url(url).flushdb()
    database = django_settings.DATABASES["default"]
    env = {
        **os.environ,
        "DATABASE_URL": (
            f"postgres://{database['USER']}@{database['HOST']}:{database['PORT']}/{database['NAME']}"
        ),
        "REDIS_URL": url,
        "CELERY_TASK_ALWAYS_EAGER": "false",
        "DJANGO_SECRET_KEY": "test-only-secret",
        "REGISTRY_FETCH_ALLOW_HTTP": "true",
        "REGISTRY_FETCH_ALLOWED_NETWORKS": "127.0.0.0/8,::1/128",
        "REGISTRY_CRAWL_RETRY_BASE_SECONDS": "0.5",
    }
    worker = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "registry",
            "worker",
            "--pool=solo",
            "--loglevel=INFO",
            "--without-heartbeat",
            "--without-gossip",
            "--without-mingle",
        ],
        cwd=ROOT,
        env=env,
        stdout=(tmp_path / "worker.log").open("wb"),
        stderr=subprocess.STDOUT,
    )
    from registry.celery import app

    previous = (app.conf.task_always_eager, app.conf.broker_url)
    app.conf.task_always_eager = False
    app.conf.broker_url = url
    settings.CELERY_TASK_ALWAYS_EAGER = False
    try:
        yield worker
    finally:
        app.conf.task_always_eager, app.conf.broker_url = previous
        worker.terminate()
        try:
            worker.wait(timeout=10)
        except subprocess.TimeoutExpired:
            worker.kill()


@pytest.mark.celery_worker
def test_a_submission_is_crawled_by_a_real_worker_and_found_by_search(
    celery_worker: subprocess.Popen[bytes],
    token: str,
    card_server: CardServer,
    loopback_allowed: None,
) -> None:
    card_server.serve(
        "/.well-known/agent-card.json",
        json.dumps(
            minimal_card(
                name="Queued agent",
                skills=[
                    {"id": "queue", "name": "Q", "description": "d", "tags": ["through-the-broker"]}
                ],
            )
        ).encode(),
    )
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    response = client.post("/api/v1/agents", {"url": card_server.origin}, format="json")
    assert response.status_code == 202
    agent_id = response.json()["id"]
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        agent = Agent.objects.get(pk=agent_id)
        if agent.status != "pending":
            break
        if celery_worker.poll() is not None:
            pytest.fail("the worker exited early; see worker.log in the test's tmp_path")
        time.sleep(0.2)
    assert agent.status == "ok", agent.last_error
    found = client.get("/api/v1/agents", {"tag": "through-the-broker"}).json()["results"]
    assert [row["id"] for row in found] == [agent_id]
    assert card_server.hits("/.well-known/agent-card.json") == 1


@pytest.mark.celery_worker
def test_a_transient_failure_is_retried_by_the_worker_until_it_succeeds(
    celery_worker: subprocess.Popen[bytes], card_server: CardServer, loopback_allowed: None
) -> None:
    from cards.services import agent_submit
    from tests.support import Reply

    body = json.dumps(minimal_card(name="Second time lucky")).encode()
    calls: list[int] = []

    def flaky(handler: Any) -> Reply:
        calls.append(1)
        if len(calls) == 1:
            return Reply(status=503, body=b"busy", headers={"Retry-After": "1"})
        return Reply(body=body)

    card_server.routes["/flaky.json"] = flaky
    agent, created = agent_submit(url=card_server.url("/flaky.json"), user=None)
    assert created
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        agent.refresh_from_db()
        if agent.status == "ok":
            break
        time.sleep(0.2)
    assert agent.status == "ok", (agent.status, agent.last_error)
    assert agent.name == "Second time lucky"
    assert len(calls) == 2
