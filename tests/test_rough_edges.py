"""Rough edges in plain sight (issue 39, item 9): the catalogue's own 404 page with DEBUG on
and off, ``/robots.txt``, an answer at ``/ard/`` (where every ARD result's ``source`` points),
ARD's OpenAPI document and its docs page, "My agents" for a reader who is not signed in."""

from __future__ import annotations

import urllib.robotparser
from typing import Any

import pytest
from django.test import Client
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012
from rest_framework.test import APIClient

from cards.catalogue.common import CONTENT_SECURITY_POLICY
from tests.factories import agent_from_card, minimal_card

pytestmark = pytest.mark.django_db

TECHNICAL_404 = "Using the URLconf defined in"
HTML = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"


# --- 404 -----------------------------------------------------------------------------------


@pytest.mark.parametrize("debug", [True, False])
@pytest.mark.parametrize("path", ["/agents/nope", "/agents/nope/more", "/agents/12345"])
def test_a_path_under_agents_that_is_not_an_id_gets_the_catalogues_404(
    client: Client, settings: Any, debug: bool, path: str
) -> None:
    settings.DEBUG = debug
    response = client.get(path, HTTP_ACCEPT=HTML)
    assert response.status_code == 404
    body = response.content.decode()
    assert TECHNICAL_404 not in body and "urlpatterns" not in body
    assert "<h1>Page not found</h1>" in body and "/agents/</code> followed by its id" in body
    assert response["Content-Security-Policy"] == CONTENT_SECURITY_POLICY


def test_an_unknown_id_still_says_no_such_agent(client: Client) -> None:
    response = client.get("/agents/00000000-0000-4000-8000-000000000000")
    assert response.status_code == 404 and "<h1>No such agent</h1>" in response.content.decode()


def test_handler404_answers_people_with_the_page_and_programs_with_their_doors_shape(
    client: Client,
) -> None:
    page = client.get("/no-such-page", HTTP_ACCEPT=HTML)
    assert page.status_code == 404 and page["Content-Type"].startswith("text/html")
    assert "<h1>Page not found</h1>" in page.content.decode()
    assert "Back to the catalogue" in page.content.decode()
    # curl, SDKs and scanners (no text/html in Accept) get the JSON they always got.
    plain = client.get("/no-such-page")
    assert plain.status_code == 404 and plain["Content-Type"] == "application/problem+json"
    for path, shape in (("/api/v1/nothing", "type"), ("/ard/nothing", "errorCode")):
        answer = client.get(path, HTTP_ACCEPT=HTML)
        assert answer.status_code == 404 and shape in answer.json(), path


# --- robots.txt ----------------------------------------------------------------------------


def test_robots_txt_lets_crawlers_into_the_catalogue_only(client: Client) -> None:
    response = client.get("/robots.txt")
    assert response.status_code == 200
    assert response["Content-Type"] == "text/plain; charset=utf-8"
    text = response.content.decode()
    assert text.startswith("# ") and "work for the registry" in text  # it says why
    robots = urllib.robotparser.RobotFileParser()
    robots.parse(text.splitlines())
    for allowed in ("/", "/agents/3f1c0000-0000-4000-8000-000000000000", "/badges/x.svg"):
        assert robots.can_fetch("SomeBot", allowed), allowed
    for refused in ("/api/v1/agents", "/api/docs", "/admin/", "/ard/agents", "/mcp", "/a2a"):
        assert not robots.can_fetch("SomeBot", refused), refused
    assert not robots.can_fetch("SomeBot", "/my-agents")
    # Searches: RFC 9309's wildcard (Python's parser reads it literally, so it is checked here).
    assert "\nDisallow: /*?\n" in text


# --- /ard/ and ARD's OpenAPI document ------------------------------------------------------


def test_ard_answers_at_the_url_its_results_name_as_their_source(client: Client) -> None:
    agent_from_card(minimal_card(name="Sourced agent"))
    found = client.post(
        "/ard/search",
        {"query": {"text": "sourced agent"}, "federation": "none"},
        content_type="application/json",
    ).json()["results"]
    source = found[0]["source"]
    assert source == "http://testserver/ard/"
    index = client.get("/ard/")
    assert index.status_code == 200 and index["Content-Type"] == "application/json"
    entry = index.json()
    assert entry["type"] == "application/ai-registry+json" and entry["url"] == source
    assert entry["identifier"].startswith("urn:air:testserver:")
    # The same entry the registry's own manifest lists for its registry API.
    manifest = client.get("/.well-known/ard.json").json()
    listed = next(e for e in manifest["entries"] if e["type"] == entry["type"])
    assert {k: v for k, v in entry.items() if k != "metadata"} == listed
    # ai-catalog metadata values are scalars; each URL there answers.
    metadata = entry["metadata"]
    assert all(isinstance(value, str) for value in metadata.values())
    for name in ("agents", "manifest", "openapi", "documentation"):
        path = metadata[name].removeprefix("http://testserver")
        assert client.get(path).status_code == 200, name
    search = metadata["search"].removeprefix("http://testserver")
    explore = metadata["explore"].removeprefix("http://testserver")
    asked = {"query": {"text": "agent"}, "resultType": {"facets": [{"field": "tags"}]}}
    assert client.post(explore, asked, content_type="application/json").status_code == 200
    assert (
        client.post(
            search, {"query": {"text": "agent"}}, content_type="application/json"
        ).status_code
        == 200
    )
    # Other methods get ARD's envelope, as everywhere under /ard/.
    refused = client.post("/ard/", {}, content_type="application/json")
    assert refused.status_code == 405 and refused.json()["errorCode"] == "INVALID_ARGUMENT"


def _validator(document: dict[str, Any], *steps: str) -> Draft202012Validator:
    """A validator for the schema at ``steps`` inside ``document`` ($refs resolved in it)."""
    pointer = "/".join(step.replace("~", "~0").replace("/", "~1") for step in steps)
    registry = Registry().with_resource("urn:ard", Resource(document, DRAFT202012))
    return Draft202012Validator({"$ref": f"urn:ard#/{pointer}"}, registry=registry)


def test_the_ard_openapi_document_describes_what_the_api_answers(client: Client) -> None:
    agent = agent_from_card(
        minimal_card(
            name="Documented",
            defaultInputModes=["application/json;schema=Documented"],
            schemas={"Documented": {"type": "object"}},
        )
    )
    response = client.get("/ard/openapi.json")
    assert response.status_code == 200
    document = response.json()
    assert document["openapi"].startswith("3.1")
    assert document["servers"] == [{"url": "http://testserver"}]
    for schema in document["components"]["schemas"].values():
        Draft202012Validator.check_schema(schema)
    routes = {"/ard/", "/ard/search", "/ard/explore", "/ard/agents", "/ard/agents/{identifier}"}
    assert set(document["paths"]) == routes

    def check(path: str, method: str, answer: Any) -> None:
        described = document["paths"][path][method]["responses"][str(answer.status_code)]
        schema = described["content"]["application/json"]["schema"]
        name = schema["$ref"].rsplit("/", 1)[1]
        errors = list(
            _validator(document, "components", "schemas", name).iter_errors(answer.json())
        )
        assert errors == [], (path, method, answer.status_code, [e.message for e in errors])

    identifier = agent.ard_identifier
    post = {"content_type": "application/json"}
    check("/ard/", "get", client.get("/ard/"))
    check("/ard/agents", "get", client.get("/ard/agents"))
    check("/ard/agents", "get", client.get("/ard/agents", {"pageSize": 0}))
    check("/ard/agents/{identifier}", "get", client.get(f"/ard/agents/{identifier}"))
    check("/ard/agents/{identifier}", "get", client.get("/ard/agents/urn:air:no.example:a:b"))
    check("/ard/search", "post", client.post("/ard/search", {"query": {"text": "doc"}}, **post))
    check("/ard/search", "post", client.post("/ard/search", {"nonsense": 1}, **post))
    asked = {"resultType": {"facets": [{"field": "schema"}, {"field": "inputModes"}]}}
    check("/ard/explore", "post", client.post("/ard/explore", asked, **post))
    check("/ard/explore", "post", client.post("/ard/explore", {}, **post))


def test_the_docs_link_ards_document_and_show_it_without_a_cdn(client: Client) -> None:
    v1 = APIClient().get("/api/schema", HTTP_ACCEPT="application/json").json()
    assert "/ard/openapi.json" in v1["info"]["description"]
    assert "/api/docs/ard" in v1["info"]["description"]
    page = client.get("/api/docs/ard")
    assert page.status_code == 200
    assert b"cdn.jsdelivr.net" not in page.content
    assert b"/ard/openapi.json" in page.content


# --- My agents, signed out; the search box ---------------------------------------------------


def test_my_agents_tells_a_reader_who_is_not_signed_in_how_to_see_theirs(client: Client) -> None:
    agent_from_card(minimal_card(name="Someone else's"))
    response = client.get("/my-agents")
    assert response.status_code == 200
    body = response.content.decode()
    assert "Sign in to see the agents your account submitted" in body
    assert "Someone else" not in body and 'href="/agents/' not in body
    assert response["Content-Security-Policy"] == CONTENT_SECURITY_POLICY


def test_the_search_box_placeholder_is_short(client: Client) -> None:
    body = client.get("/").content.decode()
    placeholder = body.split('id="q" name="q"', 1)[1].split('placeholder="', 1)[1].split('"')[0]
    # tests/test_catalogue_browser.py measures it in Chromium at 1280 and 375 pixels wide.
    assert 0 < len(placeholder) <= 30, placeholder
