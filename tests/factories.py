"""Build agents from card documents without a network round trip (for search and API tests)."""

from __future__ import annotations

import json
from typing import Any

from cards.crawling import card_ingest
from cards.models import Agent
from registry.http import FetchResult


def minimal_card(**overrides: Any) -> dict[str, Any]:
    card: dict[str, Any] = {
        "name": "Test agent",
        "description": "An agent for tests.",
        "supportedInterfaces": [
            {
                "url": "https://agent.example.com/a2a",
                "protocolBinding": "JSONRPC",
                "protocolVersion": "1.0",
            }
        ],
        "version": "1.0.0",
        "capabilities": {"streaming": False},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [
            {"id": "echo", "name": "Echo", "description": "Repeats the input.", "tags": ["echo"]}
        ],
    }
    card.update(overrides)
    return card


def agent_from_card(card: dict[str, Any] | bytes, *, url: str | None = None) -> Agent:
    body = card if isinstance(card, bytes) else json.dumps(card).encode()
    url = url or f"https://agents.example.com/{Agent.objects.count()}/agent-card.json"
    agent = Agent.objects.create(url=url, card_url=url)
    result = FetchResult.local(url, body)
    card_ingest(agent_id=agent.pk, result=result)
    agent.refresh_from_db()
    return agent
