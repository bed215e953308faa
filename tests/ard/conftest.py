from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cards.crawling import card_ingest
from cards.models import Agent
from registry.http import FetchResult
from search.embedding import model, store

DEMO = Path(__file__).resolve().parents[2] / "cards" / "demo"


def card(name: str, description: str, skills: list[dict[str, Any]], **extra: Any) -> bytes:
    doc = {
        "name": name,
        "description": description,
        "version": "1.0.0",
        "supportedInterfaces": [
            {
                "url": "https://agent.example/a2a",
                "protocolBinding": "JSONRPC",
                "protocolVersion": "1.0",
            }
        ],
        "capabilities": {},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": skills,
        **extra,
    }
    return json.dumps(doc).encode()


@pytest.fixture
def ingest(db: None) -> Callable[[str, bytes], Agent]:
    def put(url: str, body: bytes) -> Agent:
        agent, _ = Agent.objects.get_or_create(url=url, defaults={"card_url": url})
        card_ingest(agent_id=agent.pk, result=FetchResult.local(url, body))
        # The crawl queues the embedding when its transaction commits, which a test
        # transaction never does: embed now, as the worker would.
        if model.available():
            store.embed_agents([agent.pk])
        return Agent.objects.get(pk=agent.pk)

    return put


@pytest.fixture
def demo(ingest: Callable[[str, bytes], Agent]) -> dict[str, Agent]:
    """The four demo agents, ingested the way ``make run`` does."""
    return {
        path.stem: ingest(
            f"https://{path.stem}.demo.example/.well-known/agent-card.json", path.read_bytes()
        )
        for path in sorted(DEMO.glob("*.json"))
    }
