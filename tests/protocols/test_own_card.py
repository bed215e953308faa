"""The registry's own card: served, signed, crawled from the live server, verified, valid, found."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
from a2a.client.card_resolver import A2ACardResolver

from cards.crawling import agent_crawl
from cards.models import Agent
from protocols.own_card import QUERY_MODE, RESULT_MODE
from protocols.services import own_card_submit

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_card_is_a_v1_card_a2a_sdk_reads(live_registry: str) -> None:
    async def resolve() -> Any:
        async with httpx.AsyncClient() as http:
            return await A2ACardResolver(http, live_registry).get_agent_card()

    card = asyncio.run(resolve())
    assert card.supported_interfaces[0].url == live_registry + "/a2a"
    assert {s.id for s in card.skills} == {"find-agents", "find-agents-accepting", "check-message"}
    assert len(card.signatures) == 1
    served = httpx.get(live_registry + "/.well-known/agent-card.json").json()
    assert set(served["schemas"]) == {"agentQuery", "agentQueryResult"}
    assert QUERY_MODE in served["defaultInputModes"] and RESULT_MODE in served["defaultOutputModes"]


def test_the_registry_ingests_its_own_card_verified_valid_and_findable(
    live_registry: str, loopback_allowed: None
) -> None:
    agent, created = own_card_submit(base_url=live_registry, enqueue=False)
    assert created
    agent_crawl(agent_id=agent.pk)
    agent = Agent.objects.get(pk=agent.pk)
    assert agent.status == Agent.Status.OK, agent.last_error
    assert agent.signature_status == "verified", agent.signature
    errors = [f for f in agent.findings if f["severity"] == "error"]
    assert errors == []
    found = httpx.get(
        live_registry + "/api/v1/agents", params={"schema": "agentQuery", "q": "registry"}
    ).json()
    assert [r["id"] for r in found["results"]] == [str(agent.pk)]
    accepting = httpx.get(
        live_registry + "/api/v1/schemas/agentQuery/agents", params={"direction": "input"}
    )
    assert str(agent.pk) in accepting.text


def test_the_card_has_an_etag_and_a_matching_if_none_match_is_a_304(live_registry: str) -> None:
    url = live_registry + "/.well-known/agent-card.json"
    first = httpx.get(url)
    etag = first.headers["ETag"]
    assert etag.startswith('"') and first.headers["Cache-Control"] == "public, max-age=300"
    assert httpx.get(url).headers["ETag"] == etag  # the same bytes each time
    again = httpx.get(url, headers={"If-None-Match": etag})
    assert again.status_code == 304 and again.content == b""
    assert again.headers["ETag"] == etag and again.headers["Cache-Control"]
    assert httpx.get(url, headers={"If-None-Match": '"other"'}).status_code == 200
