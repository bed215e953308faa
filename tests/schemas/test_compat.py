"""Compatibility rules, on a sample of the public labelled cases named in the reference.

The cases are re-expressed from the descriptions and labels of Confluent Schema Registry's
``json-schema-provider/src/test/resources/diff-schema-examples.json`` and
``diff-combined-schema-examples.json`` (reference json-schemas.md section 4.7); the expected
verdict is Confluent's, except where the registry departs from it on purpose (the last block).
"""

from __future__ import annotations

from typing import Any

import pytest

from schemas_app.compat import backward_diff, classify, is_backward_compatible

STRING = {"type": "string"}
NUMBER = {"type": "number"}


def obj(**properties: Any) -> dict[str, Any]:
    return {"properties": properties}


CONFLUENT_CASES: list[tuple[str, Any, Any, bool]] = [
    ("Anything can change to empty schema", {"properties": {}}, {}, True),
    ("Detect changes to title", {"title": "something"}, {"title": "something_else"}, True),
    ("Detect changes to simple schema type", {"type": "object"}, {"type": "array"}, False),
    (
        "Detect increased minLength string schema",
        {"type": "string", "minLength": 10},
        {"type": "string", "minLength": 11},
        False,
    ),
    (
        "Detect decreased minLength string schema",
        {"type": "string", "minLength": 11},
        {"type": "string", "minLength": 10},
        True,
    ),
    (
        "Detect increased maxLength string schema",
        {"type": "string", "maxLength": 10},
        {"type": "string", "maxLength": 12},
        True,
    ),
    (
        "Detect decreased maxLength string schema",
        {"type": "string", "maxLength": 12},
        {"type": "string", "maxLength": 10},
        False,
    ),
    (
        "Detect removed pattern from string schema",
        {"type": "string", "pattern": "uuid"},
        {"type": "string"},
        True,
    ),
    (
        "Detect changes to pattern string schema",
        {"type": "string", "pattern": "date-time"},
        {"type": "string", "pattern": "uuid"},
        False,
    ),
    (
        "Detect increased maximum number schema",
        {"type": "number", "maximum": 10},
        {"type": "number", "maximum": 11},
        True,
    ),
    (
        "Detect increased minimum number schema",
        {"type": "number", "minimum": 10},
        {"type": "number", "minimum": 11},
        False,
    ),
    (
        "Detect reduced multipleOf number schema",
        {"type": "number", "multipleOf": 10},
        {"type": "number", "multipleOf": 2},
        True,
    ),
    (
        "Detect changes to multipleOf number schema",
        {"type": "number", "multipleOf": 10},
        {"type": "number", "multipleOf": 11},
        False,
    ),
    ("Detect narrowed change to number schema", NUMBER, {"type": "integer"}, False),
    ("Detect extended change to number schema", {"type": "integer"}, NUMBER, True),
    (
        "Detect compatible change to not schema",
        {"not": NUMBER},
        {"not": {"type": "integer"}},
        True,
    ),
    (
        "Detect incompatible change to not schema",
        {"not": {"type": "integer"}},
        {"not": NUMBER},
        False,
    ),
    ("Detect removed enum", {"type": "string", "enum": ["red"]}, STRING, True),
    (
        "Detect incompatible changes to enum schema",
        {"allOf": [STRING, {"enum": ["red"]}]},
        {"allOf": [STRING, {"enum": ["blue"]}]},
        False,
    ),
    (
        "Detect compatible changes to enum schema",
        {"allOf": [STRING, {"enum": ["red"]}]},
        {"allOf": [{"enum": ["red", "blue"]}, STRING]},
        True,
    ),
    ("Detect changes to type array", {"type": ["object"]}, {"type": ["object", "array"]}, True),
    ("Detect changes to sub schemas", {"oneOf": [STRING]}, {"oneOf": [NUMBER]}, False),
    (
        "Detect changes to number of sub schemas",
        {"oneOf": [STRING]},
        {"oneOf": [NUMBER, STRING]},
        True,
    ),
    ("Detect changes to remove properties", obj(foo=STRING), obj(bar=STRING), False),
    ("Detect change type of properties", obj(foo=STRING), obj(foo=NUMBER), False),
    (
        "Detect optional property added to closed content model",
        {**obj(foo=STRING), "additionalProperties": False},
        {**obj(foo=STRING, bar=NUMBER), "additionalProperties": False},
        True,
    ),
    (
        "Detect property added to partially open content model 1",
        {
            **obj(foo=STRING),
            "additionalProperties": False,
            "patternProperties": {"^S_": STRING, "^I_": {"type": "integer"}},
        },
        {
            **obj(foo=STRING, I_123=NUMBER),
            "additionalProperties": False,
            "patternProperties": {"^S_": STRING, "^I_": {"type": "integer"}},
        },
        True,
    ),
    (
        "Detect property added to partially open content model 3",
        {**obj(foo=STRING), "additionalProperties": STRING},
        {**obj(foo=STRING, bar=NUMBER), "additionalProperties": STRING},
        False,
    ),
    (
        "Detect property added to partially open content model 4",
        {**obj(foo=STRING), "additionalProperties": STRING},
        {**obj(foo=STRING, bar=STRING), "required": ["bar"], "additionalProperties": STRING},
        False,
    ),
    (
        "Detect property removed from partially open content model 1",
        {**obj(foo=STRING, I_123={"type": "integer"}), "additionalProperties": False},
        {
            **obj(foo=STRING),
            "additionalProperties": False,
            "patternProperties": {"^S_": STRING, "^I_": NUMBER},
        },
        True,
    ),
    (
        "Detect property removed from partially open content model 3",
        {**obj(foo=STRING, bar=NUMBER), "additionalProperties": False},
        {**obj(foo=STRING), "additionalProperties": STRING},
        False,
    ),
    (
        "Detect property removed from partially open content model 5",
        {**obj(foo=STRING, bar=STRING), "additionalProperties": False},
        {**obj(foo=STRING), "additionalProperties": {"oneOf": [{"type": "null"}, STRING]}},
        True,
    ),
    (
        "Detect property added to open content model",
        obj(foo=STRING),
        obj(foo=STRING, bar=NUMBER),
        False,
    ),
    (
        "Detect changes to composed schema type",
        {"oneOf": [obj(foo=STRING)]},
        {"oneOf": [obj(foo=NUMBER)]},
        False,
    ),
    (
        "Detect compatible change from oneOf to allOf schema",  # the combined file's label
        {"oneOf": [STRING]},
        {"allOf": [STRING]},
        True,
    ),
    (
        "Detect changes to dependencies as array",
        {**obj(foo=NUMBER, bar=STRING), "dependencies": {"foo": ["bar"]}},
        {**obj(foo=NUMBER, bar=STRING), "dependencies": {"bar": ["foo"]}},
        False,
    ),
    (
        "Detect compatible changes to dependencies schemas",
        {"dependencies": {"foo": STRING, "bar": STRING}},
        {"dependencies": {"foo": STRING}},
        True,
    ),
    (
        "Detect changes to dependencies properties",
        {"dependencies": {"foo": STRING}},
        {"dependencies": {"bar": STRING}},
        False,
    ),
    (
        "Detect required array to be removed",
        {**obj(foo=STRING), "required": ["foo"]},
        obj(foo=STRING),
        True,
    ),
    (
        "Detect required array to be added",
        obj(foo=STRING),
        {**obj(foo=STRING), "required": ["foo"]},
        False,
    ),
    ("Detect increased maxProperties", {"maxProperties": 1}, {"maxProperties": 2}, True),
    ("Detect increased minProperties", {"minProperties": 1}, {"minProperties": 2}, False),
    (
        "Detect changes to all items schema (added)",
        {"type": "array"},
        {"type": "array", "items": STRING},
        False,
    ),
    (
        "Detect changes to all items schema (removed)",
        {"type": "array", "items": STRING},
        {"type": "array"},
        True,
    ),
    (
        "Detect changes to items schema list",
        {"type": "array", "items": [STRING, NUMBER]},
        {"type": "array"},
        True,
    ),
    (
        "Detect item added to partially open content model 1",
        {"type": "array", "items": [STRING, NUMBER], "additionalItems": STRING},
        {"type": "array", "items": [STRING, NUMBER, STRING], "additionalItems": STRING},
        True,
    ),
    (
        "Detect item added to partially open content model 2",
        {"type": "array", "items": [STRING, NUMBER], "additionalItems": STRING},
        {"type": "array", "items": [STRING, NUMBER, NUMBER], "additionalItems": STRING},
        False,
    ),
    (
        "Detect item removed from partially open content model 3",
        {"type": "array", "items": [STRING, NUMBER, NUMBER], "additionalItems": STRING},
        {"type": "array", "items": [STRING, NUMBER], "additionalItems": STRING},
        False,
    ),
    (
        "Detect decreased maxItems",
        {"type": "array", "maxItems": 2},
        {"type": "array", "maxItems": 1},
        False,
    ),
    (
        "Detect unique items removed",
        {"type": "array", "uniqueItems": True},
        {"type": "array"},
        True,
    ),
    (
        "Detect incompatible changes to reference schemas",
        {
            "type": "array",
            "items": {"$ref": "#/definitions/someRef"},
            "definitions": {"someRef": STRING},
        },
        {
            "type": "array",
            "items": {"$ref": "#/definitions/someRef"},
            "definitions": {"someRef": NUMBER},
        },
        False,
    ),
    (
        "Detect compatible change of moving to reference schema",
        STRING,
        {"$ref": "#/definitions/someRef", "definitions": {"someRef": STRING}},
        True,
    ),
    (
        "Detect added boolean additional properties",
        {"properties": {}, "additionalProperties": False},
        {"properties": {}},
        True,
    ),
    (
        "Detect removed boolean additional properties",
        {"additionalProperties": True},
        {"additionalProperties": False},
        False,
    ),
    (
        "Detect narrowing changes to additional properties schema",
        {"additionalProperties": True},
        {"additionalProperties": NUMBER},
        False,
    ),
    (
        "Detect adding empty schema to open content model",
        {"additionalProperties": True},
        {"additionalProperties": True, "properties": {"foo": True}},
        True,
    ),
    (
        "Detect removing false from closed content model",
        {"additionalProperties": False, "properties": {"foo": False}},
        {"additionalProperties": False},
        True,
    ),
    (
        "Detect adding to closed content model for array",
        {"type": "array", "items": [STRING, NUMBER], "additionalItems": False},
        {"type": "array", "items": [STRING, NUMBER, {"type": "boolean"}], "additionalItems": True},
        True,
    ),
    (
        "Detect change to oneOf schema (with maxLength)",
        {"type": "string", "maxLength": 3},
        {"oneOf": [NUMBER, STRING]},
        True,
    ),
    # diff-combined-schema-examples.json
    (
        "Detect compatible change to combined schema",
        obj(prop1={"allOf": [{"enum": ["one", "two", "three"]}, STRING, {"maxLength": 5}]}),
        obj(prop1={"allOf": [{"maxLength": 5}, {"enum": ["one", "two", "three"]}, STRING]}),
        True,
    ),
    (
        "Detect incompatible change to combined schema",
        obj(prop1={"allOf": [{"enum": ["one", "two", "three"]}, STRING, {"maxLength": 5}]}),
        obj(prop1={"allOf": [{"maxLength": 5}, {"enum": ["one", "two", "three"]}, NUMBER]}),
        False,
    ),
    (
        "Detect combined schema with duplicates in original",
        obj(prop1={"allOf": [STRING, STRING]}),
        obj(prop1={"allOf": [STRING]}),
        True,
    ),
    (
        "Detect incompatible change to oneOf schema",
        obj(prop1={"oneOf": [NUMBER, STRING]}),
        obj(prop1={"oneOf": [STRING]}),
        False,
    ),
    (
        "Detect compatible change to allOf schema",
        obj(prop1={"allOf": [{"enum": ["one", "two", "three"]}, STRING]}),
        obj(prop1={"allOf": [STRING]}),
        True,
    ),
    (
        "Detect incompatible change to allOf schema",
        obj(prop1={"allOf": [STRING]}),
        obj(prop1={"allOf": [{"enum": ["one", "two", "three"]}, STRING]}),
        False,
    ),
    (
        "Detect compatible change from oneOf to anyOf schema with more properties",
        obj(prop1={"oneOf": [STRING]}),
        obj(prop1={"anyOf": [NUMBER, STRING]}),
        True,
    ),
    (
        "Detect incompatible change from anyOf with more properties to oneOf schema",
        obj(prop1={"anyOf": [NUMBER, STRING]}),
        obj(prop1={"oneOf": [STRING]}),
        False,
    ),
    (
        "Detect incompatible change from anyOf to allOf schema",
        obj(prop1={"anyOf": [STRING]}),
        obj(prop1={"allOf": [NUMBER, STRING]}),
        False,
    ),
    (
        "Detect compatible change from non-combined to oneOf schema",
        obj(prop1=STRING),
        obj(prop1={"oneOf": [NUMBER, STRING]}),
        True,
    ),
]


@pytest.mark.parametrize(
    ("old", "new", "compatible"),
    [pytest.param(o, n, c, id=d) for d, o, n, c in CONFLUENT_CASES],
)
def test_confluent_labelled_cases(old: Any, new: Any, compatible: bool) -> None:
    assert is_backward_compatible(old, new) is compatible, [
        (d.type, d.pointer) for d in backward_diff(old, new)
    ]


def test_difference_types_name_the_rule() -> None:
    diffs = backward_diff(obj(foo=STRING), obj(foo=STRING, bar=NUMBER))
    assert [(d.type, d.pointer) for d in diffs] == [
        ("OPTIONAL_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL", "/properties/bar")
    ]


def test_lenient_policy_relaxes_the_open_content_model() -> None:
    old, new = obj(foo=STRING), obj(foo=STRING, bar=NUMBER)
    assert not is_backward_compatible(old, new, "STRICT")
    assert is_backward_compatible(old, new, "LENIENT")


# Where the registry departs from Confluent on purpose (docs/schemas.md).


def test_required_gaining_an_undeclared_name_breaks() -> None:
    # Confluent labels this compatible; old data without "bar" is rejected now.
    old = {**obj(foo=STRING), "required": ["foo"]}
    new = {**obj(foo=STRING), "required": ["bar"]}
    assert not is_backward_compatible(old, new)


def test_required_with_a_default_breaks() -> None:
    old = obj(a={"type": "string", "default": "x"})
    new = {**old, "required": ["a"]}
    assert [d.type for d in backward_diff(old, new)] == ["REQUIRED_ATTRIBUTE_WITH_DEFAULT_ADDED"]
    assert not is_backward_compatible(old, new)


def test_format_is_diffed_only_where_it_is_asserted() -> None:
    draft7 = "http://json-schema.org/draft-07/schema#"
    assert not is_backward_compatible(
        {"$schema": draft7, "type": "string"},
        {"$schema": draft7, "type": "string", "format": "email"},
    )
    assert is_backward_compatible(STRING, {"type": "string", "format": "email"})


def test_conditionals_are_diffed() -> None:
    plain = {"type": "object"}
    conditional = {"type": "object", "if": {"required": ["a"]}, "then": {"required": ["b"]}}
    assert not is_backward_compatible(plain, conditional)
    assert is_backward_compatible(conditional, plain)


def test_recursive_schemas_terminate() -> None:
    tree = {"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#"}}}}
    stricter = {**tree, "required": ["children"]}
    assert is_backward_compatible(tree, tree)
    assert not is_backward_compatible(tree, stricter)


def test_folded_all_of_with_refs() -> None:
    old = {
        "type": "object",
        "allOf": [{"$ref": "#/$defs/base"}],
        "properties": {"x": STRING},
        "$defs": {"base": {"required": ["id"], "properties": {"id": STRING}}},
    }
    new = {"type": "object", "properties": {"x": STRING, "id": STRING}, "required": ["id"]}
    assert is_backward_compatible(old, new) and is_backward_compatible(new, old)


# Direction: input schemas must keep accepting, output schemas must not start allowing more.


def test_an_input_schema_gaining_a_required_property_is_breaking() -> None:
    old = {"type": "object", "properties": {"a": STRING}, "additionalProperties": False}
    new = {**old, "properties": {"a": STRING, "c": STRING}, "required": ["c"]}
    verdict = classify(old, new, "input")
    assert verdict.verdict == "breaking" and verdict.semantic == "no"
    assert all(r["direction"] == "input" for r in verdict.reasons)


def test_an_output_schema_gaining_an_optional_property_on_a_closed_model_is_breaking() -> None:
    old = {"type": "object", "properties": {"a": STRING}, "additionalProperties": False}
    new = {
        "type": "object",
        "properties": {"a": STRING, "b": STRING},
        "additionalProperties": False,
    }
    assert classify(old, new, "input").verdict == "compatible"
    output = classify(old, new, "output")
    assert output.verdict == "breaking"
    assert [r["type"] for r in output.reasons] == ["PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL"]
    assert classify(new, old, "output").verdict == "compatible"


def test_both_directions_for_a_schema_used_both_ways() -> None:
    old = {"type": "string", "maxLength": 10}
    new = {"type": "string", "maxLength": 20}
    assert classify(old, new, "input").verdict == "compatible"
    assert classify(old, new, "both").verdict == "breaking"


def test_overly_intricate_schemas_give_an_unknown_verdict_quickly() -> None:
    import time

    old = {
        "anyOf": [
            {"anyOf": [{"type": "string", "maxLength": i + j} for j in range(30)]}
            for i in range(30)
        ]
    }
    new = {
        "anyOf": [
            {"anyOf": [{"type": "string", "maxLength": i + j + 1} for j in range(30)]}
            for i in range(30)
        ]
    }
    started = time.monotonic()
    assert classify(old, new, "input").verdict == "unknown"
    assert time.monotonic() - started < 5
