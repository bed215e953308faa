"""Search SQL compiled once per shape: every request still gets its own values and viewer."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from cards.models import Agent
from cards.reads import compiled
from tests.factories import agent_from_card, minimal_card

pytestmark = pytest.mark.django_db


def names(response: Any) -> set[str]:
    assert response.status_code == 200, response.content
    return {row["name"] for row in response.json()["results"]}


def card(name: str, tag: str, schema: str, provider: str) -> dict[str, Any]:
    return minimal_card(
        name=name,
        provider={"organization": provider, "url": "https://p.example"},
        defaultInputModes=[f"application/json;schema={schema}"],
        skills=[{"id": "s", "name": f"{name} skill", "description": "d", "tags": [tag]}],
    )


def test_one_shape_many_values(client_anon: APIClient) -> None:
    agent_from_card(card("Alpha", "red", "One", "Acme"))
    agent_from_card(card("Beta", "blue", "Two", "Globex"))
    for _ in range(2):  # the second round runs from the compiled cache
        assert names(client_anon.get("/api/v1/agents", {"tag": "red"})) == {"Alpha"}
        assert names(client_anon.get("/api/v1/agents", {"tag": "BLUE"})) == {"Beta"}
        assert names(client_anon.get("/api/v1/agents", {"schema": "Two"})) == {"Beta"}
        mode = "application/json;schema=One"
        assert names(client_anon.get("/api/v1/agents", {"input_mode": mode})) == {"Alpha"}
        assert names(client_anon.get("/api/v1/agents", {"provider": "globex"})) == {"Beta"}
        assert names(client_anon.get("/api/v1/agents", {"skill": "alpha skill"})) == {"Alpha"}
        assert names(client_anon.get("/api/v1/agents", {"tag": ["red", "blue"]})) == set()


def test_each_owner_sees_their_own_pending_agent_through_the_same_sql() -> None:
    users = get_user_model().objects
    owners = [users.create_user(username=f"owner{i}") for i in range(2)]
    for index, owner in enumerate(owners):
        agent = agent_from_card(card(f"Pending {index}", "t", "S", "P"))
        Agent.objects.filter(pk=agent.pk).update(moderation="pending", submitted_by=owner)
    for index, owner in enumerate(owners):
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=owner).key}")
        assert names(client.get("/api/v1/agents", {"tag": "t"})) == {f"Pending {index}"}


def test_cursors_run_through_the_compiled_page(client_anon: APIClient) -> None:
    for index in range(5):
        agent_from_card(card(f"Paged {index}", "paged", "P", "P"))
    seen: list[str] = []
    response = client_anon.get("/api/v1/agents", {"tag": "paged", "limit": 2})
    while True:
        seen += [row["name"] for row in response.json()["results"]]
        if response.json()["next"] is None:
            break
        response = client_anon.get(response.json()["next"])
    assert sorted(seen) == [f"Paged {i}" for i in range(5)]
    assert compiled.usable()  # these tests are about the PostgreSQL path
