"""A crawl someone asked for runs ahead of the periodic sweep's backlog (real worker, Redis)."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from rest_framework.test import APIClient

from cards import queue, services
from cards.models import Agent
from tests.factories import minimal_card
from tests.support import CardServer, Reply, running_server

BACKLOG = 150


@pytest.mark.celery_worker
def test_a_submission_overtakes_a_backlog_of_periodic_crawls(
    start_worker: Callable[..., subprocess.Popen[bytes]],
    token: str,
    card_server: CardServer,
    loopback_allowed: None,
    tmp_path: Path,
) -> None:
    body = json.dumps(minimal_card(name="Periodic")).encode()

    def slow(request: Any) -> Reply:
        time.sleep(0.05)  # 150 periodic crawls: at least 7.5 s of work for one worker
        return Reply(body=body)

    for index in range(BACKLOG):
        card_server.routes[f"/periodic/{index}.json"] = slow
    periodic = [
        Agent.objects.create(url=card_server.url(f"/periodic/{index}.json"))
        for index in range(BACKLOG)
    ]
    for agent in periodic:  # what the sweep queues: the low priority
        assert services.enqueue_crawl(agent.pk, priority=queue.PERIODIC)

    with running_server("127.0.0.2") as other:
        other.serve("/.well-known/agent-card.json", json.dumps(minimal_card(name="Asked")).encode())
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
        response = client.post("/api/v1/agents", {"url": other.origin}, format="json")
        assert response.status_code == 202
        submitted = response.json()["id"]

        worker = start_worker()
        # The clock starts when the worker is ready: its start-up (seconds on a loaded machine)
        # is not time spent behind the backlog.
        log = tmp_path / "worker-0.log"
        booted = time.monotonic()
        while b" ready." not in log.read_bytes() and time.monotonic() - booted < 120:
            assert worker.poll() is None, "the worker exited early"
            time.sleep(0.1)
        started = time.monotonic()
        while time.monotonic() - started < 30:
            if Agent.objects.get(pk=submitted).status != "pending":
                break
            assert worker.poll() is None, "the worker exited early"
            time.sleep(0.1)
        waited = time.monotonic() - started
    assert Agent.objects.get(pk=submitted).status == "ok"
    assert waited < 5, f"the submitted agent waited {waited:.1f} s behind the backlog"
    done = Agent.objects.filter(pk__in=[a.pk for a in periodic]).exclude(status="pending").count()
    assert done < BACKLOG // 2, "the backlog was mostly done first: no priority was applied"
