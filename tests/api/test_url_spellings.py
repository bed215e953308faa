"""Another spelling of a URL is the same URL on every write door (issue 35, item 2).

Alice registers her card through the v1 API with her token; the crawl reads it from a real
server on loopback. Staff then reject, hide or delete it (or Alice deletes it). Bob submits or
imports the same card URL spelled another way (``/./``, ``//``, ``%63ard.json``, ``card.json/``,
the host's trailing dot): each spelling is the URL itself, so he gets what the exact spelling
gets him (a 409, or Alice's public agent), never a new agent for her card.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from cards import moderation
from cards.models import Agent
from cards.tasks import crawl_agent
from tests.factories import minimal_card
from tests.support import CardServer, Reply, running_server

pytestmark = pytest.mark.django_db

PATH = "/rejected-card/card.json"


def spellings(server: CardServer) -> dict[str, str]:
    """The spellings of the issue, of the card at ``PATH`` on ``server``."""
    return {
        "dot-segment": server.url("/rejected-card/./card.json"),
        "double-slash": server.url("/rejected-card//card.json"),
        "percent-encoded": server.url("/rejected-card/%63ard.json"),
        "trailing-slash": server.url(PATH + "/"),
        "host-trailing-dot": f"http://{server.host}.:{server.port}{PATH}",
    }


SPELLINGS = ["dot-segment", "double-slash", "percent-encoded", "trailing-slash",
             "host-trailing-dot"]  # fmt: skip
# How Alice's agent was taken out of view, and who did it.
STATES = ["rejected", "hidden", "pending", "deleted-by-owner", "deleted-by-staff"]


def account(name: str, *, staff: bool = False) -> APIClient:
    user = get_user_model().objects.create_user(username=name, is_staff=staff)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    client.user = user  # type: ignore[attr-defined]
    return client


@pytest.fixture
def alice() -> APIClient:
    return account("alice")


@pytest.fixture
def bob() -> APIClient:
    return account("bob")


@pytest.fixture
def staff() -> APIClient:
    return account("curator", staff=True)


@pytest.fixture
def server(loopback_allowed: None) -> Iterator[CardServer]:
    with running_server() as card_server:
        card_server.serve(PATH, json.dumps(minimal_card(name="Alice's card")).encode())
        yield card_server


def submit(client: APIClient, url: str, capture: Any) -> Any:
    with capture(execute=False):
        return client.post("/api/v1/agents", {"url": url}, format="json")


def registered(client: APIClient, url: str, capture: Any) -> Agent:
    """Submit with the account's token and crawl the agent from the real server."""
    response = submit(client, url, capture)
    assert response.status_code == 202, response.content
    crawl_agent.apply(args=[response.json()["id"]]).get()
    agent = Agent.objects.get(pk=response.json()["id"])
    assert agent.status == "ok", agent.last_error
    return agent


def take_out_of_view(agent: Agent, state: str, alice: APIClient, staff: APIClient) -> None:
    if state == "deleted-by-owner":
        assert alice.delete(f"/api/v1/agents/{agent.pk}").status_code == 204
    elif state == "deleted-by-staff":
        assert staff.delete(f"/api/v1/agents/{agent.pk}").status_code == 204
    else:
        moderation.agent_moderate(agent=agent, state=state, actor=staff.user, reason="spam")  # type: ignore[attr-defined]


def assert_refused(response: Any, agent: Agent) -> None:
    assert response.status_code == 409, response.content
    assert response["Content-Type"] == "application/problem+json"
    assert str(agent.pk) not in response.content.decode()


@pytest.mark.parametrize("spelling", SPELLINGS)
@pytest.mark.parametrize("state", STATES)
def test_another_spelling_of_an_agent_out_of_view_is_refused_to_another_account(
    alice: APIClient,
    bob: APIClient,
    staff: APIClient,
    server: CardServer,
    django_capture_on_commit_callbacks: Any,
    state: str,
    spelling: str,
) -> None:
    mine = registered(alice, server.url(PATH), django_capture_on_commit_callbacks)
    take_out_of_view(mine, state, alice, staff)
    response = submit(bob, spellings(server)[spelling], django_capture_on_commit_callbacks)
    assert_refused(response, mine)
    assert Agent.objects.count() == 1
    assert not Agent.objects.filter(submitted_by=bob.user).exists()  # type: ignore[attr-defined]


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_another_spelling_of_a_public_agent_returns_it(
    alice: APIClient,
    bob: APIClient,
    server: CardServer,
    django_capture_on_commit_callbacks: Any,
    spelling: str,
) -> None:
    mine = registered(alice, server.url(PATH), django_capture_on_commit_callbacks)
    response = submit(bob, spellings(server)[spelling], django_capture_on_commit_callbacks)
    assert response.status_code == 200, response.content
    assert response.json()["id"] == str(mine.pk) and response.json()["owned"] is False
    assert Agent.objects.count() == 1


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_alice_respelling_her_own_rejected_card_gets_it_back_still_rejected(
    alice: APIClient,
    staff: APIClient,
    server: CardServer,
    django_capture_on_commit_callbacks: Any,
    spelling: str,
) -> None:
    mine = registered(alice, server.url(PATH), django_capture_on_commit_callbacks)
    take_out_of_view(mine, "rejected", alice, staff)
    response = submit(alice, spellings(server)[spelling], django_capture_on_commit_callbacks)
    assert response.status_code == 200, response.content
    assert response.json()["id"] == str(mine.pk)
    assert response.json()["moderation"]["state"] == "rejected"
    assert Agent.objects.count() == 1
    assert APIClient().get(f"/api/v1/agents/{mine.pk}").status_code == 404


def test_alice_never_gets_bobs_agent_for_her_staff_deleted_url(
    alice: APIClient,
    bob: APIClient,
    staff: APIClient,
    server: CardServer,
    django_capture_on_commit_callbacks: Any,
) -> None:
    """The issue's last case: Bob's copy made by a spelling, then Alice's own URL answered with
    Bob's agent (200). Another spelling is refused; and Bob's own URL that redirects to Alice's
    (which the normal form cannot fold) gets no copy of her card (issue 44): his agent stores
    nothing and says the card is registered elsewhere, without naming her agent."""
    mine = registered(alice, server.url(PATH), django_capture_on_commit_callbacks)
    take_out_of_view(mine, "deleted-by-staff", alice, staff)
    assert_refused(
        submit(bob, spellings(server)["dot-segment"], django_capture_on_commit_callbacks), mine
    )
    with running_server("127.0.0.2") as bobs:
        bobs.routes["/alias.json"] = Reply(status=302, headers={"Location": server.url(PATH)})
        sent = submit(bob, bobs.url("/alias.json"), django_capture_on_commit_callbacks)
        assert sent.status_code == 202, sent.content
        crawl_agent.apply(args=[sent.json()["id"]]).get()
    alias = Agent.objects.get(pk=sent.json()["id"])
    assert alias.latest_snapshot_id is None and alias.card_url != mine.url
    assert alias.last_error_code == "registered-elsewhere" and str(mine.pk) not in alias.last_error
    again = submit(alice, server.url(PATH), django_capture_on_commit_callbacks)
    assert_refused(again, mine)
    assert str(alias.pk) not in again.content.decode()
    assert again.json()["type"].endswith("agent-deleted")
    mine.refresh_from_db()
    assert mine.deleted_at is not None


@pytest.mark.parametrize("state", ["rejected", "deleted-by-staff"])
def test_an_import_of_the_spellings_makes_no_agent(
    alice: APIClient,
    bob: APIClient,
    staff: APIClient,
    server: CardServer,
    django_capture_on_commit_callbacks: Any,
    state: str,
) -> None:
    mine = registered(alice, server.url(PATH), django_capture_on_commit_callbacks)
    take_out_of_view(mine, state, alice, staff)
    urls = list(spellings(server).values())
    with django_capture_on_commit_callbacks(execute=True):
        response = bob.post("/api/v1/imports", {"urls": urls}, format="json")
    assert response.status_code == 202, response.content
    job = bob.get(f"/api/v1/imports/{response.json()['id']}").json()
    assert job["counts"]["invalid"] == len(urls), job
    assert str(mine.pk) not in json.dumps(job)
    assert Agent.objects.count() == 1
