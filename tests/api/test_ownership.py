"""Moderation states, ownership of agents, soft deletion and submission rate limits."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from cards.models import Agent, AuditEntry, Snapshot
from cards.moderation import agent_moderate
from tests.factories import agent_from_card, minimal_card

pytestmark = pytest.mark.django_db


def client_for(username: str, *, staff: bool = False) -> tuple[APIClient, Any]:
    user = get_user_model().objects.create_user(username=username, is_staff=staff)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client, user


@pytest.fixture
def owned() -> tuple[Agent, APIClient, APIClient, APIClient]:
    owner_client, owner = client_for("owner")
    other_client, _ = client_for("someone-else")
    staff_client, _ = client_for("curator", staff=True)
    agent = agent_from_card(minimal_card(name="Mine"))
    Agent.objects.filter(pk=agent.pk).update(submitted_by=owner)
    agent.refresh_from_db()
    return agent, owner_client, other_client, staff_client


def test_only_the_owner_or_staff_may_recrawl(owned: Any) -> None:
    agent, owner, other, staff = owned
    assert other.post(f"/api/v1/agents/{agent.pk}/recrawl").status_code == 403
    assert owner.post(f"/api/v1/agents/{agent.pk}/recrawl").status_code == 202
    assert staff.post(f"/api/v1/agents/{agent.pk}/recrawl").status_code == 202


def test_the_owner_deletes_softly_and_history_is_kept(owned: Any, client_anon: APIClient) -> None:
    agent, owner, other, _ = owned
    forbidden = other.delete(f"/api/v1/agents/{agent.pk}")
    assert forbidden.status_code == 403
    assert forbidden["Content-Type"] == "application/problem+json"
    assert owner.delete(f"/api/v1/agents/{agent.pk}").status_code == 204
    assert client_anon.get(f"/api/v1/agents/{agent.pk}").status_code == 404
    assert client_anon.get("/api/v1/agents").json()["results"] == []
    agent.refresh_from_db()
    assert agent.deleted_at is not None
    assert Snapshot.objects.filter(agent=agent).count() == 1
    assert AuditEntry.objects.filter(agent=agent, action="delete").exists()
    assert client_anon.delete(f"/api/v1/agents/{agent.pk}").status_code == 401


def test_pending_and_rejected_agents_are_only_shown_to_owner_and_staff(
    owned: Any, client_anon: APIClient
) -> None:
    agent, owner, other, staff = owned
    agent_moderate(agent=agent, state="rejected", actor=None, reason="Not an A2A agent")
    assert client_anon.get("/api/v1/agents").json()["results"] == []
    assert other.get(f"/api/v1/agents/{agent.pk}").status_code == 404
    mine = owner.get(f"/api/v1/agents/{agent.pk}").json()
    assert mine["moderation"] == {"state": "rejected", "reason": "Not an A2A agent"}
    assert [row["name"] for row in staff.get("/api/v1/agents").json()["results"]] == ["Mine"]
    agent_moderate(agent=agent, state="featured", actor=None)
    public = client_anon.get(f"/api/v1/agents/{agent.pk}").json()
    assert public["moderation"] == {"state": "featured", "reason": None}


def test_without_auto_approval_new_agents_wait_for_a_curator(
    settings: Any,
    client_auth: APIClient,
    client_anon: APIClient,
    django_capture_on_commit_callbacks: Any,
) -> None:
    settings.REGISTRY_AUTO_APPROVE = False
    with django_capture_on_commit_callbacks(execute=False):
        response = client_auth.post(
            "/api/v1/agents", {"url": "https://new.example.com"}, format="json"
        )
    assert response.json()["moderation"]["state"] == "pending"
    assert client_anon.get("/api/v1/agents").json()["results"] == []


def test_submissions_are_rate_limited_per_token(
    settings: Any, client_auth: APIClient, django_capture_on_commit_callbacks: Any
) -> None:
    settings.REGISTRY_SUBMISSION_RATE = "2/hour"
    codes = []
    with django_capture_on_commit_callbacks(execute=False):
        for i in range(3):
            response = client_auth.post(
                "/api/v1/agents", {"url": f"https://r{i}.example.com"}, format="json"
            )
            codes.append(response.status_code)
    assert codes == [202, 202, 429]
    assert response["Content-Type"] == "application/problem+json"
    assert int(response["Retry-After"]) > 0
    assert Agent.objects.count() == 2


def test_the_owner_who_deleted_an_agent_may_submit_it_again(owned: Any) -> None:
    agent, owner, _, _ = owned
    assert owner.delete(f"/api/v1/agents/{agent.pk}").status_code == 204
    again = owner.post("/api/v1/agents", {"url": agent.url}, format="json")
    assert again.status_code == 200 and again.json()["id"] == str(agent.pk)
    assert again.json()["owned"] is True
    agent.refresh_from_db()
    assert agent.deleted_at is None
    assert AuditEntry.objects.filter(agent=agent, action="restore").exists()


def assert_refused(response: Any, slug: str) -> None:
    assert response.status_code == 409, response.content
    assert response["Content-Type"] == "application/problem+json"
    problem = response.json()
    assert problem["type"].endswith(slug)
    assert "id" not in problem


def test_nobody_else_revives_an_agent_its_owner_deleted(owned: Any, client_anon: APIClient) -> None:
    agent, owner, other, _ = owned
    owner.delete(f"/api/v1/agents/{agent.pk}")
    assert_refused(other.post("/api/v1/agents", {"url": agent.url}, format="json"), "agent-deleted")
    agent.refresh_from_db()
    assert agent.deleted_at is not None
    assert agent.submitted_by is not None and agent.submitted_by.username == "owner"
    assert client_anon.get(f"/api/v1/agents/{agent.pk}").status_code == 404


def test_a_staff_deletion_is_undone_by_staff_only_and_the_owner_stays(
    owned: Any, client_anon: APIClient
) -> None:
    agent, owner, other, staff = owned
    assert staff.delete(f"/api/v1/agents/{agent.pk}").status_code == 204
    for client in (owner, other):
        assert_refused(
            client.post("/api/v1/agents", {"url": agent.url}, format="json"), "agent-deleted"
        )
    agent.refresh_from_db()
    assert agent.deleted_at is not None
    restored = staff.post("/api/v1/agents", {"url": agent.url}, format="json")
    assert restored.status_code == 200 and restored.json()["id"] == str(agent.pk)
    agent.refresh_from_db()
    assert agent.deleted_at is None
    assert agent.submitted_by is not None and agent.submitted_by.username == "owner"
    assert owner.get(f"/api/v1/agents/{agent.pk}").json()["owned"] is True
    assert other.get(f"/api/v1/agents/{agent.pk}").json()["owned"] is False


def test_the_url_of_another_accounts_hidden_agent_is_refused(owned: Any) -> None:
    agent, owner, other, staff = owned
    agent_moderate(agent=agent, state="hidden", actor=None, reason="under review")
    refused = other.post("/api/v1/agents", {"url": agent.url}, format="json")
    assert_refused(refused, "url-registered")
    assert owner.post("/api/v1/agents", {"url": agent.url}, format="json").status_code == 200
    assert staff.post("/api/v1/agents", {"url": agent.url}, format="json").status_code == 200
    agent.refresh_from_db()
    assert agent.moderation == "hidden"


def test_the_ownership_conflict_is_in_the_openapi_document(client_anon: APIClient) -> None:
    document = client_anon.get("/api/schema", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    responses = document.json()["paths"]["/api/v1/agents"]["post"]["responses"]
    assert "agent-deleted" in responses["409"]["description"]
    assert "application/problem+json" in responses["409"]["content"]
