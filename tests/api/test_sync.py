"""Incremental sync for mirrors: ``GET /api/v1/agents?updated_since=``."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from cards import moderation
from tests.factories import agent_from_card, minimal_card

pytestmark = pytest.mark.django_db


def sync(client: APIClient, since: Any, **params: Any) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    response = client.get("/api/v1/agents", {"updated_since": since.isoformat(), **params})
    while True:
        assert response.status_code == 200, response.content
        rows += response.json()["results"]
        if response.json()["next"] is None:
            return rows
        response = client.get(response.json()["next"])


def test_a_mirror_sees_changes_in_order_and_removals_as_tombstones(
    client_anon: APIClient, user: Any
) -> None:
    start = timezone.now() - timedelta(seconds=1)
    agents = [agent_from_card(minimal_card(name=f"Sync {i}")) for i in range(5)]
    first = sync(client_anon, start, limit=2)
    assert [row["name"] for row in first] == [f"Sync {i}" for i in range(5)]

    later = timezone.now()
    moderation.agent_delete(agent=agents[1], actor=user)
    moderation.agent_moderate(agent=agents[3], state="hidden", actor=user, reason="spam")
    changed = sync(client_anon, later)
    assert changed == [
        {"id": str(agents[1].pk), "removed": True},
        {"id": str(agents[3].pk), "removed": True},
    ]


def test_updated_since_is_checked(client_anon: APIClient) -> None:
    bad = client_anon.get("/api/v1/agents", {"updated_since": "yesterday"})
    assert bad.status_code == 400
    assert bad.json()["errors"][0]["pointer"] == "#/updated_since"


def test_a_filtered_feed_shows_agents_outside_the_filter_as_removed(client_anon: APIClient) -> None:
    start = timezone.now() - timedelta(seconds=1)
    echo = agent_from_card(minimal_card(name="Echoes"))  # its skill is tagged "echo"
    other = agent_from_card(
        minimal_card(
            name="Other", skills=[{"id": "s", "name": "S", "description": "d", "tags": ["x"]}]
        )
    )
    rows = sync(client_anon, start, tag="echo")
    assert rows[0]["id"] == str(echo.pk) and rows[0]["name"] == "Echoes"
    assert rows[1] == {"id": str(other.pk), "removed": True}


def test_unknown_parameters_are_refused(client_anon: APIClient) -> None:
    response = client_anon.get("/api/v1/agents", {"tga": "translation"})
    assert response.status_code == 400
    assert response.headers["Content-Type"] == "application/problem+json"
    assert "tga" in response.json()["detail"]
