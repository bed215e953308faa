"""Manifest discovery through a real Celery worker (issue 18 section 1, issue 39 item 11): a
transient failure at ``ard.json`` does not keep the card paths from being read in the same crawl,
and a later crawl finds the manifest. Submissions through the v1 API with a real account's
token."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from typing import Any

import pytest
from rest_framework.test import APIClient

from cards.models import Agent
from cards.services import enqueue_crawl
from tests.ard.conftest import card
from tests.support import CardServer, Reply
from tests.workers import wait_for

ARD = "/.well-known/ard.json"
CARD = "/.well-known/agent-card.json"


def _submit(token: str, url: str) -> str:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    response = client.post("/api/v1/agents", {"url": url}, format="json")
    assert response.status_code == 202, response.content
    return str(response.json()["id"])


@pytest.mark.celery_worker
def test_a_manifest_behind_a_503_is_found_on_a_later_crawl(
    celery_worker: subprocess.Popen[bytes],
    token: str,
    user: Any,
    card_server: CardServer,
    loopback_allowed: None,
) -> None:
    card_server.serve("/cards/alpha.json", card("Alpha", "d", []))
    manifest = json.dumps(
        {
            "specVersion": "1.0",
            "entries": [
                {
                    "identifier": "urn:air:127.0.0.1:a2a:alpha",
                    "displayName": "Alpha",
                    "type": "application/a2a-agent-card+json",
                    "url": card_server.url("/cards/alpha.json"),
                }
            ],
        }
    ).encode()
    answers = iter([Reply(status=503, body=b"", headers={"Retry-After": "1"})])
    card_server.routes[ARD] = lambda handler: next(answers, Reply(body=manifest))
    card_server.serve(CARD, card("Origin", "d", []))
    origin_id = _submit(token, card_server.origin)
    # The first crawl reads the origin's card at once: the agent is never left nameless.
    assert wait_for(lambda: Agent.objects.get(pk=origin_id).status != "pending", timeout=60)
    origin = Agent.objects.get(pk=origin_id)
    assert origin.status == "ok" and origin.name == "Origin" and origin.shape != "ard-manifest"
    assert card_server.hits(ARD) == 1 and card_server.hits(CARD) == 1
    # The later crawl (brought forward; queued here) finds the manifest.
    enqueue_crawl(origin_id)
    assert wait_for(
        lambda: Agent.objects.filter(ard_identifier="urn:air:127.0.0.1:a2a:alpha", status="ok")
        .exists(),
        timeout=60,
    ), "the later crawl did not find the manifest"  # fmt: skip
    origin = Agent.objects.get(pk=origin_id)
    assert origin.shape == "ard-manifest" and origin.status == "ok"
    assert Agent.objects.get(ard_identifier="urn:air:127.0.0.1:a2a:alpha").submitted_by == user
    assert card_server.hits(ARD) == 2


@pytest.mark.celery_worker
def test_an_ard_json_that_always_fails_still_lets_the_card_be_read(
    start_worker: Callable[..., subprocess.Popen[bytes]],
    token: str,
    card_server: CardServer,
    loopback_allowed: None,
    monkeypatch: Any,
) -> None:
    monkeypatch.setenv("REGISTRY_CRAWL_MAX_RETRIES", "1")
    start_worker()
    card_server.serve(ARD, b"broken", status=500, content_type="text/plain")
    card_server.serve(CARD, card("Steady", "d", []))
    agent_id = _submit(token, card_server.origin)
    assert wait_for(lambda: Agent.objects.get(pk=agent_id).status != "pending", timeout=60)
    agent = Agent.objects.get(pk=agent_id)
    assert agent.status == "ok" and agent.name == "Steady" and agent.shape != "ard-manifest"
    assert agent.moderation == Agent.Moderation.APPROVED
    assert card_server.hits(ARD) == 1 and card_server.hits(CARD) == 1  # one crawl, no retry
