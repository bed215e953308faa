"""The ARD Registry API's contract, checked by the project itself (docs/ard.md)."""

from __future__ import annotations

import json
import time
from typing import Any
from urllib.parse import quote

import pytest
from django.test import Client
from django.utils import timezone

from cards.models import Agent

pytestmark = pytest.mark.django_db


def post(client: Client, path: str, body: Any, **extra: Any) -> Any:
    data = body if isinstance(body, bytes | str) else json.dumps(body)
    return client.post(path, data=data, content_type="application/json", **extra)


def search(client: Client, text: str, **more: Any) -> Any:
    return post(client, "/ard/search", {"query": {"text": text, **more.pop("query", {})}, **more})


def assert_error(response: Any, status: int, code: str = "INVALID_ARGUMENT") -> dict[str, Any]:
    assert response.status_code == status, response.content
    body = response.json()
    assert body["errorCode"] == code and body["message"]
    return body


def test_search_finds_by_need_with_the_result_shape(client: Client, demo: dict[str, Agent]) -> None:
    response = search(client, "weather forecast for my city", federation="none")
    assert response.status_code == 200
    results = response.json()["results"]
    assert results and results[0]["identifier"] == demo["weather"].ard_identifier
    for item in results:
        assert set(item) >= {"identifier", "displayName", "type", "url", "score", "source"}
        assert isinstance(item["score"], int) and 0 <= item["score"] <= 100
        assert item["type"] == "application/a2a-agent-card+json"
        assert item["source"] == "http://testserver/ard/"


def test_a_need_no_agent_serves_has_no_confident_result(
    client: Client, demo: dict[str, Agent]
) -> None:
    # Recall first (docs/search.md): weak matches above the noise floor are listed, never as
    # confident; a caller who wants silence asks for a minimum score.
    for results in (
        search(client, "zxqv plorf wibble").json()["results"],
        client.get("/api/v1/agents?q=zxqv+plorf+wibble").json()["results"],
    ):
        assert all(not item["confident"] and item["score"] < 50 for item in results), results
    silent = client.get("/api/v1/agents?q=zxqv+plorf+wibble&min_score=50").json()["results"]
    assert silent == []


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ({"inputModes": ["application/json;schema=fightComparison"]}, {"fight-club"}),
        ({"inputModes": "application/json; schema=fightComparison"}, {"fight-club"}),
        ({"schema": ["fightComparison"]}, {"fight-club"}),
        ({"tags": ["translation"]}, {"polyglot"}),
        ({"capabilities": ["translate-html"]}, {"polyglot"}),
        ({"publisher": ["weather.demo.example"]}, {"weather"}),
        ({"type": ["application/mcp-server-card+json"]}, set()),
        ({"signature": ["verified"]}, set()),
        (
            {
                "extensions": [
                    "https://raw.githubusercontent.com/facultyai/a2a-extension-object-schemas/refs/heads/main/v1"
                ]
            },
            {"fight-club"},
        ),
    ],
)
def test_filters(
    client: Client, demo: dict[str, Agent], filters: dict[str, Any], expected: set[str]
) -> None:
    # A filter-only question: the text is broad, the filter decides.
    response = post(
        client,
        "/ard/explore",
        {"query": {"filter": filters}, "resultType": {"facets": [{"field": "publisher"}]}},
    )
    assert response.status_code == 200, response.content
    publishers = {
        b["value"].split(".")[0] for b in response.json()["facets"]["publisher"]["buckets"]
    }
    assert publishers == expected


@pytest.mark.parametrize(
    "body",
    [
        b"{not json",
        {"query": {}},  # ARD 5.3.2: search needs query.text (an empty one lists everything)
        {"query": {"text": 5}},
        {"query": "weather"},
        {"query": {"text": "x"}, "pageSize": 0},
        {"query": {"text": "x"}, "pageSize": 101},
        {"query": {"text": "x"}, "pageSize": "ten"},
        {"query": {"text": "x"}, "pageToken": "forged-token"},
        {"query": {"text": "x"}, "federation": "everywhere"},
        {"query": {"text": "x"}, "surprise": 1},
        {"query": {"text": "x", "filter": {"colour": ["red"]}}},
        {"query": {"text": "x", "filter": {"tags": [1]}}},
        {"query": {"text": "x", "filter": {"inputModes": ["not a type"]}}},
        {"query": {"text": "x", "filter": {"health": ["fine"]}}},
        {"query": {"text": "x" * 100_000}},
        [1, 2],
    ],
)
def test_bad_search_input_gets_the_envelope(client: Client, body: Any) -> None:
    response = post(client, "/ard/search", body)
    assert 400 <= response.status_code < 500
    assert_error(response, response.status_code, response.json()["errorCode"])
    assert response.json()["errorCode"] == "INVALID_ARGUMENT"


def test_unknown_filter_term_is_named(client: Client) -> None:
    body = assert_error(search(client, "x", query={"filter": {"colour": "red"}}), 400)
    assert "colour" in body["message"]


def test_paging_and_tokens_bound_to_the_query(client: Client, demo: dict[str, Agent]) -> None:
    first = search(client, "maps", pageSize=1, federation="none").json()
    assert len(first["results"]) == 1 and first["pageToken"]
    second = search(
        client, "maps", pageSize=1, pageToken=first["pageToken"], federation="none"
    ).json()
    assert (
        second["results"]
        and second["results"][0]["identifier"] != first["results"][0]["identifier"]
    )
    assert_error(search(client, "weather", pageSize=1, pageToken=first["pageToken"]), 400)


def test_hidden_and_deleted_agents_never_show(client: Client, demo: dict[str, Agent]) -> None:
    weather = demo["weather"]
    Agent.objects.filter(pk=weather.pk).update(moderation="hidden")
    assert weather.ard_identifier not in json.dumps(search(client, "weather forecast").json())
    explore = post(
        client,
        "/ard/explore",
        {"resultType": {"facets": [{"field": "publisher"}, {"field": "tags"}]}},
    ).json()
    assert "weather.demo.example" not in json.dumps(explore) and '"weather"' not in json.dumps(
        explore
    )
    assert weather.ard_identifier not in json.dumps(client.get("/ard/agents").json())
    assert client.get(f"/ard/agents/{weather.ard_identifier}").status_code == 404
    Agent.objects.filter(pk=demo["polyglot"].pk).update(deleted_at=timezone.now())
    assert "polyglot" not in json.dumps(client.get("/ard/agents").json())


def test_explore_facets_and_the_shared_cutoff(client: Client, demo: dict[str, Agent]) -> None:
    everything = post(
        client,
        "/ard/explore",
        {
            "resultType": {
                "facets": [
                    {"field": "type"},
                    {"field": "tags", "limit": 2},
                    {"field": "inputModes", "minCount": 2},
                ]
            }
        },
    ).json()
    assert everything["resultType"] == "facets"
    assert everything["facets"]["type"]["buckets"] == [
        {"value": "application/a2a-agent-card+json", "count": 4}
    ]
    tags = everything["facets"]["tags"]
    assert len(tags["buckets"]) == 2 and tags["otherCount"] > 0
    assert all(b["count"] >= 2 for b in everything["facets"]["inputModes"]["buckets"])
    for text in ("translate a web page into French", "zxqv plorf wibble", "maps"):
        found = search(client, text, pageSize=100, federation="none").json()["results"]
        facets = post(
            client,
            "/ard/explore",
            {"query": {"text": text}, "resultType": {"facets": [{"field": "type"}]}},
        ).json()
        buckets = facets["facets"]["type"]["buckets"]
        assert (buckets[0]["count"] if buckets else 0) == len(found)


def test_explore_bad_input(client: Client) -> None:
    assert_error(post(client, "/ard/explore", {"query": {"text": "x"}}), 400)
    assert_error(
        post(client, "/ard/explore", {"resultType": {"facets": [{"field": "colour"}]}}), 400
    )
    assert_error(
        post(client, "/ard/explore", {"resultType": {"facets": [{"field": "type", "limit": 0}]}}),
        400,
    )
    assert_error(client.get("/ard/explore"), 405)


def test_list_is_deterministic_and_pages(client: Client, demo: dict[str, Agent]) -> None:
    first = client.get("/ard/agents?pageSize=3").json()
    ids = [item["identifier"] for item in first["items"]]
    assert ids == sorted(ids) and first["pageToken"]
    rest = client.get(f"/ard/agents?pageSize=3&pageToken={first['pageToken']}").json()
    assert [i["identifier"] for i in rest["items"]] == sorted(
        a.ard_identifier for a in demo.values()
    )[3:]
    by_name = client.get("/ard/agents?orderBy=displayName%20DESC").json()["items"]
    assert [i["displayName"] for i in by_name] == sorted(
        (i["displayName"] for i in by_name), reverse=True
    )
    only = client.get(
        "/ard/agents",
        {"filter": "type = 'application/a2a-agent-card+json' AND tags = 'translation,weather'"},
    ).json()
    assert {i["displayName"] for i in only["items"]} == {"Polyglot Translator", "Weatherly"}
    named = client.get(
        "/ard/agents", {"filter": "displayName = 'oracle' AND createdAfter > '2020-01-01'"}
    ).json()
    assert [i["displayName"] for i in named["items"]] == ["Fight Club Oracle"]
    for bad in (
        {"filter": "colour = 'red'"},
        {"filter": "what"},
        {"orderBy": "score"},
        {"pageSize": "0"},
        {"x": "1"},
        {"pageToken": "nope"},
    ):
        assert_error(client.get("/ard/agents", bad), 400)


def test_lookup_by_identifier(client: Client, demo: dict[str, Agent]) -> None:
    fight = demo["fight-club"]
    response = client.get(f"/ard/agents/{fight.ard_identifier}")
    assert response.status_code == 200
    entry = response.json()
    assert (
        entry["identifier"] == fight.ard_identifier and entry["displayName"] == "Fight Club Oracle"
    )
    assert response["ETag"] and "max-age" in response["Cache-Control"]
    assert (
        client.get(
            f"/ard/agents/{fight.ard_identifier}", HTTP_IF_NONE_MATCH=response["ETag"]
        ).status_code
        == 304
    )
    encoded = client.get("/ard/agents/" + quote(fight.ard_identifier, safe=""))
    assert encoded.status_code == 200 and encoded.json()["identifier"] == fight.ard_identifier
    assert_error(client.get("/ard/agents/urn:air:nobody.example:a2a:ghost"), 404, "NOT_FOUND")
    for bad in (
        "not-an-urn",
        "urn%253Aair%253Ax.com%253Aa%253Ab",
        "urn:air:x.com:a:%zz",
        "urn:air:x.com:a:%ff%fe",
    ):
        assert_error(client.get("/ard/agents/" + bad), 400)


def test_updated_since_feeds_mirrors_with_deletions(client: Client, demo: dict[str, Agent]) -> None:
    start = timezone.now()
    time.sleep(0.01)
    feed = client.get("/ard/agents", {"updatedSince": start.isoformat()}).json()
    assert feed["items"] == [] and feed["removed"] == []
    Agent.objects.filter(pk=demo["polyglot"].pk).update(
        deleted_at=timezone.now(), updated_at=timezone.now()
    )
    feed = client.get("/ard/agents", {"updatedSince": start.isoformat()}).json()
    assert feed["removed"] == [
        {
            "identifier": demo["polyglot"].ard_identifier,
            "updatedAt": feed["removed"][0]["updatedAt"],
        }
    ]
    assert feed["nextUpdatedSince"]
    everything = client.get(
        "/ard/agents", {"updatedSince": "2000-01-01T00:00:00Z", "pageSize": 2}
    ).json()
    assert len(everything["items"]) + len(everything["removed"]) == 2 and everything["pageToken"]
    assert_error(client.get("/ard/agents", {"updatedSince": "yesterday"}), 400)


def test_unknown_operations_and_methods(client: Client) -> None:
    assert_error(client.get("/ard/nothing-here"), 404, "NOT_FOUND")
    assert_error(client.get("/ard/search"), 405)
    assert_error(post(client, "/ard/agents", {}), 405)


def test_own_manifest(client: Client) -> None:
    manifest = client.get("/.well-known/ard.json").json()
    registry = manifest["entries"][0]
    assert (
        registry["type"] == "application/ai-registry+json"
        and registry["url"] == "http://testserver/ard/"
    )
    assert manifest["specVersion"] == "1.0"
    assert client.get("/.well-known/ai-catalog.json").json() == manifest
