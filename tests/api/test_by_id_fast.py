"""Fetch by id without DRF (cards/api/by_id.py): the plain anonymous read answers exactly what
the DRF view answers, and everything else still goes through DRF."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from rest_framework.authtoken.models import Token

from cards.api import views
from cards.models import Agent
from tests.factories import agent_from_card, minimal_card

pytestmark = pytest.mark.django_db

# Served by DRF (its negotiation accepts it, the short cut does not), anonymous all the same.
THROUGH_DRF: dict[str, Any] = {"HTTP_ACCEPT": "application/*"}


@pytest.fixture
def through_drf(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The methods the DRF view dispatched, in order."""
    seen: list[str] = []
    dispatch = views.AgentDetailView.dispatch

    def counted(self: Any, request: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(request.method)
        return dispatch(self, request, *args, **kwargs)

    monkeypatch.setattr(views.AgentDetailView, "dispatch", counted)
    return seen


def _same(fast: Any, slow: Any) -> None:
    assert fast.status_code == slow.status_code
    assert fast.content == slow.content

    # Each answer carries its own request's id (registry/logs/middleware.py); the rest is equal.
    def headers(response: Any) -> list[tuple[str, str]]:
        return sorted((k, v) for k, v in response.items() if k != "X-Request-ID")

    assert headers(fast) == headers(slow)
    assert fast["X-Request-ID"] != slow["X-Request-ID"]


def test_the_plain_read_answers_what_drf_answers(through_drf: list[str]) -> None:
    agent = agent_from_card(minimal_card(name="Fast by id"))
    client = Client()
    accepts: list[dict[str, Any]] = [
        {},
        {"HTTP_ACCEPT": "*/*"},
        {"HTTP_ACCEPT": "application/json"},
    ]
    for accept in accepts:
        fast = client.get(f"/api/v1/agents/{agent.pk}", **accept)
        assert through_drf == []
        slow = client.get(f"/api/v1/agents/{agent.pk}", **THROUGH_DRF)
        assert through_drf == ["GET"]
        through_drf.clear()
        assert fast.status_code == 200
        assert fast.json()["id"] == str(agent.pk) and fast.json()["owned"] is False
        assert fast["Vary"] == "Cookie"
        _same(fast, slow)
    head = client.head(f"/api/v1/agents/{agent.pk}")
    assert through_drf == []
    _same(head, client.head(f"/api/v1/agents/{agent.pk}", **THROUGH_DRF))


@pytest.mark.parametrize("state", ["pending", "hidden", "rejected", "deleted", "missing"])
def test_what_an_anonymous_reader_may_not_see_is_the_same_404(
    state: str, through_drf: list[str]
) -> None:
    agent = agent_from_card(minimal_card(name=f"Not for you ({state})"))
    if state == "deleted":
        Agent.objects.filter(pk=agent.pk).update(deleted_at=agent.created_at)
    elif state == "missing":
        Agent.objects.filter(pk=agent.pk).delete()
    else:
        Agent.objects.filter(pk=agent.pk).update(moderation=state)
    client = Client()
    fast = client.get(f"/api/v1/agents/{agent.pk}")
    assert through_drf == []
    assert fast.status_code == 404
    assert fast["Content-Type"] == "application/problem+json"
    assert fast.json()["type"] == "/problems/not-found"
    _same(fast, client.get(f"/api/v1/agents/{agent.pk}", **THROUGH_DRF))


def test_owners_staff_tokens_and_sessions_go_through_drf(through_drf: list[str]) -> None:
    owner = get_user_model().objects.create_user("fast-owner", password="x" * 16)
    agent = agent_from_card(minimal_card(name="Pending, mine"))
    Agent.objects.filter(pk=agent.pk).update(moderation="pending", submitted_by=owner)
    path = f"/api/v1/agents/{agent.pk}"
    assert Client().get(path).status_code == 404

    token = Token.objects.create(user=owner).key
    by_token = Client(HTTP_AUTHORIZATION=f"Token {token}").get(path)
    assert by_token.status_code == 200 and by_token.json()["owned"] is True

    session = Client()
    session.force_login(owner)
    by_session = session.get(path)
    assert by_session.status_code == 200 and by_session.json()["owned"] is True
    assert through_drf == ["GET", "GET"]

    bad_token = Client(HTTP_AUTHORIZATION="Token nope").get(path)
    assert bad_token.status_code == 401
    assert bad_token["Content-Type"] == "application/problem+json"


def test_unusual_requests_go_through_drf(through_drf: list[str]) -> None:
    agent = agent_from_card(minimal_card(name="Unusual"))
    path = f"/api/v1/agents/{agent.pk}"
    client = Client()
    refused = client.get(path, HTTP_ACCEPT="application/xml")
    assert refused.status_code == 406
    assert refused["Content-Type"] == "application/problem+json"
    unknown = client.get(path + "?fields=name")
    assert unknown.status_code == 400
    assert unknown["Content-Type"] == "application/problem+json"
    assert client.options(path).status_code == 200
    assert client.delete(path).status_code in (401, 403)
    assert through_drf == ["GET", "GET", "OPTIONS", "DELETE"]


def test_the_plain_read_is_one_query() -> None:
    agent = agent_from_card(minimal_card(name="One query"))
    client = Client()
    client.get(f"/api/v1/agents/{agent.pk}")
    with CaptureQueriesContext(connection) as queries:
        assert client.get(f"/api/v1/agents/{agent.pk}").status_code == 200
    assert len(queries) == 1
    # A primary-key look-up: nothing to sort (PostgreSQL planned a sort node for the list's order).
    assert "ORDER BY" not in queries[0]["sql"], queries[0]["sql"]


def test_the_anonymous_limiter_still_applies(settings: Any) -> None:
    from django.core.cache import cache

    from registry import limits

    cache.clear()
    limits.reset()
    settings.REGISTRY_ANON_RATE = "2/minute"
    agent = agent_from_card(minimal_card(name="Limited"))
    client = Client()
    answers = [client.get(f"/api/v1/agents/{agent.pk}") for _ in range(3)]
    assert [a.status_code for a in answers] == [200, 200, 429]
    assert answers[2]["Content-Type"] == "application/problem+json"
    assert answers[2].json()["type"] == "/problems/rate-limited"
    cache.clear()
    limits.reset()


def test_the_openapi_document_still_describes_the_endpoint() -> None:
    document = Client().get("/api/schema", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert document.status_code == 200
    operations = document.json()["paths"]["/api/v1/agents/{id}"]
    assert {"get", "delete"} <= set(operations)
