"""Change feeds tell a reader about a removal only if that reader could once see the agent.

``GET /api/v1/agents?updated_since=`` and ``GET /ard/agents?updatedSince=`` used to list every
changed agent, so anonymous readers got tombstones (with ARD identifiers made from the names) of
agents that were pending, hidden, rejected or deleted before anyone but their owner saw them.
Two real accounts and an anonymous reader, on PostgreSQL.
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from cards import moderation
from cards.crawling import card_ingest
from cards.models import Agent
from registry.http import FetchResult
from tests.factories import minimal_card

pytestmark = pytest.mark.django_db


def _account(name: str, *, staff: bool = False) -> tuple[Any, APIClient]:
    user = get_user_model().objects.create_user(username=name, is_staff=staff)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    client.force_login(user)  # /ard/ reads the session (signed-in browser), /api/v1 the token
    return user, client


def _agent(name: str, owner: Any, state: str) -> Agent:
    url = f"https://{name.lower().replace(' ', '-')}.example/agent-card.json"
    agent = Agent.objects.create(url=url, card_url=url, submitted_by=owner, moderation=state)
    card_ingest(
        agent_id=agent.pk,
        result=FetchResult.local(url, json.dumps(minimal_card(name=name)).encode()),
    )
    agent.refresh_from_db()
    return agent


def _v1(client: APIClient, since: Any) -> dict[str, dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    response = client.get("/api/v1/agents", {"updated_since": since.isoformat(), "limit": 2})
    while True:
        assert response.status_code == 200, response.content
        rows += response.json()["results"]
        if response.json()["next"] is None:
            return {row["id"]: row for row in rows}
        response = client.get(response.json()["next"])


def _ard(client: APIClient, since: Any) -> tuple[set[str], set[str]]:
    items: set[str] = set()
    removed: set[str] = set()
    params: dict[str, Any] = {"updatedSince": since.isoformat(), "pageSize": 2}
    while True:
        response = client.get("/ard/agents", params)
        assert response.status_code == 200, response.content
        body = response.json()
        items |= {item["identifier"] for item in body["items"]}
        removed |= {item["identifier"] for item in body["removed"]}
        if "pageToken" not in body:
            return items, removed
        params["pageToken"] = body["pageToken"]


def test_tombstones_only_for_readers_who_could_once_see_the_agent() -> None:
    alice, as_alice = _account("alice")
    _bob, as_bob = _account("bob")
    staff, as_staff = _account("staff", staff=True)
    anonymous = APIClient()
    start = timezone.now() - timedelta(seconds=1)

    never_shown = _agent("Secret Pending", alice, Agent.Moderation.PENDING)
    rejected = _agent("Secret Rejected", alice, Agent.Moderation.PENDING)
    deleted_early = _agent("Secret Deleted", alice, Agent.Moderation.PENDING)
    was_public = _agent("Once Public", alice, Agent.Moderation.APPROVED)
    public_deleted = _agent("Public Then Deleted", alice, Agent.Moderation.APPROVED)
    moderation.agent_moderate(agent=rejected, state="rejected", actor=staff, reason="spam")
    moderation.agent_delete(agent=deleted_early, actor=alice)
    moderation.agent_moderate(agent=was_public, state="hidden", actor=staff, reason="spam")
    moderation.agent_delete(agent=public_deleted, actor=alice)

    secrets = {str(a.pk) for a in (never_shown, rejected, deleted_early)}
    secret_names = {a.ard_identifier for a in (never_shown, rejected, deleted_early)}
    assert all(secret_names), "identifiers were assigned at ingest"
    public_ids = {str(was_public.pk), str(public_deleted.pk)}
    public_names = {was_public.ard_identifier, public_deleted.ard_identifier}

    for reader in (anonymous, as_bob):
        feed = _v1(reader, start)
        assert set(feed) == public_ids, feed
        assert all(row == {"id": row["id"], "removed": True} for row in feed.values())
        items, removed = _ard(reader, start)
        assert items == set() and removed == public_names
        assert not secret_names & (items | removed)

    # The owner saw every one of them: her own live agents as entries, her deletions as tombstones.
    feed = _v1(as_alice, start)
    assert set(feed) == secrets | public_ids
    assert feed[str(deleted_early.pk)] == {"id": str(deleted_early.pk), "removed": True}
    assert feed[str(never_shown.pk)]["name"] == "Secret Pending"
    items, removed = _ard(as_alice, start)
    assert removed == {deleted_early.ard_identifier, public_deleted.ard_identifier}

    # Staff see everything that is not deleted, and are told about every deletion.
    feed = _v1(as_staff, start)
    assert set(feed) == secrets | public_ids

    # A later approval makes the agent public for good: its removal is then everyone's news.
    moderation.agent_moderate(agent=never_shown, state="approved", actor=staff)
    moderation.agent_moderate(agent=never_shown, state="hidden", actor=staff, reason="again")
    assert str(never_shown.pk) in _v1(anonymous, start)
    assert never_shown.ard_identifier in _ard(anonymous, start)[1]
