"""The outcome of an agent's live checks travels with it: in A2A agentQueryResult entries (a2a-sdk
client), MCP search and get_agent results (official MCP client) and ARD entries and search
results (metadata, the ARD spec's member for registry data), all from the stored report."""

from __future__ import annotations

import asyncio
import datetime as dt
from typing import Any

import httpx
import jsonschema_rs
import pytest
from a2a.client.card_resolver import A2ACardResolver
from a2a.client.transports.jsonrpc import JsonRpcTransport
from a2a.types import a2a_pb2 as pb
from google.protobuf import json_format

from cards.models import Agent
from live import store
from protocols.own_card import AGENT_QUERY_RESULT
from tests.support import mcp_call

pytestmark = pytest.mark.django_db(transaction=True)

CHECKED = dt.datetime(2026, 3, 1, 12, 0, tzinfo=dt.UTC)
COUNTS = {"pass": 4, "warn": 0, "fail": 1, "skip": 0}


@pytest.fixture
def failing_agent(fight_agent: Agent) -> Agent:
    """The fight judge with a stored run in which one MUST check failed."""
    check = {
        "id": "CORE-GET-002", "title": "GetTask returns TaskNotFoundError for an unknown task id",
        "level": "MUST", "outcome": "fail", "detail": "answered HTTP 500",
        "interface": "https://agent.example/a2a", "skill": None, "exchange": None,
        "since": "2026-03-01T12:00:00Z",
    }  # fmt: skip
    report = {
        "checked_at": "2026-03-01T12:00:00Z", "outcome": "fail", "endpoint": "answers",
        "counts": COUNTS, "checks": [check], "messages": {"enabled": False},
        "failing_since": "2026-03-01T12:00:00Z",
    }  # fmt: skip
    store.record(fight_agent.pk, report, CHECKED)
    return Agent.objects.get(pk=fight_agent.pk)


def _query(base: str, text: str) -> dict[str, Any]:
    async def run() -> Any:
        async with httpx.AsyncClient() as http:
            card = await A2ACardResolver(http, base).get_agent_card()
            transport = JsonRpcTransport(http, card, card.supported_interfaces[0].url)
            message = {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": text}]}
            request = json_format.ParseDict({"message": message}, pb.SendMessageRequest())
            return json_format.MessageToDict(await transport.send_message(request))

    task = asyncio.run(run())["task"]
    data = task["artifacts"][0]["parts"][0]["data"]
    assert jsonschema_rs.validator_for(AGENT_QUERY_RESULT).is_valid(data), data
    return dict(data)


def test_an_agent_query_result_carries_the_live_outcome(
    live_registry: str, failing_agent: Agent
) -> None:
    [entry] = _query(live_registry, "fight judge")["agents"]
    assert entry["id"] == str(failing_agent.pk)
    assert entry["live"]["outcome"] == "fail"
    assert entry["live"]["checkedAt"] == "2026-03-01T12:00:00Z"
    # a2a-sdk reads every JSON number as a protobuf double.
    assert entry["live"]["counts"] == {k: float(v) for k, v in COUNTS.items()}


def test_an_agent_never_checked_says_so_in_an_agent_query_result(
    live_registry: str, fight_agent: Agent
) -> None:
    [entry] = _query(live_registry, "fight judge")["agents"]
    assert entry["live"]["outcome"] == "not-checked" and entry["live"]["checkedAt"] is None


def test_mcp_search_and_get_agent_carry_the_live_outcome(
    live_registry: str, failing_agent: Agent
) -> None:
    found = mcp_call(live_registry, "search_agents", {"text": "fight judge"})
    [row] = found.structuredContent["results"]
    assert row["live"] == {"outcome": "fail", "checked_at": "2026-03-01T12:00:00Z",
                           "counts": COUNTS}  # fmt: skip
    agent = mcp_call(live_registry, "get_agent", {"id": str(failing_agent.pk)})
    live = agent.structuredContent["live"]
    assert live["outcome"] == "fail" and live["failing_since"] == "2026-03-01T12:00:00Z"
    assert [c["id"] for c in live["checks"]] == ["CORE-GET-002"]


def test_ard_entries_and_search_results_carry_the_live_outcome_in_metadata(
    live_registry: str, failing_agent: Agent, fight_agent: Agent
) -> None:
    urn = failing_agent.ard_identifier
    assert urn
    entry = httpx.get(f"{live_registry}/ard/agents/{urn}").json()
    assert entry["metadata"]["liveOutcome"] == "fail"
    assert entry["metadata"]["liveCheckedAt"] == "2026-03-01T12:00:00Z"
    # ai-catalog metadata values are scalars.
    assert all(not isinstance(v, dict | list) for v in entry["metadata"].values())
    search = httpx.post(
        f"{live_registry}/ard/search",
        json={"query": {"text": "fight judge"}, "federation": "none"},
    ).json()
    [result] = [r for r in search["results"] if r["identifier"] == urn]
    assert result["metadata"]["liveOutcome"] == "fail"
    listed = httpx.get(f"{live_registry}/ard/agents").json()
    [item] = [r for r in listed["items"] if r["identifier"] == urn]
    assert item["metadata"]["liveOutcome"] == "fail"


def test_an_ard_entry_never_checked_says_not_checked(
    live_registry: str, fight_agent: Agent
) -> None:
    entry = httpx.get(f"{live_registry}/ard/agents/{fight_agent.ard_identifier}").json()
    assert entry["metadata"]["liveOutcome"] == "not-checked"
    assert entry["metadata"]["liveCheckedAt"] is None
