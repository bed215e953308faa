from __future__ import annotations

import json
from typing import Any

import pytest
from rest_framework.test import APIClient

from cards.models import Agent, Snapshot
from tests.factories import agent_from_card, minimal_card
from tests.support import CardServer

pytestmark = pytest.mark.django_db


def test_the_card_endpoint_returns_the_exact_bytes_with_an_etag(client_anon: APIClient) -> None:
    raw = b'{ "name" : "Spacing kept",\n  "description": "x" }\n'
    agent = agent_from_card(raw)
    response = client_anon.get(f"/api/v1/agents/{agent.pk}/card")
    assert response.status_code == 200
    assert response.content == raw
    assert response["Content-Type"] == "application/json"
    assert response["X-Content-Type-Options"] == "nosniff"
    etag = response["ETag"]
    again = client_anon.get(f"/api/v1/agents/{agent.pk}/card", HTTP_IF_NONE_MATCH=etag)
    assert again.status_code == 304
    assert again.content == b""


def test_a_document_that_is_not_json_is_served_as_octet_stream(client_anon: APIClient) -> None:
    agent = agent_from_card(b"<html><script>alert(1)</script></html>")
    response = client_anon.get(f"/api/v1/agents/{agent.pk}/card")
    assert response["Content-Type"] == "application/octet-stream"


def test_the_card_of_an_agent_never_fetched_is_a_problem(
    client_auth: APIClient, client_anon: APIClient, user: Any
) -> None:
    agent = Agent.objects.create(url="https://never.example.com", submitted_by=user)
    response = client_auth.get(f"/api/v1/agents/{agent.pk}/card")
    assert response.status_code == 409
    assert response.json()["type"] == "/problems/no-card"
    # Everyone else does not see an agent without a card at all (cards.reads.gate, issue 39).
    assert client_anon.get(f"/api/v1/agents/{agent.pk}/card").status_code == 404


def test_recrawl_needs_a_token_and_queues_a_crawl(
    client_anon: APIClient,
    client_auth: APIClient,
    card_server: CardServer,
    loopback_allowed: None,
    user: Any,
) -> None:
    url = card_server.serve("/c.json", json.dumps(minimal_card(name="Before")).encode())
    agent = Agent.objects.create(url=url, card_url=url, submitted_by=user)
    assert client_anon.post(f"/api/v1/agents/{agent.pk}/recrawl").status_code == 401
    response = client_auth.post(f"/api/v1/agents/{agent.pk}/recrawl")
    assert response.status_code == 202
    agent.refresh_from_db()
    assert agent.name == "Before"  # eager tasks in the test settings: the crawl already ran


def test_validate_reports_findings_for_an_inline_card_and_stores_nothing(
    client_anon: APIClient,
) -> None:
    card = minimal_card(
        skills=[
            {"id": "Bad_Id", "name": "x", "description": "y", "tags": ["t"]},
            {"id": "Bad_Id", "name": "x", "description": "y", "tags": ["t"]},
        ]
    )
    response = client_anon.post("/api/v1/validate", card, format="json")
    assert response.status_code == 200
    body = response.json()
    assert body["validation"]["valid"] is False
    pointers = {(f["code"], f["pointer"]) for f in body["validation"]["findings"]}
    assert any(pointer == "/skills/1/id" for _, pointer in pointers)
    assert body["shape"] == "v1.0"
    assert Agent.objects.count() == 0 and Snapshot.objects.count() == 0


def test_validate_normalises_a_v03_card(client_anon: APIClient) -> None:
    card = minimal_card()
    del card["supportedInterfaces"]
    card.update(
        {
            "url": "https://agent.example.com/a2a",
            "protocolVersion": "0.3.0",
            "preferredTransport": "JSONRPC",
        }
    )
    body = client_anon.post("/api/v1/validate", {"card": card}, format="json").json()
    assert body["shape"] == "v0.3"
    assert body["card"]["supportedInterfaces"][0]["url"] == "https://agent.example.com/a2a"


def test_validate_reports_duplicate_keys_and_invalid_json(client_anon: APIClient) -> None:
    body = client_anon.generic(
        "POST", "/api/v1/validate", b'{"name": "a", "name": "b"}', content_type="application/json"
    ).json()
    assert "json.duplicate-key" in {f["code"] for f in body["validation"]["findings"]}
    body = client_anon.generic(
        "POST", "/api/v1/validate", b'{"name": ', content_type="application/json"
    ).json()
    assert body["validation"]["valid"] is False
    assert "json.invalid" in {f["code"] for f in body["validation"]["findings"]}


def test_validate_fetches_by_url(
    client_anon: APIClient, card_server: CardServer, loopback_allowed: None
) -> None:
    card_server.serve("/.well-known/agent-card.json", json.dumps(minimal_card()).encode())
    body = client_anon.post("/api/v1/validate", {"url": card_server.origin}, format="json").json()
    assert body["source"]["fetched_url"] == card_server.url("/.well-known/agent-card.json")
    assert body["validation"]["valid"] is True
    assert Agent.objects.count() == 0


def test_validate_by_url_reports_a_fetch_failure_as_a_problem(
    client_anon: APIClient, card_server: CardServer, loopback_allowed: None
) -> None:
    response = client_anon.post(
        "/api/v1/validate", {"url": card_server.url("/missing.json")}, format="json"
    )
    assert response.status_code == 422
    assert response.json()["type"] == "/problems/fetch-failed"
    response = client_anon.post(
        "/api/v1/validate", {"url": "http://10.1.2.3/card.json"}, format="json"
    )
    assert response.status_code == 400


def test_openapi_and_health_endpoints_answer(client_anon: APIClient) -> None:
    assert client_anon.get("/api/schema").status_code == 200
    assert client_anon.get("/healthz").json() == {"status": "ok"}
    ready = client_anon.get("/readyz")
    assert ready.status_code == 200, ready.content
