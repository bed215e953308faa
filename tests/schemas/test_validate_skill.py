"""``POST /api/v1/agents/{id}/validate-payload`` with ``{"skill": id, "payload": ...}``: the
skill's schema'd input mode, else the schema composed from its inputFields (seed 001)."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from cards.models import Agent
from tests.factories import agent_from_card, minimal_card
from tests.schemas.test_fields import PERIOD, REVIEW_SKILL

pytestmark = pytest.mark.django_db

COMPARISON = {
    "type": "object",
    "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
    "required": ["a", "b"],
}


def fields_card() -> dict[str, Any]:
    card = minimal_card(name="Book Review Agent")
    card["schemas"] = {"fightComparison": COMPARISON}
    card["skills"] = [
        REVIEW_SKILL,
        {
            "id": "history",
            "name": "History",
            "description": "Tells a period's history.",
            "tags": [],
            "inputFields": [
                {"name": "period", "kind": "data", "schema": PERIOD},
                {"name": "notes", "kind": "text", "optional": True},
            ],
        },
        {
            "id": "compare",
            "name": "Compare",
            "description": "Both: the schema'd mode wins.",
            "tags": [],
            "inputModes": ["application/json;schema=fightComparison"],
            "inputFields": [{"name": "a", "kind": "text"}],
        },
        {"id": "plain", "name": "Plain", "description": "Text only.", "tags": []},
    ]
    return card


@pytest.fixture
def reviewer() -> Agent:
    return agent_from_card(fields_card())


def post(agent: Agent, body: Any) -> Any:
    return APIClient().post(f"/api/v1/agents/{agent.pk}/validate-payload", body, format="json")


def test_a_valid_payload_for_a_skill_with_input_fields(reviewer: Agent) -> None:
    response = post(
        reviewer,
        {
            "skill": "review",
            "payload": {"bookTitle": "Charlotte's Web", "authorName": "E. B. White"},
        },
    )
    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["outcome"], body["valid"], body["errors"]) == ("valid", True, [])
    assert body["skill"] == {"id": "review", "name": "Book review"}
    assert body["fields_schema"]["required"] == ["bookTitle", "authorName"]
    assert body["agent"]["id"] == str(reviewer.pk)


def test_an_invalid_payload_names_each_error_by_pointer(reviewer: Agent) -> None:
    body = post(reviewer, {"skill": "review", "payload": {"bookTitle": 3}}).json()
    assert (body["outcome"], body["valid"], body["delivery"]) == ("invalid", False, "rejected")
    assert {(e["pointer"], e["keyword"]) for e in body["errors"]} == {
        ("/payload", "required"),
        ("/payload/bookTitle", "type"),
    }
    nested = post(reviewer, {"skill": "history", "payload": {"period": {"from": 1000}}}).json()
    assert [e["pointer"] for e in nested["errors"]] == ["/payload/period/from"]
    fine = post(reviewer, {"skill": "history", "payload": {"period": {"from": 1900}}}).json()
    assert fine["valid"] is True  # "notes" is optional


def test_a_skill_with_a_schemad_mode_is_checked_against_that_schema(reviewer: Agent) -> None:
    body = post(reviewer, {"skill": "compare", "payload": {"a": "x"}}).json()
    assert body["schema"]["name"] == "fightComparison" and body["schema"]["link"]
    assert [e["keyword"] for e in body["errors"]] == ["required"]
    assert "fields_schema" not in body


def test_an_unknown_skill_is_404_and_one_without_input_422(reviewer: Agent) -> None:
    unknown = post(reviewer, {"skill": "nope", "payload": {}})
    assert unknown.status_code == 404
    assert unknown.json()["type"].endswith("no-such-skill")
    assert unknown.json()["errors"][0]["pointer"] == "/skill"
    # An id no card can hold (a NUL, PostgreSQL's text refuses it; past the column) names none.
    for impossible in ("review\u0000", "x" * 600):
        assert post(reviewer, {"skill": impossible, "payload": {}}).status_code == 404
    plain = post(reviewer, {"skill": "plain", "payload": {}})
    assert plain.status_code == 422
    assert plain.json()["type"].endswith("no-input-schema")


@pytest.mark.parametrize(
    ("body", "pointers"),
    [
        ({"skill": "review", "schema": "fightComparison", "payload": {}}, {"/skill"}),
        ({"payload": {}}, {"/schema"}),
        ({}, {"/schema", "/payload"}),
        ({"skill": "review"}, {"/payload"}),
        ({"skill": "", "payload": {}}, {"/skill"}),
        ({"skill": 7, "payload": {}}, {"/skill"}),
    ],
)
def test_exactly_one_of_schema_and_skill(
    reviewer: Agent, body: dict[str, Any], pointers: set[str]
) -> None:
    response = post(reviewer, body)
    assert response.status_code == 400, response.content
    assert response["Content-Type"] == "application/problem+json"
    assert {e["pointer"] for e in response.json()["errors"]} == pointers


def test_the_openapi_body_says_exactly_one_of_the_two() -> None:
    document = APIClient().get("/api/schema", HTTP_ACCEPT="application/json").json()
    operation = document["paths"]["/api/v1/agents/{id}/validate-payload"]["post"]
    schema = operation["requestBody"]["content"]["application/json"]["schema"]
    assert schema["oneOf"] == [
        {"required": ["schema", "payload"]},
        {"required": ["skill", "payload"]},
    ]
    assert schema["additionalProperties"] is False
    assert set(schema["properties"]) == {"schema", "skill", "payload"}
    assert {"404", "422"} <= set(operation["responses"])
