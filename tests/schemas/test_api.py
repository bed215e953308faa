"""The schema endpoints, end to end from ingested cards."""

from __future__ import annotations

import copy
import json
from typing import Any
from urllib.parse import quote

import pytest
from rest_framework.test import APIClient

from cards.models import Agent
from schemas_app.known_extensions import SCHEMAS_EXTENSION_URI, TASK_PROGRESS_URI
from schemas_app.models import SchemaDocument, SchemaUse
from tests.factories import agent_from_card, minimal_card
from tests.schemas.cards import (
    FIGHT_COMPARISON,
    SEED_MESSAGE,
    TASK_PROGRESS_DECLARATION,
    fight_card,
    schema_card,
    schemas_extension,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def api() -> APIClient:
    return APIClient()


@pytest.fixture
def fighter() -> Agent:
    return agent_from_card(fight_card())


def post(api: APIClient, path: str, body: Any) -> Any:
    return api.post(path, data=json.dumps(body), content_type="application/json")


def ids(response: Any) -> set[str]:
    assert response.status_code == 200, response.content
    return {row["id"] for row in response.json()["results"]}


def problem(response: Any, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.content
    assert response["Content-Type"].startswith("application/problem+json")
    return response.json()


# --- indexing ----------------------------------------------------------------------------------


def test_each_schema_is_stored_once_per_content_with_its_features(fighter: Agent) -> None:
    agent_from_card(fight_card(name="Another oracle"))
    assert SchemaDocument.objects.count() == 2
    comparison = SchemaDocument.objects.get(title="", required=["a", "b"])
    assert comparison.draft == "2020-12"
    assert comparison.dialect == "https://json-schema.org/draft/2020-12/schema"
    assert comparison.types == ["object"] and comparison.closed and comparison.usable
    assert comparison.property_names == ["a", "b"]
    uses = SchemaUse.objects.filter(agent=fighter).order_by("role", "name")
    assert [(u.role, u.name, u.skill_id) for u in uses] == [
        ("declared", "fightComparison", ""),
        ("declared", "fightResponse", ""),
        ("input", "fightComparison", "fight-comparison"),
        ("output", "fightResponse", "fight-comparison"),
    ]


def test_field_schemas_are_indexed_too() -> None:
    agent = agent_from_card(
        minimal_card(
            skills=[
                {
                    "id": "search",
                    "name": "Search",
                    "description": "Searches.",
                    "tags": ["search"],
                    "inputFields": [
                        {
                            "name": "query",
                            "kind": "data",
                            "schema": {"type": "object", "required": ["q"]},
                        }
                    ],
                }
            ]
        )
    )
    use = SchemaUse.objects.get(agent=agent, source="field")
    assert (use.role, use.field_name, use.pointer) == (
        "input",
        "query",
        "/skills/0/inputFields/0/schema",
    )
    assert use.document.required == ["q"]


# --- per-schema endpoints ----------------------------------------------------------------


def test_the_seed_000_agent_is_found_by_schema_in_both_directions(
    api: APIClient, fighter: Agent
) -> None:
    me = {str(fighter.pk)}
    assert ids(api.get("/api/v1/schemas/fightComparison/agents?direction=input")) == me
    assert ids(api.get("/api/v1/schemas/fightComparison/agents?direction=output")) == set()
    assert ids(api.get("/api/v1/schemas/fightResponse/agents?direction=output")) == me
    assert ids(api.get("/api/v1/schemas/fightResponse/agents")) == me
    row = api.get("/api/v1/schemas/fightComparison/agents").json()["results"][0]
    assert row["schema_use"]["input_skills"] == ["fight-comparison"]
    assert row["schema_use"]["sha256"] == SchemaDocument.objects.get(required=["a", "b"]).sha256


def test_schema_search_agrees_with_the_agent_filters(api: APIClient, fighter: Agent) -> None:
    # An agent naming a schema it does not declare, one only producing it, one unrelated.
    undeclared = agent_from_card(
        minimal_card(
            name="Undeclared", defaultInputModes=["application/json;schema=fightComparison"]
        )
    )
    producer = agent_from_card(
        minimal_card(
            name="Producer",
            capabilities={"extensions": [schemas_extension()]},
            schemas={"fightComparison": copy.deepcopy(FIGHT_COMPARISON)},
            defaultOutputModes=['application/json; schema="fightComparison"'],
        )
    )
    agent_from_card(minimal_card(name="Unrelated"))
    by_schema = ids(api.get("/api/v1/agents?schema=fightComparison"))
    assert by_schema == {str(fighter.pk), str(undeclared.pk), str(producer.pk)}
    assert ids(api.get("/api/v1/schemas/fightComparison/agents")) == by_schema
    mode = quote("application/json;schema=fightComparison")
    accepting = ids(api.get(f"/api/v1/agents?input_mode={mode}"))
    assert accepting == {str(fighter.pk), str(undeclared.pk)}
    assert ids(api.get("/api/v1/schemas/fightComparison/agents?direction=input")) == accepting
    producing = ids(api.get(f"/api/v1/agents?output_mode={mode}"))
    assert producing == {str(producer.pk)}
    assert ids(api.get("/api/v1/schemas/fightComparison/agents?direction=output")) == producing


def test_the_schema_list_counts_agents(api: APIClient, fighter: Agent) -> None:
    agent_from_card(minimal_card(defaultInputModes=["application/json;schema=ghost"]))
    body = api.get("/api/v1/schemas").json()
    rows = {row["name"]: row for row in body["results"]}
    assert rows["fightComparison"]["declaring"] == 1
    assert rows["fightComparison"]["accepting"] == 1
    assert rows["fightComparison"]["producing"] == 0
    assert rows["fightResponse"]["producing"] == 1
    assert rows["ghost"] == {
        "name": "ghost",
        "declaring": 0,
        "accepting": 1,
        "producing": 0,
        "variants": 0,
        "link": "http://testserver/api/v1/schemas/ghost",
    }
    assert body["next"] is None


def test_the_schema_list_pages_with_a_cursor(api: APIClient) -> None:
    agent_from_card(schema_card({f"s{i}": {"type": "object"} for i in range(5)}))
    first = api.get("/api/v1/schemas?limit=2").json()
    assert [r["name"] for r in first["results"]] == ["s0", "s1"]
    second = api.get(first["next"]).json()
    assert [r["name"] for r in second["results"]] == ["s2", "s3"]
    third = api.get(second["next"]).json()
    assert [r["name"] for r in third["results"]] == ["s4"] and third["next"] is None
    assert [r["name"] for r in api.get("/api/v1/schemas?prefix=s3").json()["results"]] == ["s3"]
    problem(api.get("/api/v1/schemas?cursor=garbage"), 400)
    problem(api.get("/api/v1/schemas?limit=0"), 400)


def test_a_schema_name_shows_its_variants(api: APIClient, fighter: Agent) -> None:
    changed = copy.deepcopy(FIGHT_COMPARISON)
    changed["properties"]["a"]["maxLength"] = 40
    other = agent_from_card(fight_card(schemas={"fightComparison": changed}))
    body = api.get("/api/v1/schemas/fightComparison").json()
    assert body["declaring"] == 2 and body["accepting"] == 2
    assert len(body["variants"]) == 2
    assert {v["agents"][0]["id"] for v in body["variants"]} == {str(fighter.pk), str(other.pk)}
    variant = body["variants"][0]
    assert variant["schema"]["required"] == ["a", "b"]
    detail = api.get(variant["schema"]["link"]).json()
    assert detail["sha256"] == variant["sha256"]
    assert detail["content"]["required"] == ["a", "b"]
    assert {u["agent"]["id"] for u in detail["uses"]} <= {str(fighter.pk), str(other.pk)}
    problem(api.get("/api/v1/schemas/noSuchSchema"), 404)


def test_lookup_by_hash(api: APIClient, fighter: Agent) -> None:
    document = SchemaDocument.objects.get(required=["a", "b"])
    body = api.get(f"/api/v1/schemas/sha256/{document.sha256.upper()}").json()
    assert body["sha256"] == document.sha256 and body["agent_count"] == 1
    assert {(u["role"], u["name"]) for u in body["uses"]} == {
        ("declared", "fightComparison"),
        ("input", "fightComparison"),
    }
    problem(api.get("/api/v1/schemas/sha256/abc"), 400)
    problem(api.get("/api/v1/schemas/sha256/" + "0" * 64), 404)


def test_schema_names_with_slashes_and_spaces_work(api: APIClient) -> None:
    agent = agent_from_card(
        schema_card(
            {"v1/order form": {"type": "object"}}, modes=['application/json;schema="v1/order form"']
        )
    )
    assert ids(api.get("/api/v1/schemas/" + quote("v1/order form") + "/agents")) == {str(agent.pk)}
    assert api.get("/api/v1/schemas/" + quote("v1/order form", safe="")).json()["declaring"] == 1


# --- matching ------------------------------------------------------------------------------------


def test_match_finds_the_seed_agent_for_lion_and_tiger(api: APIClient, fighter: Agent) -> None:
    agent_from_card(minimal_card(name="Plain"))
    body = post(api, "/api/v1/schemas/match", {"payload": {"a": "Lion", "b": "Tiger"}}).json()
    assert [r["id"] for r in body["results"]] == [str(fighter.pk)]
    match = body["results"][0]["matches"]
    assert match == [
        {
            "source": "mode",
            "schema": "fightComparison",
            "field": None,
            "sha256": SchemaDocument.objects.get(required=["a", "b"]).sha256,
            "skills": ["fight-comparison"],
            "link": match[0]["link"],
        }
    ]


@pytest.mark.parametrize(
    "payload", [{"a": 1}, {"a": "x", "b": "y", "c": 1}, {"a": "x"}, "Lion vs Tiger", [], None]
)
def test_match_rejects_payloads_the_schema_does_not_accept(
    api: APIClient, fighter: Agent, payload: Any
) -> None:
    body = post(api, "/api/v1/schemas/match", {"payload": payload}).json()
    assert body["results"] == []


@pytest.mark.parametrize("name", ["a\\u0000", "x\\u0000y"])
def test_match_takes_member_names_postgresql_cannot_store(
    api: APIClient, fighter: Agent, name: str
) -> None:
    """A NUL in a member name is no schema's property: the closed fight schema refuses it, and
    the answer is a 200, not a database error."""
    response = api.post(
        "/api/v1/schemas/match",
        data='{"payload": {"a": "Lion", "b": "Tiger", "' + name + '": 1}}',
        content_type="application/json",
    )
    assert response.status_code == 200, response.content
    assert response.json()["results"] == []


def test_match_respects_the_limit_and_reports_truncation(api: APIClient) -> None:
    for i in range(3):
        agent_from_card(fight_card(name=f"Oracle {i}"))
    body = post(api, "/api/v1/schemas/match", {"payload": {"a": "x", "b": "y"}, "limit": 2}).json()
    assert len(body["results"]) == 2 and body["truncated"] is True


def test_match_uses_field_schemas_and_any_json_type(api: APIClient) -> None:
    agent = agent_from_card(
        minimal_card(
            skills=[
                {
                    "id": "count",
                    "name": "Count",
                    "description": "Counts.",
                    "tags": ["n"],
                    "inputFields": [
                        {"name": "n", "kind": "data", "schema": {"type": "integer", "minimum": 1}}
                    ],
                }
            ]
        )
    )
    body = post(api, "/api/v1/schemas/match", {"payload": 3}).json()
    assert [r["id"] for r in body["results"]] == [str(agent.pk)]
    assert body["results"][0]["matches"][0]["field"] == "n"
    assert post(api, "/api/v1/schemas/match", {"payload": 0}).json()["results"] == []
    assert post(api, "/api/v1/schemas/match", {"payload": 3.5}).json()["results"] == []


def test_match_skips_output_only_and_unusable_schemas(api: APIClient) -> None:
    agent_from_card(
        minimal_card(
            capabilities={"extensions": [schemas_extension()]},
            schemas={"out": {"type": "object"}, "remote": {"$ref": "https://x.example.com/s"}},
            defaultInputModes=["application/json;schema=remote"],
            defaultOutputModes=["application/json;schema=out"],
        )
    )
    assert post(api, "/api/v1/schemas/match", {"payload": {}}).json()["results"] == []


@pytest.mark.parametrize(
    ("body", "status"),
    [
        ({}, 400),
        ({"payload": {}, "limit": 0}, 400),
        ({"payload": {}, "limit": 101}, 400),
        ({"payload": {}, "limit": "5"}, 400),
        ({"payload": {}, "limit": True}, 400),
        ([1, 2], 400),
        ("text", 400),
    ],
)
def test_bad_match_requests_are_problems(api: APIClient, body: Any, status: int) -> None:
    problem(post(api, "/api/v1/schemas/match", body), status)


def test_malformed_json_and_huge_bodies_are_problems(api: APIClient) -> None:
    problem(api.post("/api/v1/schemas/match", data="{", content_type="application/json"), 400)
    huge = {"payload": {"blob": "x" * (600 * 1024)}}
    problem(post(api, "/api/v1/schemas/match", huge), 413)


# --- seed 000: check-message ------------------------------------------------------------


def check_message(api: APIClient, agent: Agent, message: Any) -> dict[str, Any]:
    response = post(api, f"/api/v1/agents/{agent.pk}/check-message", message)
    assert response.status_code == 200, response.content
    return response.json()


def test_the_seed_message_is_structured_input(api: APIClient, fighter: Agent) -> None:
    body = check_message(api, fighter, SEED_MESSAGE)
    assert body["outcome"] == "structured-input"
    assert body["schema"]["name"] == "fightComparison" and body["errors"] == []
    assert body["part"] == {
        "index": 0,
        "pointer": "/parts/0",
        "media_type": "application/json;schema=fightComparison",
    }
    assert "MUST respond with a task" in body["action"]
    assert check_message(api, fighter, {"message": SEED_MESSAGE})["outcome"] == "structured-input"


def test_invalid_data_is_a_structured_input_error(api: APIClient, fighter: Agent) -> None:
    message = copy.deepcopy(SEED_MESSAGE)
    message["parts"][0]["data"] = {"a": 1}
    body = check_message(api, fighter, message)
    assert body["outcome"] == "structured-input-error"
    pointers = {e["pointer"] for e in body["errors"]}
    assert "/parts/0/data/a" in pointers and "/parts/0/data" in pointers  # type, missing "b"


def test_an_undeclared_schema_is_a_structured_input_error(api: APIClient, fighter: Agent) -> None:
    message = copy.deepcopy(SEED_MESSAGE)
    message["parts"][0]["metadata"]["mimeType"] = "application/json;schema=rematch"
    body = check_message(api, fighter, message)
    assert body["outcome"] == "structured-input-error"
    assert body["errors"][0]["pointer"] == "/parts/0/metadata/mimeType"
    assert body["available_schemas"] == ["fightComparison", "fightResponse"]


def test_a_message_without_a_flagged_part(api: APIClient, fighter: Agent) -> None:
    message = {
        "role": "user",
        "parts": [
            {"kind": "text", "text": "Lion or tiger?"},
            {"kind": "data", "data": {"a": "x"}},
            {"kind": "data", "data": {}, "metadata": {"mimeType": "application/json"}},
        ],
    }
    assert check_message(api, fighter, message)["outcome"] == "no-structured-part"


def test_a_flagged_part_on_an_existing_task_is_rejected(api: APIClient, fighter: Agent) -> None:
    message = {**copy.deepcopy(SEED_MESSAGE), "taskId": "a20a3b55-799a-4eeb-b9dc-f68014b7f031"}
    body = check_message(api, fighter, message)
    assert body["outcome"] == "rejected-task-exists"
    assert body["structured_outcome"] == "structured-input"
    plain = {"taskId": "t-1", "parts": [{"kind": "text", "text": "more"}]}
    assert check_message(api, fighter, plain)["outcome"] == "no-structured-part"


def test_only_the_first_flagged_part_counts(api: APIClient, fighter: Agent) -> None:
    good = copy.deepcopy(SEED_MESSAGE["parts"][0])
    bad = {**copy.deepcopy(good), "data": {"a": 1}}
    body = check_message(api, fighter, {"parts": [{"kind": "text", "text": "hi"}, good, bad]})
    assert body["outcome"] == "structured-input" and body["part"]["index"] == 1
    assert body["ignored_parts"] == [2]
    body = check_message(api, fighter, {"parts": [bad, good]})
    assert body["outcome"] == "structured-input-error"


def test_v1_data_parts_with_a_media_type_are_flagged(api: APIClient, fighter: Agent) -> None:
    message = {
        "role": "ROLE_USER",
        "parts": [
            {"data": {"a": "x", "b": "y"}, "mediaType": "application/json; schema=fightComparison"}
        ],
    }
    assert check_message(api, fighter, message)["outcome"] == "structured-input"


def test_bad_check_message_requests(api: APIClient, fighter: Agent) -> None:
    problem(post(api, f"/api/v1/agents/{fighter.pk}/check-message", {"role": "user"}), 400)
    problem(post(api, f"/api/v1/agents/{fighter.pk}/check-message", {"parts": "x"}), 400)
    missing = "00000000-0000-0000-0000-000000000000"
    problem(post(api, f"/api/v1/agents/{missing}/check-message", SEED_MESSAGE), 404)
    # An agent without a card is its owner's only (cards.reads.gate): a 404 to anyone else,
    # and to its owner a 409 saying there is no card to check against yet.
    from django.contrib.auth import get_user_model
    from rest_framework.authtoken.models import Token

    owner = get_user_model().objects.create_user(username="owner")
    pending = Agent.objects.create(url="https://pending.example.com/card.json", submitted_by=owner)
    problem(post(api, f"/api/v1/agents/{pending.pk}/check-message", SEED_MESSAGE), 404)
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=owner).key}")
    assert problem(post(api, f"/api/v1/agents/{pending.pk}/check-message", SEED_MESSAGE), 409)[
        "type"
    ].endswith("no-card")


def test_an_agent_without_the_extension_gets_a_warning(api: APIClient) -> None:
    agent = agent_from_card(fight_card(capabilities={"streaming": False}))
    body = check_message(api, agent, SEED_MESSAGE)
    assert body["outcome"] == "structured-input"
    assert [w["code"] for w in body["warnings"]] == ["extension-not-declared"]


# --- seed 003: validate-payload ------------------------------------------------------------------


def validate(api: APIClient, agent: Agent, body: Any) -> dict[str, Any]:
    response = post(api, f"/api/v1/agents/{agent.pk}/validate-payload", body)
    assert response.status_code == 200, response.content
    return response.json()


def test_validate_payload_outcomes(api: APIClient, fighter: Agent) -> None:
    ok = validate(api, fighter, {"schema": "fightComparison", "payload": {"a": "x", "b": "y"}})
    assert (ok["outcome"], ok["valid"], ok["errors"], ok["warnings"]) == ("valid", True, [], [])
    bad = validate(api, fighter, {"schema": "fightComparison", "payload": {"a": "x", "c": 1}})
    assert bad["outcome"] == "invalid" and bad["valid"] is False
    assert {e["keyword"] for e in bad["errors"]} == {"required", "additionalProperties"}
    unknown = validate(api, fighter, {"schema": "research.request", "payload": {}})
    assert unknown["outcome"] == "unknown-schema"
    assert unknown["available_schemas"] == ["fightComparison", "fightResponse"]


def test_an_agent_without_schemas_gets_best_effort(api: APIClient) -> None:
    agent = agent_from_card(minimal_card())
    body = validate(api, agent, {"schema": "anything", "payload": {"x": 1}})
    assert (body["outcome"], body["valid"], body["delivery"]) == ("no-schemas", None, "best-effort")


def test_a_deprecated_schema_validates_with_a_warning(api: APIClient) -> None:
    old = {
        "type": "object",
        "properties": {"topic": {"type": "string"}},
        "required": ["topic"],
        "deprecated": True,
        "deprecatedMessage": "Use research.query-v2 for improved source control",
        "supersededBy": "research.query-v2",
    }
    agent = agent_from_card(schema_card({"research.query": old}))
    body = validate(api, agent, {"schema": "research.query", "payload": {"topic": "AI"}})
    assert body["outcome"] == "valid"
    assert body["warnings"] == [
        {
            "code": "deprecated",
            "message": "Use research.query-v2 for improved source control",
            "superseded_by": "research.query-v2",
        }
    ]
    invalid = validate(api, agent, {"schema": "research.query", "payload": {}})
    assert invalid["outcome"] == "invalid" and invalid["warnings"][0]["code"] == "deprecated"


def test_bad_validate_payload_requests(api: APIClient, fighter: Agent) -> None:
    body = problem(post(api, f"/api/v1/agents/{fighter.pk}/validate-payload", {}), 400)
    assert {e["pointer"] for e in body["errors"]} == {"/schema", "/payload"}
    problem(
        post(api, f"/api/v1/agents/{fighter.pk}/validate-payload", {"schema": 3, "payload": 1}), 400
    )


# --- extensions ----------------------------------------------------------------------------------


def test_extension_detail_lists_agents_with_the_uri_encoded_or_not(
    api: APIClient, fighter: Agent
) -> None:
    encoded = api.get("/api/v1/extensions/" + quote(SCHEMAS_EXTENSION_URI, safe="")).json()
    assert encoded["uri"] == SCHEMAS_EXTENSION_URI and encoded["known"]["source"] == "seed 000"
    assert [r["agent"]["id"] for r in encoded["results"]] == [str(fighter.pk)]
    raw = api.get("/api/v1/extensions/" + SCHEMAS_EXTENSION_URI).json()
    assert raw["agent_count"] == 1
    collapsed = api.get("/api/v1/extensions/" + SCHEMAS_EXTENSION_URI.replace("//", "/", 1))
    assert collapsed.json()["uri"] == SCHEMAS_EXTENSION_URI


def test_extension_detail_shows_params_errors_of_known_extensions(api: APIClient) -> None:
    good = agent_from_card(minimal_card(capabilities={"extensions": [TASK_PROGRESS_DECLARATION]}))
    bad_declaration = {**TASK_PROGRESS_DECLARATION, "params": {"maxTrackers": 500}}
    bad = agent_from_card(minimal_card(capabilities={"extensions": [bad_declaration]}))
    body = api.get("/api/v1/extensions/" + quote(TASK_PROGRESS_URI, safe="")).json()
    errors = {r["agent"]["id"]: r["params_errors"] for r in body["results"]}
    assert errors[str(good.pk)] == []
    assert [e["pointer"] for e in errors[str(bad.pk)]] == ["/maxTrackers"]
    assert body["known"]["params_schema"]["properties"]["maxTrackers"]["maximum"] == 100


def test_unknown_extensions_are_indexed_as_they_are(api: APIClient) -> None:
    uri = "https://ext.example.com/custom/v2?x=1"
    agent = agent_from_card(
        minimal_card(capabilities={"extensions": [{"uri": uri, "params": {"free": ["form"]}}]})
    )
    body = api.get("/api/v1/extensions/" + quote(uri, safe="")).json()
    assert body["known"] is None
    assert body["results"][0]["params"] == {"free": ["form"]}
    assert body["results"][0]["params_errors"] is None
    assert body["results"][0]["agent"]["id"] == str(agent.pk)
    problem(api.get("/api/v1/extensions/" + quote("https://nobody.example.com/x", safe="")), 404)


def test_a_known_extension_nobody_declares_is_still_described(api: APIClient) -> None:
    body = api.get("/api/v1/extensions/" + quote(TASK_PROGRESS_URI, safe="")).json()
    assert body["agent_count"] == 0 and body["results"] == []
    assert body["known"]["schemas"]["metadata"]["required"] == ["trackers"]


# --- per agent -----------------------------------------------------------------------------------


def test_agent_schemas_lists_declarations_and_uses(api: APIClient, fighter: Agent) -> None:
    body = api.get(f"/api/v1/agents/{fighter.pk}/schemas").json()
    assert {(r["role"], r["name"], r["pointer"]) for r in body["results"]} == {
        ("declared", "fightComparison", "/schemas/fightComparison"),
        ("declared", "fightResponse", "/schemas/fightResponse"),
        ("input", "fightComparison", "/skills/0/inputModes/1"),
        ("output", "fightResponse", "/skills/0/outputModes/1"),
    }


def test_the_openapi_document_still_generates(api: APIClient) -> None:
    response = api.get("/api/schema")
    assert response.status_code == 200
    assert b"/api/v1/schemas/match" in response.content


def test_any_schema_name_is_listed_and_reachable(api: APIClient) -> None:
    name = "line\nbreak é"
    agent = agent_from_card(schema_card({name: {"type": "object"}}, modes=["text/plain"]))
    rows = api.get("/api/v1/schemas").json()["results"]
    link = next(r["link"] for r in rows if r["name"] == name)
    body = api.get(link).json()
    assert body["name"] == name and body["variants"][0]["agents"][0]["id"] == str(agent.pk)
