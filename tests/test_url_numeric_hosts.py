"""Numeric spellings of one IPv4 address are one URL (cards/url_form.py, issue 44): a second
account that spells a registered card's host differently reaches the same agent, and rows stored
under such spellings before are merged by migration 0020."""

from __future__ import annotations

import importlib
import json
from datetime import timedelta

import pytest
from django.apps import apps
from django.contrib.auth import get_user_model
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from cards import crawling
from cards.models import Agent
from tests.factories import minimal_card
from tests.support import CardServer

pytestmark = pytest.mark.django_db

MIGRATION = importlib.import_module("cards.migrations.0020_url_numeric_hosts")
SPELLINGS = ["127.1", "2130706433", "0x7f000001", "0177.0.0.1", "[::ffff:127.0.0.1]"]


def _client(name: str) -> APIClient:
    user = get_user_model().objects.create_user(username=name)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


def test_a_second_account_spelling_the_host_otherwise_reaches_the_same_agent(
    card_server: CardServer, loopback_allowed: None
) -> None:
    """Alice registers a card by its dotted address; Bob's five other spellings each answer
    with Alice's agent (200: it is public), never a second one. Before, each made one."""
    url = card_server.serve("/card.json", json.dumps(minimal_card()).encode())
    alice, bob = _client("alice"), _client("bob")
    first = alice.post("/api/v1/agents", {"url": url}, format="json")
    assert first.status_code == 202, first.content
    agent_id = first.json()["id"]
    assert crawling.agent_crawl(agent_id=agent_id) == "stored"
    for host in SPELLINGS:
        spelled = url.replace("127.0.0.1", host)
        again = bob.post("/api/v1/agents", {"url": spelled}, format="json")
        assert again.status_code == 200, (host, again.content)
        assert again.json()["id"] == agent_id
    assert Agent.objects.count() == 1


def test_a_spelling_of_a_private_agents_url_is_refused_like_the_url(
    loopback_allowed: None,
) -> None:
    """An agent that is not public (no card yet): the other account's spellings are refused as
    its URL is (409), and no second agent is made."""
    alice, bob = _client("alice"), _client("bob")
    first = alice.post("/api/v1/agents", {"url": "http://127.0.0.1:9/card.json"}, format="json")
    assert first.status_code == 202, first.content
    for host in SPELLINGS:
        again = bob.post("/api/v1/agents", {"url": f"http://{host}:9/card.json"}, format="json")
        assert again.status_code == 409, (host, again.content)
        assert again.json()["type"].endswith("url-registered")
    assert Agent.objects.count() == 1


def test_rows_stored_under_other_spellings_are_merged_into_the_oldest() -> None:
    now = timezone.now()
    rows = []
    for age, host in enumerate(["127.0.0.1", *SPELLINGS]):
        url = f"http://{host}:9/card.json"
        agent = Agent.objects.create(url=url, card_url=url)
        Agent.objects.filter(pk=agent.pk).update(created_at=now - timedelta(days=10 - age))
        rows.append(agent.pk)
    MIGRATION.normalise(apps, None)
    kept = Agent.objects.get(pk=rows[0])
    assert kept.url == "http://127.0.0.1:9/card.json" and kept.deleted_at is None
    merged = Agent.objects.filter(pk__in=rows[1:])
    assert all(row.deleted_at is not None for row in merged)
    assert all(f"#duplicate-of-{kept.pk}" in row.url for row in merged)
