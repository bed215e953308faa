"""Validation never fetches, is bounded in time, and caps what it takes on."""

from __future__ import annotations

import json
import re
import time
from typing import Any

import pytest
from rest_framework.test import APIClient

from cards.pipeline import check as card_check
from schemas_app.analysis import analyse_schema, clear_caches
from schemas_app.models import SchemaDocument, SchemaUse
from schemas_app.validation import validators
from tests.factories import agent_from_card
from tests.schemas.cards import SEED_MESSAGE, by_code, fight_card, schema_card
from tests.support import CardServer

pytestmark = pytest.mark.django_db


def post(api: APIClient, path: str, body: Any) -> Any:
    return api.post(path, data=json.dumps(body), content_type="application/json")


def test_a_remote_ref_is_never_fetched(card_server: CardServer, loopback_allowed: None) -> None:
    remote = card_server.serve("/schema.json", json.dumps({"type": "string"}).encode())
    meta = card_server.serve("/meta.json", json.dumps({"type": "object"}).encode())
    card = fight_card()
    card["schemas"]["remoteRef"] = {
        "type": "object",
        "properties": {"a": {"$ref": remote}, "b": {"$ref": remote + "#/definitions/x"}},
    }
    card["schemas"]["remoteDialect"] = {"$schema": meta, "type": "object"}
    card["schemas"]["nestedDialect"] = {
        "$defs": {"inner": {"$id": "https://inner.example.com/s", "$schema": meta}}
    }
    card["skills"][0]["inputModes"] += [
        "application/json;schema=remoteRef",
        "application/json;schema=remoteDialect",
        "application/json;schema=nestedDialect",
    ]
    findings = [f.as_dict() for f in card_check(raw=json.dumps(card).encode()).findings]
    assert len(by_code(findings, "schema.remote-ref")) == 2
    assert (
        by_code(findings, "schema.unknown-dialect")[0]["pointer"]
        == "/schemas/remoteDialect/$schema"
    )
    agent = agent_from_card(card)
    api = APIClient()
    for name in ("remoteRef", "remoteDialect", "nestedDialect"):
        response = post(
            api,
            f"/api/v1/agents/{agent.pk}/validate-payload",
            {"schema": name, "payload": {"a": 1}},
        )
        assert response.status_code == 200
    post(api, "/api/v1/schemas/match", {"payload": {"a": "x"}})
    message = json.loads(json.dumps(SEED_MESSAGE))
    message["parts"][0]["metadata"]["mimeType"] = "application/json;schema=remoteRef"
    assert post(api, f"/api/v1/agents/{agent.pk}/check-message", message).status_code == 200
    assert card_server.requests == []
    assert not SchemaDocument.objects.get(
        sha256=analyse_schema(card["schemas"]["remoteRef"]).sha256
    ).usable


def test_a_catastrophic_pattern_on_a_long_string_finishes_promptly() -> None:
    schema = {"type": "object", "properties": {"name": {"type": "string", "pattern": "^(a+)+$"}}}
    agent = agent_from_card(schema_card({"named": schema}))
    hostile = "a" * 100_000 + "!"
    assert re.compile("^(a+)+$")  # the same pattern that Python's re would take ages on
    api = APIClient()
    started = time.monotonic()
    response = post(
        api,
        f"/api/v1/agents/{agent.pk}/validate-payload",
        {"schema": "named", "payload": {"name": hostile}},
    )
    elapsed = time.monotonic() - started
    assert response.status_code == 200 and response.json()["outcome"] == "invalid"
    assert elapsed < 1.0, elapsed
    started = time.monotonic()
    body = post(api, "/api/v1/schemas/match", {"payload": {"name": hostile}}).json()
    assert body["results"] == [] and time.monotonic() - started < 1.0
    ok = post(
        api,
        f"/api/v1/agents/{agent.pk}/validate-payload",
        {"schema": "named", "payload": {"name": "a" * 100_000}},
    )
    assert ok.json()["outcome"] == "valid"


def test_backtracking_patterns_are_bounded_too() -> None:
    # Look-ahead and a back-reference force the backtracking engine; its budget bounds it.
    analysis = analyse_schema({"type": "string", "pattern": "^(?=a)(a|aa)+\\1$"})
    validator = analysis.validator()
    started = time.monotonic()
    validator.is_valid("a" * 5_000 + "!")
    assert time.monotonic() - started < 2.0


def test_a_schema_beyond_the_size_cap_is_not_stored(settings: Any) -> None:
    big = {"type": "object", "description": "x" * 70_000}
    agent = agent_from_card(schema_card({"huge": big}))
    assert SchemaDocument.objects.count() == 0
    use = SchemaUse.objects.get(agent=agent, role="declared")
    assert use.document is None and use.sha256
    body = post(
        APIClient(),
        f"/api/v1/agents/{agent.pk}/validate-payload",
        {"schema": "huge", "payload": {}},
    ).json()
    assert body["outcome"] == "cannot-validate"
    assert "schema.too-large" in [f["code"] for f in agent.findings]


def test_validators_are_cached_by_hash() -> None:
    agent_from_card(fight_card())
    clear_caches()
    api = APIClient()
    post(api, "/api/v1/schemas/match", {"payload": {"a": "x", "b": "y"}})
    misses = validators.misses
    assert len(validators) == 1
    post(api, "/api/v1/schemas/match", {"payload": {"a": "x", "b": "z"}})
    assert validators.misses == misses and validators.hits >= 1


def test_many_schemas_in_one_card_are_capped(settings: Any) -> None:
    settings.REGISTRY_SCHEMA_MAX_PER_CARD = 3
    card = schema_card({f"s{i}": {"type": "object"} for i in range(5)})
    findings = [f.as_dict() for f in card_check(raw=json.dumps(card).encode()).findings]
    assert len(by_code(findings, "schemas.too-many")) == 1
    agent = agent_from_card(card)
    assert SchemaUse.objects.filter(agent=agent, role="declared").count() == 3
