"""Ownership follows proof, nothing reaches an endpoint on an unproven word, and "Verified
publisher" shows on every door (issue 44 §4-§6).

Three real accounts against each other: Alice submits agents, Bob proves the origin they live on
(a real HTTP proof: the registry fetches his challenge from a server on loopback), and Carol,
who never controls the origin, tries the same and fails. Cards are crawled from real servers.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import jwt
import pytest
from rest_framework.test import APIClient

from cards.models import Agent, AuditEntry
from cards.tasks import crawl_agent
from live import runner
from publishers import origins
from publishers.models import Origin
from publishers.proofs import http_file
from tests.factories import minimal_card
from tests.support import CardServer, running_server

pytestmark = pytest.mark.django_db

CARD = "/agents/weather/card.json"


@pytest.fixture
def cards_host(site: CardServer) -> CardServer:
    return site


@pytest.fixture
def endpoint_host(loopback_allowed: None) -> Iterator[CardServer]:
    """Where the card's interface lives: another origin (127.0.0.2)."""
    with running_server("127.0.0.2") as server:
        yield server


def card_on(server: CardServer, path: str, *, interface: str, name: str = "Weather") -> str:
    card = minimal_card(
        name=name,
        supportedInterfaces=[
            {"url": interface, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
        ],
    )
    return server.serve(path, json.dumps(card).encode())


def registered(client: APIClient, url: str, capture: Any) -> Agent:
    with capture(execute=False):
        response = client.post("/api/v1/agents", {"url": url}, format="json")
    assert response.status_code == 202, response.content
    crawl_agent.apply(args=[response.json()["id"]]).get()
    agent = Agent.objects.get(pk=response.json()["id"])
    assert agent.status == "ok", agent.last_error
    return agent


def prove(client: APIClient, server: CardServer) -> Origin:
    """The account proves ``server``'s origin the http way: it serves its challenge there."""
    row = origins.claim(client.user, server.origin)  # type: ignore[attr-defined]
    server.serve(
        http_file.WELL_KNOWN_PREFIX + str(row.pk), row.challenge.encode(), content_type="text/plain"
    )
    result = origins.verify(row, "http")
    assert result.verified, result.error
    return result.origin


def test_agents_move_to_the_account_that_proves_their_origin(
    alice: APIClient,
    bob: APIClient,
    carol: APIClient,
    cards_host: CardServer,
    django_capture_on_commit_callbacks: Any,
) -> None:
    url = card_on(cards_host, CARD, interface=cards_host.url("/a2a"))
    agent = registered(alice, url, django_capture_on_commit_callbacks)
    assert agent.submitted_by == alice.user  # type: ignore[attr-defined]
    anonymous = APIClient()
    row = anonymous.get(f"/api/v1/agents/{agent.pk}").json()
    assert row["publisher"] == {"verified": False, "origin": None, "name": None}

    # Carol never controls the origin: her challenge is not there, and nothing moves.
    carols = origins.claim(carol.user, cards_host.origin)  # type: ignore[attr-defined]
    assert not origins.verify(carols, "http").verified
    agent.refresh_from_db()
    assert agent.submitted_by == alice.user and agent.publisher_origin == ""  # type: ignore[attr-defined]

    proof = prove(bob, cards_host)
    agent.refresh_from_db()
    assert agent.submitted_by == bob.user  # type: ignore[attr-defined]
    assert agent.publisher_origin == cards_host.origin == proof.origin
    move = AuditEntry.objects.get(agent=agent, action="owner-moved")
    assert move.detail["previous_owner"] == alice.user.pk  # type: ignore[attr-defined]
    assert proof.events.filter(action="agents-moved").get().detail["count"] == 1

    name = cards_host.origin.split("://")[1]
    expected = {"verified": True, "origin": cards_host.origin, "name": name}
    assert anonymous.get(f"/api/v1/agents/{agent.pk}").json()["publisher"] == expected
    listed = anonymous.get("/api/v1/agents", {"verified": "true"}).json()["results"]
    assert [item["id"] for item in listed] == [str(agent.pk)]
    assert listed[0]["publisher"] == expected
    assert anonymous.get("/api/v1/agents", {"verified": "false"}).json()["results"] == []
    badge = anonymous.get(f"/badges/{agent.pk}.svg", {"show": "publisher"}).content.decode()
    assert f"verified publisher: {name}" in badge
    page = anonymous.get(f"/agents/{agent.pk}").content.decode()
    assert f"Verified publisher: {name}" in page
    home = anonymous.get("/").content.decode()
    assert f"Verified publisher: {name}" in home
    token = anonymous.get(f"/api/v1/agents/{agent.pk}/attestation").content.decode()
    claims = jwt.decode(token, options={"verify_signature": False})
    assert claims["verified_publisher"] == cards_host.origin
    ard = anonymous.post(
        "/ard/search",
        {"query": {"text": "", "filter": {"verifiedPublisher": ["true"]}}},
        format="json",
    ).json()
    assert [r["metadata"]["registryId"] for r in ard["results"]] == [str(agent.pk)]
    assert ard["results"][0]["metadata"]["verifiedPublisher"] == cards_host.origin

    # Alice is told on her own page; Bob now sees it as his.
    alice_browser = APIClient()
    alice_browser.force_login(alice.user)  # type: ignore[attr-defined]
    mine = alice_browser.get("/my-agents").content.decode()
    assert "Moved to their verified publisher" in mine and cards_host.origin in mine
    assert bob.get(f"/api/v1/agents/{agent.pk}").json()["owned"] is True
    assert alice.get(f"/api/v1/agents/{agent.pk}").json()["owned"] is False

    # A new card on the proven origin, submitted by Carol, is Bob's from its first crawl.
    later = card_on(cards_host, "/agents/tide/card.json", interface=cards_host.url("/a2a"))
    tide = registered(carol, later, django_capture_on_commit_callbacks)
    assert tide.submitted_by == bob.user and tide.publisher_origin == cards_host.origin  # type: ignore[attr-defined]


def test_a_proof_that_lapses_leaves_the_publisher_unverified(
    alice: APIClient,
    cards_host: CardServer,
    django_capture_on_commit_callbacks: Any,
    settings: Any,
) -> None:
    settings.REGISTRY_ORIGIN_RECHECK_FAILURES = 2
    url = card_on(cards_host, CARD, interface=cards_host.url("/a2a"))
    agent = registered(alice, url, django_capture_on_commit_callbacks)
    proof = prove(alice, cards_host)
    agent.refresh_from_db()
    assert agent.publisher_origin == cards_host.origin
    del cards_host.routes[http_file.WELL_KNOWN_PREFIX + str(proof.pk)]  # the file is gone
    origins.recheck(proof)
    proof.refresh_from_db()
    assert proof.state == Origin.State.VERIFIED  # one failure is not a lapse
    origins.recheck(proof)
    proof.refresh_from_db()
    assert proof.state == Origin.State.LAPSED
    agent.refresh_from_db()
    assert agent.publisher_origin == "" and agent.submitted_by == alice.user  # type: ignore[attr-defined]
    body = APIClient().get(f"/api/v1/agents/{agent.pk}").json()
    assert body["publisher"]["verified"] is False
    assert APIClient().get("/api/v1/agents", {"verified": "true"}).json()["results"] == []


def test_nothing_reaches_an_endpoint_on_an_unproven_word(
    alice: APIClient,
    carol: APIClient,
    cards_host: CardServer,
    endpoint_host: CardServer,
    django_capture_on_commit_callbacks: Any,
) -> None:
    """The card is on one origin and its interface on another: each needs Alice's proof, for
    the opt-in, the probe and Try it; Carol (not the owner) is refused before any of it."""
    url = card_on(cards_host, CARD, interface=endpoint_host.url("/a2a"))
    agent = registered(alice, url, django_capture_on_commit_callbacks)
    opt_in = {"probe_messages": True}
    path = f"/api/v1/agents/{agent.pk}"

    refused = alice.patch(path, opt_in, format="json")
    assert refused.status_code == 403 and refused["Content-Type"] == "application/problem+json"
    body = refused.json()
    assert body["type"].endswith("origin-not-proven")
    assert body["missing_origins"] == [cards_host.origin, endpoint_host.origin]
    assert "/api/v1/origins" in body["detail"]
    probe = alice.post(f"{path}/probe")
    assert probe.status_code == 403 and probe.json()["type"].endswith("origin-not-proven")
    assert carol.patch(path, opt_in, format="json").json()["type"].endswith("/forbidden")
    assert endpoint_host.requests == []  # nothing reached the endpoint

    prove(alice, cards_host)
    still = alice.patch(path, opt_in, format="json")
    assert still.status_code == 403 and still.json()["missing_origins"] == [endpoint_host.origin]

    endpoint_proof = prove(alice, endpoint_host)
    endpoint_host.requests.clear()
    assert alice.patch(path, opt_in, format="json").status_code == 200
    agent.refresh_from_db()
    assert agent.probe_messages is True

    # The interface's proof goes: Try it's Send and the scheduled messages stop.
    origins.remove(endpoint_proof)
    sent = alice.post(f"{path}/try", {"skill": "echo", "payload": "hi"}, format="json")
    assert sent.status_code == 403 and sent.json()["missing_origins"] == [endpoint_host.origin]
    report = runner.check_agent(agent, force=True)
    words = " ".join(str(check.get("detail") or "") for check in report["checks"])
    assert f"the owner holds no verified proof of {endpoint_host.origin}" in words
    assert not any(body for body in endpoint_host.bodies if b"message/send" in body)


@pytest.mark.parametrize("state", ["approved", "hidden", "rejected", "deleted"])
def test_a_redirect_to_anothers_card_gives_no_copy_on_submission_or_import(
    alice: APIClient,
    bob: APIClient,
    site: CardServer,
    django_capture_on_commit_callbacks: Any,
    state: str,
) -> None:
    """Bob's own URLs redirect to Alice's card, whatever state her agent is in: his agents
    store nothing, and her hidden text shows on no public door."""
    url = card_on(site, CARD, interface=site.url("/a2a"), name="Alice's secret weather")
    mine = registered(alice, url, django_capture_on_commit_callbacks)
    if state == "deleted":
        assert alice.delete(f"/api/v1/agents/{mine.pk}").status_code == 204
    elif state != "approved":
        Agent.objects.filter(pk=mine.pk).update(moderation=state)
    with running_server("127.0.0.2") as bobs:
        for path in ("/go", "/import-go"):
            bobs.serve(path, b"", status=302, headers={"Location": url})
        with django_capture_on_commit_callbacks(execute=False):
            submitted = bob.post("/api/v1/agents", {"url": bobs.url("/go")}, format="json")
        assert submitted.status_code == 202, submitted.content
        crawl_agent.apply(args=[submitted.json()["id"]]).get()
        with django_capture_on_commit_callbacks(execute=True):  # the import's task, eager
            urls = {"urls": [bobs.url("/import-go")]}
            assert bob.post("/api/v1/imports", urls, format="json").status_code == 202
        copies = Agent.objects.filter(submitted_by=bob.user)  # type: ignore[attr-defined]
    assert copies.count() == 2
    for copy in Agent.objects.filter(submitted_by=bob.user):  # type: ignore[attr-defined]
        assert copy.latest_snapshot_id is None and copy.last_error_code == "registered-elsewhere"
        assert str(mine.pk) not in copy.last_error
    anonymous = APIClient()
    public = anonymous.get("/api/v1/agents").json()["results"]
    assert [row["id"] for row in public] == ([str(mine.pk)] if state == "approved" else [])
    assert "secret" not in anonymous.get("/api/v1/skills").content.decode() or state == "approved"
