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


@pytest.mark.parametrize(
    ("action", "state"),
    [("approve", "approved"), ("feature", "featured"), ("hide", "hidden"), ("reject", "rejected")],
)
def test_each_bulk_moderation_action_changes_state_and_writes_the_audit_log(
    staff_client: Client, action: str, state: str
) -> None:
    from cards.models import AuditEntry

    agents = [agent_from_card(minimal_card(name=f"Bulk {i}")) for i in range(2)]
    Agent.objects.update(moderation="pending")
    response = staff_client.post(
        "/admin/cards/agent/",
        {
            "action": action,
            "_selected_action": [str(a.pk) for a in agents],
            "reason": "Checked by hand",
        },
        follow=True,
    )
    assert response.status_code == 200
    assert set(Agent.objects.values_list("moderation", flat=True)) == {state}
    entries = AuditEntry.objects.filter(action=state)
    assert entries.count() == 2
    assert {e.actor.username for e in entries} == {"curator"}
    assert {e.reason for e in entries} == {"Checked by hand"}
    assert {e.detail["previous"] for e in entries} == {"pending"}


def test_rejecting_without_a_reason_is_refused(staff_client: Client) -> None:
    agent = agent_from_card(minimal_card(name="Needs a reason"))
    response = staff_client.post(
        "/admin/cards/agent/",
        {"action": "reject", "_selected_action": [str(agent.pk)]},
        follow=True,
    )
    assert "Give a reason to reject" in response.content.decode()
    agent.refresh_from_db()
    assert agent.moderation == "approved"


def test_list_filters_narrow_the_changelist(staff_client: Client) -> None:
    agent_from_card(
        minimal_card(
            name="With extension", capabilities={"extensions": [{"uri": "https://x.example/v1"}]}
        )
    )
    agent_from_card(minimal_card(name="Plain"))
    page = staff_client.get(
        "/admin/cards/agent/", {"extension": "https://x.example/v1"}
    ).content.decode()
    assert "With extension" in page and "Plain" not in page
    for query in (
        {"moderation__exact": "approved"},
        {"health__exact": "unknown"},
        {"signature_status__exact": "unsigned"},
        {"valid__exact": "1"},
        {"schema": "nope"},
    ):
        assert staff_client.get("/admin/cards/agent/", query).status_code == 200


def test_pinning_keys_is_audited_and_private_keys_are_refused(staff_client: Client) -> None:
    from cards.models import AuditEntry, PinnedKey

    agent = agent_from_card(minimal_card(name="Pinned"))
    url = f"/admin/cards/agent/{agent.pk}/change/"
    form = staff_client.get(url).context["adminform"].form
    data = {k: v for k, v in form.initial.items() if v is not None and k in form.fields}
    prefix = "pinned_keys"
    base = {
        **data,
        f"{prefix}-TOTAL_FORMS": "1",
        f"{prefix}-INITIAL_FORMS": "0",
        f"{prefix}-MIN_NUM_FORMS": "0",
        f"{prefix}-MAX_NUM_FORMS": "1000",
    }
    for name in ("skills", "extensions", "snapshots", "keys", "events"):
        base.update(
            {
                f"{name}-TOTAL_FORMS": "0",
                f"{name}-INITIAL_FORMS": "0",
                f"{name}-MIN_NUM_FORMS": "0",
                f"{name}-MAX_NUM_FORMS": "1000",
            }
        )
    secret = {"keys": [{"kty": "OKP", "crv": "Ed25519", "x": "AAAA", "d": "BBBB"}]}
    response = staff_client.post(
        url, {**base, f"{prefix}-0-jwks": json.dumps(secret), f"{prefix}-0-note": "x"}
    )
    assert response.status_code == 200 and "private material" in response.content.decode()
    public = {"keys": [{"kty": "OKP", "crv": "Ed25519", "x": "AAAA"}]}
    response = staff_client.post(
        url, {**base, f"{prefix}-0-jwks": json.dumps(public), f"{prefix}-0-note": "from the owner"}
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    assert PinnedKey.objects.filter(agent=agent).count() == 1
    assert AuditEntry.objects.filter(
        agent=agent, action="pin-keys", reason="from the owner"
    ).exists()


def test_the_agent_page_shows_the_card_signatures_and_crawl_history(
    staff_client: Client, card_server: CardServer, loopback_allowed: None
) -> None:
    from cards import crawling

    url = card_server.serve("/a.json", json.dumps(minimal_card(name="<b>Escaped</b>")).encode())
    agent = Agent.objects.create(url=url, card_url=url)
    crawling.agent_crawl(agent_id=agent.pk)
    html = staff_client.get(f"/admin/cards/agent/{agent.pk}/change/").content.decode()
    assert "Crawl history" in html and "stored" in html
    assert "&lt;b&gt;Escaped&lt;/b&gt;" in html and "<b>Escaped</b>" not in html
    assert "Signature outcomes" in html
