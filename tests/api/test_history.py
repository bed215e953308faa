from __future__ import annotations

import json
from typing import Any

import pytest
from rest_framework.test import APIClient

from cards import crawling
from cards.models import Agent
from tests.factories import minimal_card
from tests.support import CardServer

pytestmark = pytest.mark.django_db


def test_history_lists_one_snapshot_per_content_with_what_changed(
    client_anon: APIClient, card_server: CardServer, loopback_allowed: None
) -> None:
    first = minimal_card(version="1.0.0")
    url = card_server.serve("/h.json", json.dumps(first).encode())
    agent = Agent.objects.create(url=url, card_url=url)
    crawling.agent_crawl(agent_id=agent.pk)
    crawling.agent_crawl(agent_id=agent.pk)  # same content: no new snapshot
    second: dict[str, Any] = minimal_card(
        version="1.1.0",
        defaultInputModes=["text/plain", "application/json"],
        capabilities={"extensions": [{"uri": "https://ext.example.com/v1"}]},
        skills=[
            {"id": "echo", "name": "Echo", "description": "Repeats, louder.", "tags": ["echo"]},
            {"id": "sum", "name": "Sum", "description": "Adds.", "tags": ["math"]},
        ],
    )
    card_server.serve("/h.json", json.dumps(second).encode())
    crawling.agent_crawl(agent_id=agent.pk)
    rows = client_anon.get(f"/api/v1/agents/{agent.pk}/history").json()["results"]
    assert len(rows) == 2
    newest, oldest = rows
    assert oldest["changes"] == {"first": True}
    changes = newest["changes"]
    assert changes["version"] == {"from": "1.0.0", "to": "1.1.0"}
    assert changes["skills"] == {"added": ["sum"], "removed": [], "changed": ["echo"]}
    assert changes["modes"]["added"] == ["input application/json"]
    assert changes["extensions"] == {"added": ["https://ext.example.com/v1"], "removed": []}
    assert newest["counts"] == {"error": 0, "warning": 0, "info": 0}


def test_the_detail_shows_health_and_uptime(
    client_anon: APIClient, card_server: CardServer, loopback_allowed: None
) -> None:
    url = card_server.serve("/u.json", json.dumps(minimal_card()).encode())
    agent = Agent.objects.create(url=url, card_url=url)
    crawling.agent_crawl(agent_id=agent.pk)
    body = client_anon.get(f"/api/v1/agents/{agent.pk}").json()
    assert body["health"]["state"] == "healthy"
    assert body["health"]["uptime_7d"] == 1.0 and body["health"]["uptime_30d"] == 1.0
    listed = client_anon.get("/api/v1/agents", {"health": "healthy"}).json()["results"]
    assert [row["id"] for row in listed] == [str(agent.pk)]
    assert client_anon.get("/api/v1/agents", {"health": "poorly"}).status_code == 400
