"""Dogfood: the registry's own A2A agent passes every live check the registry runs.

The registry is served live (uvicorn, 127.0.0.1), its own card is submitted by a token account
and crawled through the real crawl path, the owner turns message probes on over HTTP, and the
live checks run against the registry's own ``/a2a`` endpoint and card URL. Every check must
pass (no skip, no warning).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from rest_framework.test import APIClient

from cards.models import Agent
from live.runner import check_agent
from protocols.own_card import QUERY_MODE
from tests.publishers.granted import grant_endpoints
from tests.support import serving_asgi

pytestmark = pytest.mark.django_db(transaction=True)

# What must have run: the transport checks of a v1.0 JSON-RPC interface, the card's cache
# headers and, with probes on, one structured message per skill, its output and its progress.
EXPECTED = {
    "CORE-GET-002",
    "CORE-CANCEL-003",
    "REG-JSONRPC-METHOD",
    "REG-JSONRPC-PARSE",
    "VER-SERVER-002",
    "JSONRPC-ERR-001",
    "JSONRPC-ERR-003",
    "CARD-CACHE-001",
    "CARD-CACHE-002",
    "SCHEMAS-TASK",
    "SCHEMAS-INVALID",
    "SCHEMAS-OUTPUT",
    "PROGRESS-META",
}


def _not_passing(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for c in report["checks"] if c["outcome"] != "pass"]


@pytest.fixture
def live_registry(transactional_db: None) -> Iterator[str]:
    with serving_asgi() as base:
        yield base


@pytest.fixture
def own_agent(
    live_registry: str,
    loopback_allowed: None,
    client_auth: APIClient,
    token: str,
    django_capture_on_commit_callbacks: Any,
) -> Agent:
    """The registry's own card, submitted by an account and crawled; probes turned on by its
    owner through ``PATCH /api/v1/agents/{id}`` on the live server."""
    card_url = live_registry + "/.well-known/agent-card.json"
    with django_capture_on_commit_callbacks(execute=True):
        submitted = client_auth.post("/api/v1/agents", {"url": card_url}, format="json")
    assert submitted.status_code in (201, 202), submitted.content
    agent = Agent.objects.get(pk=submitted.json()["id"])
    assert agent.status == Agent.Status.OK, agent.last_error
    assert agent.card_url == card_url
    assert agent.signature_status == "verified", agent.signature
    grant_endpoints(agent)  # its owner proved the origin (issue 44; tests/publishers/granted.py)
    patched = httpx.patch(
        f"{live_registry}/api/v1/agents/{agent.pk}",
        json={"probe_messages": True},
        headers={"Authorization": f"Token {token}"},
    )
    assert patched.status_code == 200, patched.text
    agent.refresh_from_db()
    assert agent.probe_messages is True
    return agent


def test_the_registry_s_own_agent_passes_every_live_check(own_agent: Agent) -> None:
    report = check_agent(own_agent, force=True)

    failing = _not_passing(report)
    assert not failing, "\n".join(f"{c['id']} {c['outcome']}: {c['detail']}" for c in failing)
    assert {check["id"] for check in report["checks"]} == EXPECTED
    assert report["outcome"] == "pass" and report["endpoint"] == "answers"
    tasks = [c for c in report["checks"] if c["id"] == "SCHEMAS-TASK"]
    assert {c["skill"] for c in tasks} == {"find-agents", "find-agents-accepting", "check-message"}
    # agentQuery requires one of text, filters or payload (anyOf): the invalid payload leaves
    # out the one the valid payload had, and the registry refuses it.
    refused = [c for c in report["checks"] if c["id"] == "SCHEMAS-INVALID"]
    assert {c["skill"] for c in refused} == {c["skill"] for c in tasks}
    assert report["messages"]["sent"] == len(tasks) + len(refused)
    own_agent.refresh_from_db()
    assert own_agent.live_outcome == "pass"


def test_the_registry_answers_with_its_own_outcome(own_agent: Agent, live_registry: str) -> None:
    check_agent(own_agent, force=True)
    message = {
        "messageId": "dogfood-outcome",
        "role": "ROLE_USER",
        "parts": [{"data": {"filters": {"tag": ["registry"]}}, "mediaType": QUERY_MODE}],
    }
    answer = httpx.post(
        live_registry + "/a2a",
        json={"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}},
        headers={"A2A-Version": "1.0"},
    ).json()
    [entry] = answer["result"]["task"]["artifacts"][0]["parts"][0]["data"]["agents"]
    assert entry["id"] == str(own_agent.pk) and entry["live"]["outcome"] == "pass"


def test_a_bad_agent_query_is_refused_as_the_skipped_check_would_want(
    live_registry: str,
) -> None:
    """What SCHEMAS-INVALID cannot build for agentQuery (no top-level member to drop), sent by
    hand: a query with none of text, filters or payload is refused, not started."""
    message = {
        "messageId": "dogfood-invalid",
        "role": "ROLE_USER",
        "parts": [{"data": {"limit": 3}, "mediaType": QUERY_MODE}],
    }
    answer = httpx.post(
        live_registry + "/a2a",
        json={"jsonrpc": "2.0", "id": "x", "method": "SendMessage", "params": {"message": message}},
        headers={"A2A-Version": "1.0"},
    ).json()

    assert "result" not in answer
    assert answer["error"]["code"] == -32602
