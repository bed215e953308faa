"""End to end through Redis and a real Celery worker process: submit, crawl, search."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import pytest
from rest_framework.test import APIClient

from cards.models import Agent
from tests.factories import minimal_card
from tests.support import CardServer
from tests.workers import ROOT, wait_for, worker_env, worker_logs


def received(log: str, task: str) -> int:
    """How many times the worker logged receiving ``task`` (registry/logs/task_lines.py)."""
    return len(re.findall(rf"task {re.escape(task)}\[[^\]]+\] received", log))


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


@pytest.mark.celery_worker
def test_an_import_is_processed_by_real_workers(
    celery_worker: subprocess.Popen[bytes],
    token: str,
    card_server: CardServer,
    loopback_allowed: None,
) -> None:
    urls = [
        card_server.serve(f"/i{i}.json", json.dumps(minimal_card(name=f"Bulk {i}")).encode())
        for i in range(5)
    ]
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    job_id = client.post("/api/v1/imports", {"urls": urls}, format="json").json()["id"]

    def done() -> bool:
        return client.get(f"/api/v1/imports/{job_id}").json()["status"] == "completed"

    assert wait_for(done), client.get(f"/api/v1/imports/{job_id}").json()
    document = client.get(f"/api/v1/imports/{job_id}").json()
    assert document["counts"]["crawled"] == 5
    assert Agent.objects.filter(name__startswith="Bulk", status="ok").count() == 5


@pytest.mark.celery_worker
def test_a_crawl_killed_midway_is_redelivered_and_leaves_one_snapshot(
    start_worker: Callable[..., subprocess.Popen[bytes]],
    card_server: CardServer,
    loopback_allowed: None,
) -> None:
    import signal
    import threading

    from cards.models import Snapshot
    from cards.services import agent_submit
    from tests.support import Reply

    body = json.dumps(minimal_card(name="Survivor")).encode()
    first_request = threading.Event()
    release = threading.Event()
    calls: list[int] = []

    def slow_then_fine(handler: Any) -> Reply:
        calls.append(1)
        if len(calls) == 1:
            first_request.set()
            release.wait(20)  # hold the first crawl until its worker process is killed
        return Reply(body=body)

    card_server.routes["/survivor.json"] = slow_then_fine
    worker = start_worker(pool="prefork", concurrency=1)
    agent, _ = agent_submit(url=card_server.url("/survivor.json"), user=None)
    assert first_request.wait(60), "the worker never fetched the card"
    children = subprocess.run(
        ["pgrep", "-P", str(worker.pid)], capture_output=True, text=True
    ).stdout.split()
    assert children, "no pool process found"
    for pid in children:
        os.kill(int(pid), signal.SIGKILL)
    release.set()

    def crawled() -> bool:
        agent.refresh_from_db()
        return agent.status == "ok"

    assert wait_for(crawled), (agent.status, agent.last_error)
    assert agent.name == "Survivor"
    assert len(calls) >= 2
    assert Snapshot.objects.filter(agent=agent).count() == 1


SUBMIT_SCRIPT = """
import json, os, sys, django
django.setup()
from rest_framework.test import APIClient
client = APIClient()
client.credentials(HTTP_AUTHORIZATION="Token " + os.environ["TEST_TOKEN"])
response = client.post("/api/v1/agents", {"url": sys.argv[1]}, format="json")
print(json.dumps({"status": response.status_code, "body": response.json()}))
"""


@pytest.mark.django_db(transaction=True)
def test_a_submission_while_the_broker_is_down_is_kept_and_swept_later(
    token: str, card_server: CardServer, loopback_allowed: None
) -> None:
    from cards.tasks import sweep

    card_server.serve(
        "/.well-known/agent-card.json", json.dumps(minimal_card(name="Patient")).encode()
    )
    # A web process whose broker is down: nothing listens on port 1.
    env = {
        **worker_env("redis://127.0.0.1:1/0"),
        "TEST_TOKEN": token,
        "DJANGO_SETTINGS_MODULE": "registry.settings",
        "ALLOWED_HOSTS": "testserver",
    }
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", SUBMIT_SCRIPT, card_server.origin],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert time.monotonic() - started < 30
    reply = json.loads(done.stdout.strip().splitlines()[-1])
    assert reply["status"] == 202
    agent = Agent.objects.get(pk=reply["body"]["id"])
    assert agent.status == "pending" and agent.next_crawl_at is not None
    # The broker is back (tasks run in-process here): the sweep finds the pending agent.
    assert sweep() == 1
    agent.refresh_from_db()
    assert agent.status == "ok" and agent.name == "Patient"


@pytest.mark.celery_worker
def test_a_sweep_batch_crawls_each_agent_and_retries_one_alone(
    celery_worker: subprocess.Popen[bytes],
    card_server: CardServer,
    loopback_allowed: None,
    tmp_path: Any,
) -> None:
    """One ``cards.crawl_agents`` message for three agents and an id that is gone: each is
    crawled in turn; the one whose server fails for a moment is tried again on its own."""
    from cards.services import enqueue_crawls
    from tests.support import Reply

    calls: list[int] = []
    flaky_body = json.dumps(minimal_card(name="Flaky")).encode()

    def flaky(handler: Any) -> Reply:
        calls.append(1)
        if len(calls) == 1:
            return Reply(status=503, body=b"busy", headers={"Retry-After": "1"})
        return Reply(body=flaky_body)

    card_server.serve("/a.json", json.dumps(minimal_card(name="First")).encode())
    card_server.routes["/flaky.json"] = flaky
    card_server.serve("/c.json", json.dumps(minimal_card(name="Third")).encode())
    agents = [
        Agent.objects.create(url=card_server.url(path), card_url=card_server.url(path))
        for path in ("/a.json", "/flaky.json", "/c.json")
    ]
    gone = "00000000-0000-4000-8000-000000000000"
    assert enqueue_crawls([agents[0].pk, agents[1].pk, gone, agents[2].pk])

    def all_ok() -> bool:
        return all(Agent.objects.get(pk=a.pk).status == "ok" for a in agents)

    assert wait_for(all_ok, timeout=60), [Agent.objects.get(pk=a.pk).status for a in agents]
    assert [Agent.objects.get(pk=a.pk).name for a in agents] == ["First", "Flaky", "Third"]
    assert len(calls) == 2
    log = worker_logs(tmp_path)
    assert received(log, "cards.crawl_agents") >= 1, log
    # The flaky agent's second try is a task of its own, the batch is not run again.
    assert received(log, "cards.crawl_agent") >= 1, log
    assert card_server.hits("/a.json") == 1 and card_server.hits("/c.json") == 1


@pytest.mark.celery_worker
def test_a_batch_agent_whose_origin_is_busy_waits_its_turn_alone(
    celery_worker: subprocess.Popen[bytes],
    card_server: CardServer,
    loopback_allowed: None,
    tmp_path: Any,
) -> None:
    """Politeness holds per agent inside a batch: with the origin's next start a little ahead,
    each agent of the batch is queued again on its own and crawled once its turn comes."""
    import redis

    from cards import politeness
    from cards.discovery import origin_of
    from cards.services import enqueue_crawls
    from tests.workers import redis_url

    card_server.serve("/a.json", json.dumps(minimal_card(name="Later A")).encode())
    card_server.serve("/b.json", json.dumps(minimal_card(name="Later B")).encode())
    agents = [
        Agent.objects.create(url=card_server.url(path), card_url=card_server.url(path))
        for path in ("/a.json", "/b.json")
    ]
    origin = origin_of(card_server.url("/a.json"))
    assert wait_for(lambda: " ready." in worker_logs(tmp_path), timeout=60)
    redis.Redis.from_url(redis_url()).set(
        politeness._NEXT.format(origin=origin), time.time() + 1.5, ex=3
    )
    started = time.monotonic()
    assert enqueue_crawls([a.pk for a in agents])

    def all_ok() -> bool:
        return all(Agent.objects.get(pk=a.pk).status == "ok" for a in agents)

    assert wait_for(all_ok, timeout=60), [Agent.objects.get(pk=a.pk).status for a in agents]
    assert time.monotonic() - started >= 1.0  # neither was crawled before the origin's turn
    assert card_server.hits("/a.json") == 1 and card_server.hits("/b.json") == 1
    # Each was queued again on its own.
    assert received(worker_logs(tmp_path), "cards.crawl_agent") == 2
