"""Schema findings on cards: what card_check reports for embedded schemas, modes, fields,
examples and known extensions (no database needed)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from cards.pipeline import check as card_check
from schemas_app.analysis import analyse_schema
from schemas_app.checks import schema_findings
from schemas_app.known_extensions import TASK_PROGRESS_URI
from tests.factories import minimal_card
from tests.schemas.cards import (
    DRAFT_2020,
    FIGHT_COMPARISON,
    TASK_PROGRESS_DECLARATION,
    by_code,
    codes,
    fight_card,
    schema_card,
    schemas_extension,
)
from tests.schemas.test_fields import REVIEW_SKILL


def check(card: dict[str, Any]) -> list[dict[str, str]]:
    report = card_check(raw=json.dumps(card).encode())
    return [f.as_dict() for f in report.findings]


def schema_codes(card: dict[str, Any]) -> list[str]:
    return codes(schema_findings(card, card))


def test_the_seed_000_card_has_no_schema_finding_and_its_examples_pass() -> None:
    findings = check(fight_card())
    prefixes = ("schema", "skill.example", "field.", "extension.")
    assert [f for f in findings if f["code"].startswith(prefixes)] == []
    assert not any(f["severity"] == "error" for f in findings)


def test_a_mode_naming_a_missing_schema_is_an_error_at_the_mode() -> None:
    card = fight_card()
    card["skills"][0]["inputModes"].append("application/json; schema=fightRematch")
    found = by_code(check(card), "schema.undeclared")
    assert found == [
        {
            "code": "schema.undeclared",
            "severity": "error",
            "pointer": "/skills/0/inputModes/2",
            "message": found[0]["message"],
        }
    ]
    assert "fightRematch" in found[0]["message"]


def test_an_undeclared_default_mode_is_reported_once_not_per_inheriting_skill() -> None:
    card = minimal_card(
        defaultInputModes=["application/json;schema=ghost"],
        skills=[
            {"id": "a", "name": "A", "description": "A.", "tags": ["a"]},
            {"id": "b", "name": "B", "description": "B.", "tags": ["b"]},
        ],
    )
    assert [f["pointer"] for f in by_code(check(card), "schema.undeclared")] == [
        "/defaultInputModes/0"
    ]


def test_schemas_without_the_extension_declared_is_a_warning() -> None:
    card = fight_card(capabilities={"streaming": False})
    found = by_code(check(card), "schemas.extension-not-declared")
    assert len(found) == 1 and found[0]["severity"] == "warning"
    assert found[0]["pointer"] == "/schemas"


def test_a_schema_invalid_against_its_metaschema_is_reported_with_a_pointer() -> None:
    bad = {"type": "object", "properties": {"a": {"type": "strng"}, "b": {"minLength": -1}}}
    findings = by_code(check(schema_card({"broken": bad})), "schema.invalid")
    pointers = sorted(f["pointer"] for f in findings)
    assert pointers == [
        "/schemas/broken/properties/a/type",
        "/schemas/broken/properties/b/minLength",
    ]
    assert all(f["severity"] == "error" for f in findings)


def test_an_unknown_dialect_is_a_warning_and_the_schema_is_validated_as_2020_12() -> None:
    schema = {
        "$schema": "https://example.com/my-dialect",
        "type": "array",
        "prefixItems": [{"type": "string"}],
    }
    found = by_code(check(schema_card({"tuple": schema})), "schema.unknown-dialect")
    assert found[0]["severity"] == "warning" and found[0]["pointer"] == "/schemas/tuple/$schema"
    analysis = analyse_schema(schema)
    assert analysis.draft == "2020-12" and analysis.usable
    validator = analysis.validator()
    assert validator.is_valid(["x"]) and not validator.is_valid([1])  # prefixItems applies


def test_a_local_ref_that_does_not_resolve_is_an_error() -> None:
    schema = {"type": "object", "properties": {"a": {"$ref": "#/$defs/missing"}}}
    found = by_code(check(schema_card({"dangling": schema})), "schema.unresolvable-ref")
    assert [(f["severity"], f["pointer"]) for f in found] == [
        ("error", "/schemas/dangling/properties/a/$ref")
    ]


def test_refs_to_anchors_embedded_ids_and_metaschemas_resolve_offline() -> None:
    schema = {
        "$id": "https://schemas.example.com/root.json",
        "$defs": {
            "name": {"$anchor": "name", "type": "string"},
            "inner": {"$id": "inner.json", "$defs": {"n": {"type": "integer"}}},
        },
        "properties": {
            "a": {"$ref": "#name"},
            "b": {"$ref": "inner.json#/$defs/n"},
            "c": {"$ref": "https://json-schema.org/draft/2020-12/schema"},
        },
    }
    analysis = analyse_schema(schema)
    assert analysis.problems == [] and analysis.usable


def test_remote_and_file_refs_are_reported_not_followed() -> None:
    schema = {
        "properties": {
            "a": {"$ref": "https://schemas.example.com/a.json"},
            "b": {"$ref": "file:///etc/passwd"},
            "c": {"$ref": "other.json#/x"},
        }
    }
    found = by_code(check(schema_card({"remote": schema})), "schema.remote-ref")
    assert sorted(f["pointer"] for f in found) == [
        "/schemas/remote/properties/a/$ref",
        "/schemas/remote/properties/b/$ref",
        "/schemas/remote/properties/c/$ref",
    ]
    assert not analyse_schema(schema).usable


def test_a_ref_inside_a_value_is_not_a_reference() -> None:
    schema = {"enum": [{"$ref": "https://example.com/x"}], "const": {"$ref": "#/nowhere"}}
    assert analyse_schema(schema).problems == []


def test_a_bad_pattern_is_reported_as_a_compile_error() -> None:
    found = by_code(
        check(schema_card({"p": {"type": "string", "pattern": "(open"}})), "schema.compile-error"
    )
    assert found and found[0]["pointer"] == "/schemas/p"


def test_a_schema_that_is_not_an_object_or_boolean_is_an_error() -> None:
    card = schema_card({"list": [1, 2], "yes": True})
    found = by_code(check(card), "schema.not-a-schema")
    assert [f["pointer"] for f in found] == ["/schemas/list"]


def test_schemas_of_the_wrong_type_is_an_error() -> None:
    card = minimal_card(schemas=["nope"])
    assert by_code(check(card), "schemas.wrong-type")[0]["pointer"] == "/schemas"


def test_a_schema_beyond_the_size_cap_is_refused_and_not_analysed() -> None:
    big = {"type": "string", "enum": [f"value-{i:06d}" for i in range(6000)]}  # ~90 KB
    found = by_code(check(schema_card({"huge": big})), "schema.too-large")
    assert found[0]["severity"] == "error" and found[0]["pointer"] == "/schemas/huge"
    analysis = analyse_schema(big)
    assert not analysis.storable and not analysis.usable


def test_the_size_cap_is_a_setting(settings: Any) -> None:
    settings.REGISTRY_SCHEMA_MAX_BYTES = 50
    assert "schema.too-large" in schema_codes(
        schema_card({"s": {"type": "string", "title": "x" * 60}})
    )


def test_an_integer_rfc_8785_cannot_hold_is_hashed_another_way_and_said_so() -> None:
    schema = {"type": "integer", "maximum": 18446744073709551615}
    analysis = analyse_schema(schema)
    assert analysis.hash_algorithm == "sorted-json" and analysis.usable
    assert [p.code for p in analysis.problems] == ["schema.not-canonical"]


def test_hashes_are_of_the_rfc_8785_form() -> None:
    one = analyse_schema({"type": "number", "minimum": 1.0})
    other = analyse_schema({"minimum": 1, "type": "number"})
    assert one.sha256 == other.sha256
    import hashlib

    assert one.sha256 == hashlib.sha256(b'{"minimum":1,"type":"number"}').hexdigest()


def test_an_example_that_parses_as_json_and_fails_the_input_schema_is_a_warning() -> None:
    card = fight_card()
    card["skills"][0]["examples"] = [
        '{"a": "Lion", "b": "Tiger"}',
        '{"a": "Lion"}',
        "Who wins, a lion or a tiger?",
        '{"a": 1, "b": 2}',
        "[1, 2]",
    ]
    found = by_code(check(card), "skill.example-invalid")
    assert [(f["severity"], f["pointer"]) for f in found] == [
        ("warning", "/skills/0/examples/1"),
        ("warning", "/skills/0/examples/3"),
        ("warning", "/skills/0/examples/4"),
    ]
    assert "fightComparison" in found[0]["message"]


def test_examples_of_a_skill_inheriting_a_schema_mode_are_checked() -> None:
    card = minimal_card(
        capabilities={"extensions": [schemas_extension()]},
        schemas={"fightComparison": copy.deepcopy(FIGHT_COMPARISON)},
        defaultInputModes=["application/json;schema=fightComparison"],
        skills=[
            {
                "id": "fight",
                "name": "Fight",
                "description": "Who wins.",
                "tags": ["fight"],
                "examples": ['{"a": "x"}'],
            }
        ],
    )
    assert [f["pointer"] for f in by_code(check(card), "skill.example-invalid")] == [
        "/skills/0/examples/0"
    ]


def test_field_definition_problems() -> None:
    card = minimal_card(
        skills=[
            {
                "id": "review",
                "name": "Review",
                "description": "Reviews a book.",
                "tags": ["books"],
                "inputFields": [
                    {"name": "bookTitle", "kind": "text", "description": "The title"},
                    {"name": "bookTitle", "kind": "text"},
                    {"name": "cover", "kind": "image"},
                    {"name": "notes", "kind": "text", "schema": {"type": "string"}},
                    {"name": "query", "kind": "data", "schema": {"type": "objekt"}},
                    {"name": 7, "optional": "yes", "mimeTypes": ["text/plain", "not a type"]},
                    "bookTitle",
                ],
                "outputFields": {"name": "x"},
            }
        ]
    )
    findings = check(card)
    base = "/skills/0/inputFields"
    assert [f["pointer"] for f in by_code(findings, "field.duplicate-name")] == [f"{base}/1/name"]
    assert [f["pointer"] for f in by_code(findings, "field.invalid-kind")] == [f"{base}/2/kind"]
    assert [f["pointer"] for f in by_code(findings, "field.schema-on-non-data")] == [
        f"{base}/3/schema"
    ]
    assert [f["pointer"] for f in by_code(findings, "schema.invalid")] == [f"{base}/4/schema/type"]
    assert sorted(f["pointer"] for f in by_code(findings, "field.wrong-type")) == [
        f"{base}/5/name",
        f"{base}/5/optional",
        f"{base}/6",
        "/skills/0/outputFields",
    ]
    assert [f["pointer"] for f in by_code(findings, "field.invalid-mime-type")] == [
        f"{base}/5/mimeTypes/1"
    ]


def test_the_seed_001_example_fields_are_fine() -> None:
    card = minimal_card(skills=[copy.deepcopy(REVIEW_SKILL)])
    assert schema_codes(card) == []


def test_seed_002_declaration_params_are_valid() -> None:
    card = minimal_card(capabilities={"extensions": [copy.deepcopy(TASK_PROGRESS_DECLARATION)]})
    assert "extension.invalid-params" not in codes(check(card))


@pytest.mark.parametrize(
    ("params", "pointer"),
    [
        ({"maxTrackers": 0}, "/params/maxTrackers"),
        ({"maxTrackers": 101}, "/params/maxTrackers"),
        ({"maxTrackers": "20"}, "/params/maxTrackers"),
        ({"maxTrackers": 2.5}, "/params/maxTrackers"),
        ({"recommendedMaxUpdatesPerSecond": 0}, "/params/recommendedMaxUpdatesPerSecond"),
        ({"recommendedMaxUpdatesPerSecond": -1}, "/params/recommendedMaxUpdatesPerSecond"),
        ({"maxMessageChars": 0}, "/params/maxMessageChars"),
        ({"maxIdChars": 129}, "/params/maxIdChars"),
        ("twenty", "/params"),
    ],
)
def test_seed_002_declaration_with_bad_params_is_reported(params: Any, pointer: str) -> None:
    declaration = {**TASK_PROGRESS_DECLARATION, "params": params}
    card = minimal_card(capabilities={"extensions": [declaration]})
    found = by_code(check(card), "extension.invalid-params")
    assert [(f["severity"], f["pointer"]) for f in found] == [
        ("warning", "/capabilities/extensions/0" + pointer)
    ]
    assert TASK_PROGRESS_URI in found[0]["message"]


def test_params_of_an_unknown_extension_are_not_judged() -> None:
    card = minimal_card(
        capabilities={"extensions": [{"uri": "https://ext.example.com/x", "params": "anything"}]}
    )
    assert "extension.invalid-params" not in codes(check(card))


def test_an_unused_declared_schema_is_info() -> None:
    card = fight_card()
    card["schemas"]["spare"] = {"type": "object"}
    found = by_code(check(card), "schema.unused")
    assert [(f["severity"], f["pointer"]) for f in found] == [("info", "/schemas/spare")]


def test_pointers_escape_schema_names() -> None:
    card = schema_card({"a/b~c": {"type": "nope"}})
    assert by_code(check(card), "schema.invalid")[0]["pointer"] == "/schemas/a~1b~0c/type"


def test_a_v0_3_card_is_checked_the_same_way() -> None:
    card = {
        "name": "Old",
        "description": "v0.3 card.",
        "url": "https://old.example.com/a2a",
        "preferredTransport": "JSONRPC",
        "protocolVersion": "0.3.0",
        "version": "1.0.0",
        "capabilities": {},
        "defaultInputModes": ["application/json;schema=missing"],
        "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "s", "name": "S", "description": "S.", "tags": ["s"]}],
        "schemas": {"x": {"$schema": DRAFT_2020, "type": 3}},
    }
    found = check(card)
    assert by_code(found, "schema.undeclared")[0]["pointer"] == "/defaultInputModes/0"
    assert by_code(found, "schema.invalid")[0]["pointer"] == "/schemas/x/type"
