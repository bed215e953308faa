"""Signatures through the registry's own crawl: submit, crawl, read the API.

Cards are signed with a2a-sdk's signer and served with their JWKS from loopback servers;
127.0.0.1 and 127.0.0.2 are two origins.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.core.cache import cache
from rest_framework.test import APIClient

from cards import crawling
from cards.models import Agent, AgentEvent, PinnedKey
from tests.signatures.helpers import (
    card,
    jwks_bytes,
    new_key,
    public_jwk,
    raw_sign,
    sdk_sign,
    served,
)
from tests.support import CardServer, Reply, running_server

pytestmark = pytest.mark.django_db


@pytest.fixture
def other_origin() -> Iterator[CardServer]:
    with running_server("127.0.0.2") as server:
        yield server


def submit(client: APIClient, url: str, capture: Any) -> Agent:
    with capture(execute=True):
        response = client.post("/api/v1/agents", {"url": url}, format="json")
    assert response.status_code == 202, response.content
    return Agent.objects.get(pk=response.json()["id"])


@pytest.mark.parametrize("alg", ["EdDSA", "ES256", "RS256", "PS256"])
def test_a_card_signed_by_the_sdk_is_verified_through_a_crawl(
    alg: str,
    client_auth: APIClient,
    client_anon: APIClient,
    card_server: CardServer,
    loopback_allowed: None,
    django_capture_on_commit_callbacks: Any,
) -> None:
    key = new_key(alg)
    card_server.serve("/.well-known/jwks.json", jwks_bytes(public_jwk(key, "k1")))
    signed = sdk_sign(card(card_server.origin), key, alg=alg, kid="k1")
    card_server.serve("/.well-known/agent-card.json", served(signed, indent=2))
    agent = submit(client_auth, card_server.origin, django_capture_on_commit_callbacks)
    agent.refresh_from_db()
    assert agent.signature_status == "verified", agent.signature
    body = client_anon.get(f"/api/v1/agents/{agent.pk}").json()
    signature = body["signature"]
    assert signature["status"] == "verified" and signature["form"] == "a2a-sdk"
    assert signature["signatures"][0]["key_source"] == "well-known"
    assert len(signature["thumbprints"]) == 1
    assert signature["keys"][0]["thumbprint"] == signature["thumbprints"][0]
    signed = client_anon.get("/api/v1/agents", {"signed": "true"}).json()["results"]
    assert [row["id"] for row in signed] == [str(agent.pk)]
    assert client_anon.get("/api/v1/agents", {"signed": "false"}).json()["results"] == []
    # Signed is not a verified publisher: nobody proved the origin (issue 44).
    assert client_anon.get("/api/v1/agents", {"verified": "true"}).json()["results"] == []


def test_one_changed_character_makes_the_card_invalid(
    client_auth: APIClient,
    card_server: CardServer,
    loopback_allowed: None,
    django_capture_on_commit_callbacks: Any,
) -> None:
    key = new_key("ES256")
    card_server.serve("/.well-known/jwks.json", jwks_bytes(public_jwk(key, "k1")))
    signed = sdk_sign(card(card_server.origin), key, alg="ES256", kid="k1")
    signed["description"] = signed["description"].replace("Forecasts", "Forecastz")
    card_server.serve("/.well-known/agent-card.json", served(signed))
    agent = submit(client_auth, card_server.origin, django_capture_on_commit_callbacks)
    agent.refresh_from_db()
    assert agent.signature_status == "invalid"
    assert agent.status == "ok"  # the card is stored and indexed; its signature is reported


def test_a_key_from_another_origin_is_unbound(
    client_auth: APIClient,
    card_server: CardServer,
    other_origin: CardServer,
    loopback_allowed: None,
    django_capture_on_commit_callbacks: Any,
) -> None:
    key = new_key("EdDSA")
    other_origin.serve("/keys.json", jwks_bytes(public_jwk(key, "k1")))
    signed = sdk_sign(
        card(card_server.origin), key, alg="EdDSA", kid="k1", jku=other_origin.url("/keys.json")
    )
    card_server.serve("/.well-known/agent-card.json", served(signed))
    agent = submit(client_auth, card_server.origin, django_capture_on_commit_callbacks)
    agent.refresh_from_db()
    assert agent.signature_status == "unbound-key"
    assert agent.signature["signatures"][0]["key_source"] == "foreign-jku"
    assert agent.signature["thumbprints"] == []


def test_a_curator_pinned_key_binds_a_foreign_key(
    client_auth: APIClient,
    card_server: CardServer,
    loopback_allowed: None,
    django_capture_on_commit_callbacks: Any,
) -> None:
    key = new_key("EdDSA")
    signed = sdk_sign(card(card_server.origin), key, alg="EdDSA", kid="offline-key")
    card_server.serve("/.well-known/agent-card.json", served(signed))
    agent = submit(client_auth, card_server.origin, django_capture_on_commit_callbacks)
    agent.refresh_from_db()
    assert agent.signature_status == "key-unavailable"  # no JWKS published anywhere (404)
    PinnedKey.objects.create(agent=agent, jwks={"keys": [public_jwk(key, "offline-key")]})
    crawling.agent_crawl(agent_id=agent.pk)  # 304-less server: same content, verified again
    agent.refresh_from_db()
    assert agent.signature_status == "verified"
    assert agent.signature["signatures"][0]["key_source"] == "pinned"


def test_key_rotation_is_recorded_in_history(
    client_auth: APIClient,
    client_anon: APIClient,
    card_server: CardServer,
    loopback_allowed: None,
    django_capture_on_commit_callbacks: Any,
) -> None:
    old, new = new_key("ES256"), new_key("ES256")
    base = card(card_server.origin)
    card_server.serve("/.well-known/jwks.json", jwks_bytes(public_jwk(old, "2025")))
    card_server.serve(
        "/.well-known/agent-card.json", served(sdk_sign(base, old, alg="ES256", kid="2025"))
    )
    agent = submit(client_auth, card_server.origin, django_capture_on_commit_callbacks)
    first = client_anon.get(f"/api/v1/agents/{agent.pk}").json()["signature"]["thumbprints"]
    # The old key leaves the JWKS; the card is signed again with the new one.
    card_server.serve("/.well-known/jwks.json", jwks_bytes(public_jwk(new, "2026")))
    card_server.serve(
        "/.well-known/agent-card.json",
        served(sdk_sign({**base, "version": "1.0.1"}, new, alg="ES256", kid="2026")),
    )
    crawling.agent_crawl(agent_id=agent.pk)
    detail = client_anon.get(f"/api/v1/agents/{agent.pk}").json()["signature"]
    assert detail["status"] == "verified" and detail["thumbprints"] != first
    assert {(k["thumbprint"], k["current"]) for k in detail["keys"]} == {
        (first[0], False),
        (detail["thumbprints"][0], True),
    }
    event = AgentEvent.objects.get(agent=agent, kind="signing-key-changed")
    assert event.detail == {"previous": first, "current": detail["thumbprints"]}
    history = client_anon.get(f"/api/v1/agents/{agent.pk}/history").json()["results"]
    assert history[0]["changes"]["signing_key"] == {"from": first, "to": detail["thumbprints"]}
    assert history[0]["events"][0]["kind"] == "signing-key-changed"


def test_a_raw_form_signature_reports_vendor_fields_as_covered(
    client_auth: APIClient,
    card_server: CardServer,
    loopback_allowed: None,
    django_capture_on_commit_callbacks: Any,
) -> None:
    key = new_key("EdDSA")
    card_server.serve("/.well-known/jwks.json", jwks_bytes(public_jwk(key, "k1")))
    data = card(card_server.origin, **{"x-vendor": {"tier": 1.0}})
    card_server.serve(
        "/.well-known/agent-card.json", served(raw_sign(data, key, alg="EdDSA", kid="k1"))
    )
    agent = submit(client_auth, card_server.origin, django_capture_on_commit_callbacks)
    agent.refresh_from_db()
    assert agent.signature["status"] == "verified" and agent.signature["form"] == "raw"
    assert agent.signature["uncovered_fields"] == []


def test_validate_reports_the_signature_too(
    client_anon: APIClient, card_server: CardServer, loopback_allowed: None
) -> None:
    key = new_key("EdDSA")
    card_server.serve("/.well-known/jwks.json", jwks_bytes(public_jwk(key, "k1")))
    signed = sdk_sign(
        card(card_server.origin, schemas={"x": {"type": "object"}}), key, alg="EdDSA", kid="k1"
    )
    card_server.serve("/.well-known/agent-card.json", served(signed))
    by_url = client_anon.post("/api/v1/validate", {"url": card_server.origin}, format="json").json()
    assert by_url["signature"]["status"] == "verified"
    assert "schemas" in by_url["signature"]["uncovered_fields"]
    inline = client_anon.post(
        "/api/v1/validate",
        {"card": signed, "card_url": card_server.url("/.well-known/agent-card.json")},
        format="json",
    ).json()
    assert inline["signature"]["status"] == "verified"
    unbound = client_anon.post("/api/v1/validate", {"card": signed}, format="json").json()
    assert unbound["signature"]["status"] != "verified"
    assert Agent.objects.count() == 0


def test_a_304_verifies_a_signed_card_again_with_todays_keys(
    client_auth: APIClient,
    card_server: CardServer,
    loopback_allowed: None,
    django_capture_on_commit_callbacks: Any,
) -> None:
    """The card is unchanged (304), but the key it was signed with is no longer published: the
    stored card is verified again and its status says so, through the full save."""
    key = new_key("ES256")
    card_server.serve("/.well-known/jwks.json", jwks_bytes(public_jwk(key, "k1")))
    body = served(sdk_sign(card(card_server.origin), key, alg="ES256", kid="k1"))

    def agent_card(request: Any) -> Reply:
        if request.headers.get("If-None-Match") == '"v1"':
            return Reply(status=304, body=b"", headers={"ETag": '"v1"'})
        return Reply(body=body, headers={"Content-Type": "application/json", "ETag": '"v1"'})

    card_server.routes["/.well-known/agent-card.json"] = agent_card
    agent = submit(client_auth, card_server.origin, django_capture_on_commit_callbacks)
    agent.refresh_from_db()
    assert agent.signature_status == "verified", agent.signature
    card_server.serve("/.well-known/jwks.json", jwks_bytes(public_jwk(new_key("ES256"), "k2")))
    cache.clear()  # the JWKS fetched for the first crawl is kept for a while: let it expire
    assert crawling.agent_crawl(agent_id=agent.pk) == "not-modified"
    agent.refresh_from_db()
    assert agent.last_http_status == 304 and agent.status == "ok"
    assert agent.signature_status != "verified", agent.signature
    detail = APIClient().get(f"/api/v1/agents/{agent.pk}").json()
    assert detail["signature"]["status"] == agent.signature_status
    assert detail["crawl"]["last_http_status"] == 304
