"""Malformed input gets a 400 in the protocol's own shape, never a 500 or a silent 200.

The four causes a probe found: NUL characters in paths and filters, lone surrogates in JSON
bodies, impossible dates (February 30th, offsets PostgreSQL refuses, times out of range once in
UTC) and query strings that are not UTF-8. ``/api/v1`` answers problem+json, ``/ard/`` its
``{errorCode, message}`` envelope; the API keeps its shape with ``DEBUG`` on as well.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client

from cards.models import Agent
from tests.factories import agent_from_card, minimal_card

pytestmark = pytest.mark.django_db

PROBLEM = "application/problem+json"

V1_GETS = [
    "/api/v1/schemas/a%00b",
    "/api/v1/schemas/a%00b/agents",
    "/api/v1/extensions/%00",
    "/api/v1/agents?updated_since=2026-02-30T00:00:00Z",
    "/api/v1/agents?updated_since=2026-01-01T00:00:00%2B99:00",
    "/api/v1/agents?updated_since=2026-01-01T00:00:00%2B24:00",
    "/api/v1/agents?updated_since=2026-13-01T00:00:00Z",
    "/api/v1/agents?q=%ff",
    "/api/v1/agents?q=%ed%a0%80",  # a surrogate, UTF-8 encoded: not UTF-8
    "/api/v1/agents?tag=%ff%fe",
    "/api/v1/agents?%ff=1",
    "/api/v1/agents?input_mode=%00",
    "/api/v1/tags?prefix=%ff",
    "/api/v1/skills?q=%c3",
    "/api/v1/modes?direction=",
    "/api/v1/schemas/Contract/agents?direction=",
    "/api/v1/agents?mode=",
]
V1_POSTS = [
    ("/api/v1/agents", '{"url": "https://a.example/\\ud800"}'),
    ("/api/v1/imports", '{"urls": ["https://a.example/\\udfff"]}'),
    ("/api/v1/validate", '{"card": {"name": "\\ud800"}}'),
    ("/api/v1/validate", '{"name": "x", "skills": [{"\\ud800": 1}]}'),
    ("/api/v1/schemas/match", '{"payload": "\\ud800"}'),
    ("/api/v1/schemas/match", "[" * 100_000),
]
ARD_GETS = [
    "/ard/agents?filter=tags%3D%00",
    "/ard/agents?filter=displayName%3D%00",
    "/ard/agents?filter=createdAfter%3E2026-02-30",
    "/ard/agents?filter=updatedAfter%3E2026-01-01T00:00:00%2B99:00",
    "/ard/agents?filter=%ff",
    "/ard/agents?updatedSince=2026-02-30T00:00:00Z",
    "/ard/agents?updatedSince=2026-01-01T00:00:00%2B99:00",
    "/ard/agents?orderBy=%00",
    "/ard/agents?pageSize=%ff",
    "/ard/agents?%ff=1",
    "/ard/agents/urn:air:a%00:b:c",
]
ARD_POSTS = [
    ("/ard/search", '{"query": {"text": "\\ud800"}}'),
    ("/ard/search", '{"query": {"text": "x", "filter": {"tags": ["\\ud800"]}}}'),
    ("/ard/search", '{"query": {"text": "x"}, "pageToken": "\\udc00"}'),
    ("/ard/explore", '{"query": {"filter": {"inputModes": ["\\ud800"]}}, "resultType": {}}'),
    ("/ard/search", "[" * 30_000),
]


@pytest.fixture
def client() -> Client:
    agent_from_card(minimal_card(name="Present", defaultInputModes=["application/json"]))
    return Client(raise_request_exception=False)


def _problem(response: Any) -> dict[str, Any]:
    assert response.status_code == 400, (response.status_code, response.content[:300])
    assert response["Content-Type"] == PROBLEM
    body = response.json()
    assert body["status"] == 400 and body["detail"] and body["type"].startswith("/problems/")
    return body


def _envelope(response: Any) -> dict[str, Any]:
    assert response.status_code == 400, (response.status_code, response.content[:300])
    body = response.json()
    assert body["errorCode"] == "INVALID_ARGUMENT" and body["message"]
    return body


@pytest.mark.parametrize("url", V1_GETS)
def test_v1_reads_refuse_malformed_parameters(client: Client, url: str) -> None:
    _problem(client.get(url))


@pytest.mark.parametrize(("url", "body"), V1_POSTS)
def test_v1_bodies_must_be_unicode_text(client: Client, token: str, url: str, body: str) -> None:
    auth = f"Token {token}"  # a real account: submissions need one
    _problem(client.post(url, data=body, content_type="application/json", HTTP_AUTHORIZATION=auth))


@pytest.mark.parametrize("url", ARD_GETS)
def test_ard_reads_refuse_malformed_parameters(client: Client, url: str) -> None:
    _envelope(client.get(url))


@pytest.mark.parametrize(("url", "body"), ARD_POSTS)
def test_ard_bodies_must_be_unicode_text(client: Client, url: str, body: str) -> None:
    _envelope(client.post(url, data=body, content_type="application/json"))


def test_dates_are_read_in_utc_at_the_edges(client: Client) -> None:
    """Every RFC 3339 time is an instant, whatever its offset (RFC 3339 allows up to 23:59,
    PostgreSQL only 15:59: it is moved to UTC first); past the ends of the calendar in UTC it is
    the first or last instant there is. Such times were a 500 from PostgreSQL."""
    for since, everything in (
        ("7240-02-16T19:56:21%2B19:10", False),
        ("2000-01-01T00:00:00-23:59", True),
        ("0001-01-01T00:00:00%2B01:00", True),
        ("9999-12-31T23:59:59-01:00", False),
    ):
        response = client.get(f"/api/v1/agents?updated_since={since}")
        assert response.status_code == 200, response.content
        assert bool(response.json()["results"]) == everything, since
        feed = client.get(f"/ard/agents?updatedSince={since}")
        assert feed.status_code == 200, feed.content
        assert bool(feed.json()["items"]) == everything, since
    assert client.get("/ard/agents?filter=createdAfter%3E2000-02-29").status_code == 200
    # A correctly encoded U+FFFD is text like any other.
    assert client.get("/api/v1/agents?q=%EF%BF%BD").status_code == 200


@pytest.mark.parametrize("debug", [False, True])
def test_the_api_answers_problem_json_in_every_mode(
    client: Client, settings: Any, debug: bool
) -> None:
    settings.DEBUG = debug
    for url in ("/api/v1/agents/not-a-uuid", "/api/v1/nothing", "/api/nothing", "/api"):
        response = client.get(url)
        assert response.status_code == 404 and response["Content-Type"] == PROBLEM, url
        assert json.loads(response.content)["type"] == "/problems/not-found"
    ard = client.get("/ard/nothing")
    assert ard.status_code == 404 and ard.json()["errorCode"] == "NOT_FOUND"


def test_enumerated_parameters_refuse_an_empty_value(client: Client) -> None:
    agent = Agent.objects.get(name="Present")
    for url in (f"/api/v1/agents/{agent.pk}/attestation?format=", "/api/v1/modes?direction="):
        body = _problem(client.get(url))
        assert body["errors"][0]["pointer"] in ("#/format", "#/direction")
    assert client.get(f"/api/v1/agents/{agent.pk}/attestation?format=json").status_code == 200


def test_blank_values_count_against_the_tag_limit_and_empty_media_types_are_no_filter(
    client: Client,
) -> None:
    """The document says at most 10 ``tag`` values and a media type or nothing; the API reads
    them the same way (schemathesis found 16 blank tags accepted)."""
    for path in ("/api/v1/agents", "/api/v1/skills"):
        body = _problem(client.get(path + "?" + "&".join(["tag="] * 11)))
        assert body["errors"][0]["pointer"] == "#/tag"
        assert client.get(path + "?input_mode=&output_mode=").status_code == 200
