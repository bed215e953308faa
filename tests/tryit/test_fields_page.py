"""The "Try it" block of a skill with seed 001 ``inputFields`` (no schema'd input mode), as the
server renders it: the form from the composed schema, a plain ``application/json`` data part,
the validator called with the skill, and the outputFields table."""

from __future__ import annotations

import html
import json
import re
from typing import Any

import pytest
from django.test import Client

from cards.models import Agent
from tests.factories import agent_from_card, minimal_card
from tests.schemas.test_fields import PERIOD, REVIEW_SKILL
from tests.tryit.pages import try_links, try_page
from tests.tryit.test_page import pre

pytestmark = pytest.mark.django_db


def page_of(card: dict[str, Any]) -> tuple[Agent, str]:
    """The agent and its first skill's "Try it" page, followed from its page."""
    agent = agent_from_card(card)
    return agent, try_page(Client(), agent).content.decode()


def config_of(page: str) -> dict[str, Any]:
    found = re.search(r'data-try="([^"]*)"', page)
    assert found
    return dict(json.loads(html.unescape(found.group(1))))


def test_the_book_review_skill_gets_a_form_from_its_text_fields() -> None:
    card = minimal_card(name="Book Review Agent", skills=[REVIEW_SKILL])
    agent, page = page_of(card)
    assert 'id="try-it"' in page
    assert "from its inputFields" in page
    # The form library's widget, given the composed schema.
    assert "data-django-jsonform" in page
    config = config_of(page)
    assert config["skill"] == "review" and config["schemaName"] == ""
    schema = config["schema"]
    assert schema["properties"]["bookTitle"]["title"] == "bookTitle"
    assert schema["properties"]["bookTitle"]["help_text"] == "The title of the book"
    assert schema["required"] == ["bookTitle", "authorName"]
    assert config["validateUrl"] == f"/api/v1/agents/{agent.pk}/validate-payload"
    # One data part, plain application/json (the fields are not a named schema), v1.0 here.
    body = json.loads(pre(page, "try-preview"))
    assert body["method"] == "SendMessage"
    parts = body["params"]["message"]["parts"]
    assert len(parts) == 1 and parts[0]["mediaType"] == "application/json"
    assert set(parts[0]["data"]) == {"bookTitle", "authorName"}
    assert '"mediaType": "application/json"' in pre(page, "try-python")
    assert '"mediaType": "application/json"' in pre(page, "try-curl")
    # The outputFields as a table: field, kind, media types, description, required.
    assert '<table class="try-outputs try-output-fields">' in page
    assert (
        "<tr><td><code>review-html</code></td><td>text</td><td>text/html</td>"
        "<td>HTML with the whole book&#x27;s review. Sent when not streaming.</td><td>no</td></tr>"
    ) in page
    assert "<td><code>publicationDate</code></td><td>text</td><td></td>" in page
    assert "<td>Publication date</td><td>yes</td>" in page
    assert "Input schema composed from the skill's inputFields" in page


def test_a_data_field_with_a_schema_is_a_nested_form() -> None:
    card = minimal_card(name="Historian")
    card["skills"] = [
        {
            "id": "history",
            "name": "History",
            "description": "Tells a period's history.",
            "tags": [],
            "inputFields": [
                {"name": "period", "kind": "data", "schema": PERIOD, "description": "When"},
                {"name": "notes", "kind": "text", "optional": True},
                {"kind": "text"},
            ],
        }
    ]
    _agent, page = page_of(card)
    config = config_of(page)
    period = config["schema"]["properties"]["period"]
    assert period["properties"]["from"] == {"$ref": "#/properties/period/definitions/year"}
    assert period["help_text"] == "When"
    assert config["schema"]["required"] == ["period"]
    assert not config["reason"]
    # The first payload is built from the composed schema and validates: a year from 1450.
    data = json.loads(pre(page, "try-preview"))["params"]["message"]["parts"][0]["data"]
    assert data == {"period": {"from": 1450}}
    # The field left out is said, with its pointer.
    assert "<code>/skills/0/inputFields/2</code>: left out: the field has no name" in page


def test_a_v03_agent_gets_a_kind_data_part_with_plain_json() -> None:
    interface = {"url": "https://legacy.example/a2a", "protocolBinding": "JSONRPC"}
    card = minimal_card(
        name="Legacy reviewer",
        supportedInterfaces=[{**interface, "protocolVersion": "0.3"}],
        skills=[REVIEW_SKILL],
    )
    _agent, page = page_of(card)
    body = json.loads(pre(page, "try-preview"))
    assert body["method"] == "message/send"
    part = body["params"]["message"]["parts"][0]
    assert part["kind"] == "data" and part["metadata"] == {"mimeType": "application/json"}


def test_when_both_exist_the_schemad_mode_wins_and_the_page_says_the_fields_exist() -> None:
    card = minimal_card(name="Both")
    card["schemas"] = {"pair": {"type": "object", "properties": {"x": {"type": "integer"}}}}
    card["skills"] = [
        {
            "id": "both",
            "name": "Both",
            "description": "d",
            "tags": [],
            "inputModes": ["application/json;schema=pair"],
            "inputFields": [{"name": "x", "kind": "data"}, {"name": "y", "kind": "text"}],
        }
    ]
    _agent, page = page_of(card)
    assert page.count('class="try-block"') == 1
    assert config_of(page)["schemaName"] == "pair"
    assert "The skill also declares inputFields (x, y)" in page
    body = json.loads(pre(page, "try-preview"))
    assert body["params"]["message"]["parts"][0]["mediaType"] == "application/json;schema=pair"


def test_a_skill_without_inputs_to_try_gets_no_block() -> None:
    card = minimal_card(name="Plain")
    card["skills"][0]["inputFields"] = []
    agent = agent_from_card(card)
    page = Client().get(f"/agents/{agent.pk}").content.decode()
    assert 'id="try-it"' not in page and not try_links(page)
