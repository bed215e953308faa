from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client

from cards.models import Agent
from tests.factories import agent_from_card, minimal_card
from tests.support import CardServer

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff_client(django_user_model: Any) -> Client:
    user = django_user_model.objects.create_superuser(username="curator", password="pw-for-tests")
    client = Client()
    client.force_login(user)
    return client


def test_the_agent_page_shows_skills_findings_and_snapshots(staff_client: Client) -> None:
    agent = agent_from_card(
        minimal_card(
            name="Shown",
            skills=[{"id": "Not_Kebab", "name": "S", "description": "d", "tags": ["t"]}],
        )
    )
    page = staff_client.get(f"/admin/cards/agent/{agent.pk}/change/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "Not_Kebab" in html
    assert "/skills/0/id" in html
    assert agent.content_sha256 in html
    assert (
        staff_client.get("/admin/cards/agent/?status__exact=ok&valid__exact=1").status_code == 200
    )
    snapshot = agent.latest_snapshot
    assert staff_client.get(f"/admin/cards/snapshot/{snapshot.pk}/change/").status_code == 200


def test_the_recrawl_action_crawls_the_selected_agents(
    staff_client: Client, card_server: CardServer, loopback_allowed: None
) -> None:
    url = card_server.serve("/a.json", json.dumps(minimal_card(name="Recrawled")).encode())
    agent = Agent.objects.create(url=url, card_url=url)
    response = staff_client.post(
        "/admin/cards/agent/",
        {"action": "recrawl", "_selected_action": [str(agent.pk)]},
        follow=True,
    )
    assert response.status_code == 200
    assert "1 crawl(s) queued." in response.content.decode()
    agent.refresh_from_db()
    assert agent.name == "Recrawled"
