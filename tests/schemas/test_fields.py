"""Seed 001's inputFields composed into one JSON Schema, and payloads checked against it through
the registry's validator (schemas_app/fields.py)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from django.test import override_settings

from schemas_app import budget
from schemas_app.analysis import analyse_schema
from schemas_app.fields import check_fields, compose

# The Book Review Agent of seed 001: two text fields.
BOOK_REVIEW = [
    {"name": "bookTitle", "kind": "text", "description": "The title of the book"},
    {"name": "authorName", "kind": "text", "description": "The author's full name"},
]

PERIOD = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "type": "object",
    "definitions": {"year": {"type": "integer", "minimum": 1450}},
    "properties": {"from": {"$ref": "#/definitions/year"}, "to": {"$ref": "#/definitions/year"}},
    "required": ["from"],
}


# Seed 001's Book Review Agent, as its example declares it.
REVIEW_SKILL = {
    "id": "review",
    "name": "Book review",
    "description": "Reviews a book.",
    "tags": ["books"],
    "inputModes": ["text/plain"],
    "outputModes": ["text/plain", "text/html"],
    "inputFields": BOOK_REVIEW,
    "outputFields": [
        {
            "name": "review-chunk",
            "kind": "text",
            "mimeTypes": ["text/plain"],
            "description": "A chunk of the book's review. Sent when streaming",
            "optional": True,
        },
        {
            "name": "review-html",
            "kind": "text",
            "mimeTypes": ["text/html"],
            "description": "HTML with the whole book's review. Sent when not streaming.",
            "optional": True,
        },
        {"name": "publicationDate", "kind": "text", "description": "Publication date"},
    ],
}


def test_the_book_review_fields_compose_to_an_object_of_two_required_strings() -> None:
    composed = compose(BOOK_REVIEW, pointer="/skills/0/inputFields", title="Review")
    schema = composed.schema
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert (schema["type"], schema["title"]) == ("object", "Review")
    assert schema["properties"] == {
        "bookTitle": {
            "type": "string",
            "minLength": 1,
            "title": "bookTitle",
            "description": "The title of the book",
        },
        "authorName": {
            "type": "string",
            "minLength": 1,
            "title": "authorName",
            "description": "The author's full name",
        },
    }
    assert schema["required"] == ["bookTitle", "authorName"]
    assert composed.fields.notes == []
    # The composed document is a valid 2020-12 schema the registry can use.
    assert analyse_schema(schema).usable


def test_kinds_optional_and_left_out_fields() -> None:
    fields: list[Any] = [
        {"name": "photo", "kind": "file", "mimeTypes": ["image/png"], "optional": True},
        {"name": "period", "kind": "data", "schema": PERIOD, "description": "When"},
        {"name": "extra", "kind": "data"},
        {"name": "guess", "schema": {"type": "integer"}},  # no kind, a schema: data
        {"name": "note"},  # no kind, no schema: text
        {"kind": "text", "description": "no name"},
        "not an object",
        {"name": "note", "kind": "text"},
        {"name": "mood", "kind": "audio"},
        {"name": "caption", "kind": "text", "schema": {"type": "integer"}},
    ]
    composed = compose(fields, pointer="/skills/2/inputFields")
    properties = composed.schema["properties"]
    assert list(properties) == ["photo", "period", "extra", "guess", "note", "caption"]
    assert properties["photo"]["type"] == "string" and properties["photo"]["format"] == "uri"
    assert "minLength" not in properties["photo"]  # optional: may be left empty
    assert properties["photo"]["description"] == (
        "The file's URL (https:, or a data: URL with its bytes); media types: image/png."
    )
    assert properties["extra"] == {
        "type": "object",
        "properties": {},
        "additionalProperties": True,
        "title": "extra",
    }
    assert properties["guess"] == {"type": "integer", "title": "guess"}
    assert properties["note"]["type"] == "string"
    assert properties["caption"] == {"type": "string", "minLength": 1, "title": "caption"}
    # The data field's schema, its references rebased under its property, no $schema of its own.
    period = properties["period"]
    assert period["description"] == "When" and "$schema" not in period
    assert period["properties"]["from"] == {"$ref": "#/properties/period/definitions/year"}
    assert composed.schema["required"] == ["period", "extra", "guess", "note", "caption"]
    assert [(n["pointer"], n["message"][:20]) for n in composed.fields.notes] == [
        ("/skills/2/inputFields/5", "left out: the field "),
        ("/skills/2/inputFields/6", "left out: a FieldDef"),
        ("/skills/2/inputFields/7", "left out: another fi"),
        ("/skills/2/inputFields/8", "left out: kind 'audi"),
        ("/skills/2/inputFields/9/schema", "ignored: the field's"),
    ]


def test_a_valid_payload_and_errors_with_their_pointers() -> None:
    composed = compose(BOOK_REVIEW)
    ok = check_fields(composed, {"bookTitle": "Charlotte's Web", "authorName": "E. B. White"})
    assert (ok["outcome"], ok["valid"], ok["delivery"], ok["errors"]) == (
        "valid",
        True,
        "delivered",
        [],
    )
    assert ok["fields_schema"] == composed.schema
    bad = check_fields(composed, {"bookTitle": "", "authorName": 7})
    assert (bad["outcome"], bad["valid"], bad["delivery"]) == ("invalid", False, "rejected")
    assert {(e["pointer"], e["keyword"]) for e in bad["errors"]} == {
        ("/payload/bookTitle", "minLength"),
        ("/payload/authorName", "type"),
    }
    missing = check_fields(composed, {"bookTitle": "Dune"})
    assert [(e["pointer"], e["keyword"]) for e in missing["errors"]] == [("/payload", "required")]
    assert "authorName" in missing["errors"][0]["message"]
    assert check_fields(composed, ["not", "an", "object"])["errors"][0]["keyword"] == "type"


def test_a_data_field_is_checked_against_its_own_schema_in_its_own_draft() -> None:
    composed = compose([{"name": "period", "kind": "data", "schema": PERIOD}])
    assert check_fields(composed, {"period": {"from": 1851}})["valid"] is True
    bad = check_fields(composed, {"period": {"from": 1200}})
    assert bad["valid"] is False
    # A schema with $ref reports its first error only (schemas_app.validation.error_items).
    assert [(e["pointer"], e["keyword"]) for e in bad["errors"]] == [
        ("/payload/period/from", "minimum")
    ]
    # Draft-07: "definitions" and the $ref beside nothing else are its own, and resolve.
    draft7_only = copy.deepcopy(PERIOD)
    draft7_only["properties"]["to"] = {"$ref": "#/definitions/year", "type": "string"}
    ignored = compose([{"name": "period", "kind": "data", "schema": draft7_only}])
    # In draft-07 a $ref's siblings are ignored: "to" is only a year.
    assert check_fields(ignored, {"period": {"from": 1851, "to": 1900}})["valid"] is True


def test_a_field_schema_the_registry_cannot_use_is_said_not_guessed() -> None:
    composed = compose([{"name": "x", "kind": "data", "schema": {"$ref": "#/$defs/none"}}])
    result = check_fields(composed, {"x": {"a": 1}})
    assert (result["outcome"], result["valid"]) == ("cannot-validate", None)
    assert [w["code"] for w in result["warnings"]] == ["not-validated"]
    assert result["warnings"][0]["pointer"] == "/payload/x"


def test_left_out_fields_are_warnings_of_the_check() -> None:
    composed = compose([*BOOK_REVIEW, {"kind": "text"}], pointer="/skills/0/inputFields")
    result = check_fields(composed, {"bookTitle": "a", "authorName": "b"})
    assert result["valid"] is True
    assert result["warnings"] == [
        {
            "code": "field-left-out",
            "pointer": "/skills/0/inputFields/2",
            "message": "left out: the field has no name (the data part's key)",
        }
    ]


def test_nothing_usable_composes_an_empty_object() -> None:
    composed = compose("not a list", pointer="/skills/0/inputFields")
    assert not composed.usable and composed.schema["properties"] == {}
    assert composed.fields.notes[0]["pointer"] == "/skills/0/inputFields"


@override_settings(REGISTRY_SCHEMA_BUDGET_SECONDS=0.0)
def test_validation_runs_under_the_schema_budget() -> None:
    composed = compose(BOOK_REVIEW)
    with pytest.raises(budget.BudgetExhausted):
        check_fields(composed, {"bookTitle": "x" * 10, "authorName": "y"})
