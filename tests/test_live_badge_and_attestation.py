"""The live outcome on the badge (``?show=live``) and in the signed attestation, verified offline
with PyJWT against the JWKS (docs/badges-and-attestations.md)."""

from __future__ import annotations

import base64
import datetime as dt
import json
import xml.etree.ElementTree as ET
from typing import Any

import jwt
import pytest
from django.test import Client

from cards.models import Agent
from tests.factories import agent_from_card, minimal_card
from tests.live_reports import failing_method, passing_get, record

pytestmark = pytest.mark.django_db

SVG = "{http://www.w3.org/2000/svg}"
ISSUER = "http://testserver"
T0 = dt.datetime(2026, 11, 20, 8, 30, tzinfo=dt.UTC)
T1 = dt.datetime(2026, 11, 21, 9, 45, 30, tzinfo=dt.UTC)


@pytest.fixture
def agent() -> Agent:
    return agent_from_card(minimal_card(name="Live agent"))


def message(response: Any) -> str:
    """The badge's right-hand text (the state it shows)."""
    root = ET.fromstring(response.content)
    return [node.text or "" for node in root.iter(f"{SVG}text")][2]


def fill(response: Any) -> str:
    root = ET.fromstring(response.content)
    return [rect.get("fill") or "" for rect in root.iter(f"{SVG}rect")][2]  # after clip, label


# --- badge ------------------------------------------------------------------------------------


def test_the_live_badge_follows_the_live_outcome(client: Client, agent: Agent) -> None:
    never = client.get(f"/badges/{agent.pk}.svg", {"show": "live"})
    assert never.status_code == 200
    assert message(never) == "live: not checked" and fill(never) == "#9f9f9f"

    record(agent, [passing_get()], at=T0)
    passing = client.get(f"/badges/{agent.pk}.svg", {"show": "live"})
    assert message(passing) == "live: pass" and fill(passing) == "#44cc11"

    record(agent, [passing_get(), failing_method()], at=T1)
    failing = client.get(f"/badges/{agent.pk}.svg", {"show": "live", "label": "my agent"})
    assert message(failing) == "live: fail" and fill(failing) == "#e05d44"
    assert "my agent: live: fail" in failing.content.decode()

    # Without ?show=live (or with anything else) the badge is the card's, as before (the live
    # checks failed last: the card's facts only).
    for query in ({}, {"show": "card"}, {"show": "<script>"}):
        assert message(client.get(f"/badges/{agent.pk}.svg", query)) == "valid, unsigned"


def test_the_live_badge_caches_and_revalidates_as_the_card_badge_does(
    client: Client, agent: Agent
) -> None:
    record(agent, [passing_get()], at=T0)
    url = f"/badges/{agent.pk}.svg?show=live"
    first = client.get(url)
    card = client.get(f"/badges/{agent.pk}.svg")
    assert first["Cache-Control"] == card["Cache-Control"] == "max-age=300, s-maxage=300"
    assert first["Content-Type"] == "image/svg+xml; charset=utf-8"
    assert first["ETag"] != card["ETag"]  # another picture, another validator
    assert client.get(url, HTTP_IF_NONE_MATCH=first["ETag"]).status_code == 304
    # The card badge's ETag does not revalidate the live badge.
    assert client.get(url, HTTP_IF_NONE_MATCH=card["ETag"]).status_code == 200
    record(agent, [failing_method()], at=T1)  # the outcome changed: a new body and ETag
    changed = client.get(url, HTTP_IF_NONE_MATCH=first["ETag"])
    assert changed.status_code == 200 and changed["ETag"] != first["ETag"]
    assert message(changed) == "live: fail"


def test_a_hidden_agent_has_no_live_badge_either(client: Client, agent: Agent) -> None:
    record(agent, [passing_get()], at=T0)
    Agent.objects.filter(pk=agent.pk).update(moderation="hidden")
    response = client.get(f"/badges/{agent.pk}.svg", {"show": "live"})
    assert response.status_code == 404 and message(response) == "unknown agent"


# --- attestation ------------------------------------------------------------------------------


def verified_claims(client: Client, agent: Agent) -> dict[str, Any]:
    """What an offline verifier reads: the token checked against the published JWKS."""
    keys = jwt.PyJWKSet.from_dict(client.get("/.well-known/jwks.json").json())
    response = client.get(f"/api/v1/agents/{agent.pk}/attestation")
    assert response.status_code == 200 and response["Content-Type"] == "application/jwt"
    token = response.content.decode("ascii")
    key = keys[jwt.get_unverified_header(token)["kid"]]
    return jwt.decode(token, key=key, algorithms=["EdDSA"], issuer=ISSUER)


def test_the_attestation_carries_the_live_outcome_and_when_it_was_observed(
    client: Client, agent: Agent
) -> None:
    record(agent, [passing_get(), failing_method()], at=T0)
    record(agent, [passing_get(), failing_method()], at=T1, messages=True)
    claims = verified_claims(client, agent)
    assert claims["live"] == {
        "outcome": "fail",
        "checked_at": int(T1.timestamp()),
        "endpoint": "answers",
        "counts": {"pass": 1, "warn": 0, "fail": 1, "skip": 0},
        "failing_since": int(T0.timestamp()),
        "probe_messages": True,
    }
    assert claims["iat"] >= claims["live"]["checked_at"]


def test_an_agent_never_checked_is_attested_as_not_checked(client: Client, agent: Agent) -> None:
    assert verified_claims(client, agent)["live"] == {
        "outcome": "not-checked",
        "checked_at": None,
        "endpoint": "not-checked",
        "counts": None,
        "failing_since": None,
        "probe_messages": False,
    }


def test_a_changed_live_outcome_cannot_be_claimed_with_an_old_signature(
    client: Client, agent: Agent
) -> None:
    record(agent, [failing_method()], at=T0, endpoint="unreachable")
    response = client.get(f"/api/v1/agents/{agent.pk}/attestation", {"format": "json"})
    token, claims = response.json()["token"], response.json()["claims"]
    assert claims["live"]["outcome"] == "fail" and claims["live"]["endpoint"] == "unreachable"
    header, _, signature = token.split(".")
    forged = {**claims, "live": {**claims["live"], "outcome": "pass", "endpoint": "answers"}}
    payload = base64.urlsafe_b64encode(json.dumps(forged).encode()).rstrip(b"=").decode()
    keys = jwt.PyJWKSet.from_dict(client.get("/.well-known/jwks.json").json())
    key = keys[jwt.get_unverified_header(token)["kid"]]
    with pytest.raises(jwt.InvalidSignatureError):
        jwt.decode(f"{header}.{payload}.{signature}", key=key, algorithms=["EdDSA"], issuer=ISSUER)
