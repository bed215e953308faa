from __future__ import annotations

from typing import Any

import pytest

from cards.ard import identifiers
from tests.ard.conftest import card


@pytest.mark.parametrize(
    "text",
    [
        "urn:air:acme.com:agent:assistant",
        "urn:air:acme.com:finance:trading:bot-1",
        "urn:air:hf.co:x",
    ],
)
def test_valid_identifiers(text: str) -> None:
    assert str(identifiers.parse(text)).lower() == text.lower()


@pytest.mark.parametrize(
    "text",
    [
        "urn:ai:acme.com:agent:x",
        "urn:air:acme.com",
        "urn:air::a:b",
        "https://acme.com/a",
        "",
        "urn:air:-x.com:a:b",
        "urn:air:a..b:c:d",
    ],
)
def test_invalid_identifiers(text: str) -> None:
    with pytest.raises(identifiers.InvalidIdentifier):
        identifiers.parse(text)


def test_decode_once_and_refuse_bad_escapes() -> None:
    assert identifiers.decode_path("urn%3Aair%3Aacme.com%3Aa%3Ab") == "urn:air:acme.com:a:b"
    for raw in (
        "urn%3Aair%3Aacme.com%3Aa%3Ab%",
        "urn:air:acme.com:a:%zz",
        "urn%253Aair%253Aa.b%253Ac",
    ):
        with pytest.raises(identifiers.InvalidIdentifier):
            identifiers.decode_path(raw)


def test_authority() -> None:
    assert identifiers.has_authority("acme.com", "acme.com")
    assert identifiers.has_authority("acme.com", "api.acme.com")
    assert not identifiers.has_authority("evil.acme.com", "acme.com")
    assert not identifiers.has_authority("notacme.com", "acme.com")
    assert identifiers.identity_domain("spiffe://acme.com/x") == "acme.com"
    assert identifiers.identity_domain("did:web:acme.com:agents") == "acme.com"


def test_derived_identifier_from_host_and_name_is_unique_and_stable(ingest: Any) -> None:
    body = card(
        "Weather Oracle",
        "Forecasts",
        [{"id": "f", "name": "Forecast", "description": "d", "tags": ["weather"]}],
    )
    first = ingest("https://wx.example.com/.well-known/agent-card.json", body)
    second = ingest("https://wx.example.com:8443/.well-known/agent-card.json", body)
    assert first.ard_identifier == "urn:air:wx.example.com:a2a:weather-oracle"
    assert second.ard_identifier == "urn:air:wx.example.com:a2a:weather-oracle-2"
    assert first.ard_identifier_source == "derived"
    # A new name does not change an identifier.
    renamed = card(
        "Storm Seer",
        "Forecasts",
        [{"id": "f", "name": "Forecast", "description": "d", "tags": ["weather"]}],
    )
    again = ingest("https://wx.example.com/.well-known/agent-card.json", renamed)
    assert again.ard_identifier == first.ard_identifier


def test_identifier_is_in_the_rest_detail_and_never_reused(ingest: Any, client_anon: Any) -> None:
    from django.utils import timezone

    body = card("Solo", "One agent", [{"id": "s", "name": "S", "description": "d", "tags": ["t"]}])
    agent = ingest("https://solo.example/.well-known/agent-card.json", body)
    detail = client_anon.get(f"/api/v1/agents/{agent.pk}").json()
    assert detail["ard"]["identifier"] == "urn:air:solo.example:a2a:solo"
    assert detail["ard_identifier"] == "urn:air:solo.example:a2a:solo"
    agent.deleted_at = timezone.now()
    agent.save()
    other = ingest("https://solo.example/agent.json", body)
    assert other.ard_identifier == "urn:air:solo.example:a2a:solo-2"


def test_assign_identifiers_command_fills_the_gaps(ingest: Any) -> None:
    from django.core.management import call_command

    from cards.models import Agent

    body = card(
        "Bulk", "Loaded in bulk", [{"id": "b", "name": "B", "description": "d", "tags": ["t"]}]
    )
    agent = ingest("https://bulk.example/.well-known/agent-card.json", body)
    Agent.objects.filter(pk=agent.pk).update(ard_identifier=None, ard_identifier_source="")
    call_command("assign_identifiers")
    agent.refresh_from_db()
    assert agent.ard_identifier == "urn:air:bulk.example:a2a:bulk"
    assert agent.ard_identifier_source == "derived"
