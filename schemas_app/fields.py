"""One JSON Schema from a skill's seed 001 ``inputFields``, and a payload checked against it.

Seed 001 (FieldDefinition ``{name, kind: text|file|data, mimeTypes, schema, description,
optional}``) sends the fields as one data part whose keys are the field names. So the fields
compose to one schema of an object (draft 2020-12), one property per named field:

* ``text``: a string; a required one must not be empty (an empty text is no text, and the
  form sends ``""`` for a field left blank);
* ``file``: a string holding the file's URL (``https:``, or a ``data:`` URL carrying the bytes):
  a data part carries JSON, and seed 001 sets no convention for a file inside one; the field's
  ``mimeTypes`` are said in its description;
* ``data``: the field's own ``schema`` when it is a JSON object, else any JSON object (a data
  part's value is one); a field without ``kind`` is ``data`` when it has a schema, else ``text``.

Each property has the field's name as ``title`` and its ``description``; ``required`` lists the
fields not ``optional``; members beyond the fields are allowed (the card does not close the
object). Fields without a name, not objects, of an unknown kind or repeating a name are left
out, and each is said (``notes``), as is a schema the kind ignores.

A data field's schema may ``$ref`` its own ``#/$defs/...``: in the composed document those
references are rebased under the field's property, so the document reads as one (the form
library resolves them there). Validation does not depend on that: the composed object is
checked with each data field's schema left open, and each such field's value against its own
schema as the card declares it (analysed by the registry: its own draft, its ``$ref``s), all
through the registry's validator and under the request's schema budget, in the result shape
of :func:`schemas_app.payloads.check_payload`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from registry.findings import extend_pointer
from schemas_app import budget
from schemas_app.analysis import analyse_schema, content_hash, validator_for
from schemas_app.validation import DRAFT2020, METASCHEMA_URI, error_items

TEXT, FILE, DATA = "text", "file", "data"
KINDS = (TEXT, FILE, DATA)
# Keywords whose values are data, not schemas: their "$ref" members are not references.
_VALUES = frozenset({"const", "enum", "default", "examples"})
# Deeper than this, a data field's schema is embedded as it is (references not rebased).
_MAX_DEPTH = 64


@dataclass(frozen=True)
class Field:
    """One usable FieldDefinition."""

    name: str
    kind: str
    description: str
    optional: bool
    mime_types: list[str]
    schema: dict[str, Any] | None  # a data field's own schema
    pointer: str


@dataclass
class Fields:
    """The usable fields of one ``inputFields``/``outputFields`` list, and what was left out."""

    fields: list[Field] = field(default_factory=list)
    notes: list[dict[str, str]] = field(default_factory=list)  # {pointer, message}

    def names(self) -> list[str]:
        return [f.name for f in self.fields]


@dataclass
class Composed:
    """The schema composed from a skill's inputFields, and the one a payload is checked with."""

    schema: dict[str, Any]
    shell: dict[str, Any]  # ``schema`` with each data field's own schema left open
    fields: Fields

    @property
    def usable(self) -> bool:
        return bool(self.fields.fields)


def _note(out: Fields, pointer: str, message: str) -> None:
    out.notes.append({"pointer": pointer, "message": message})


def read_fields(value: Any, pointer: str) -> Fields:
    """The FieldDefinitions of ``value`` (a card's ``inputFields`` or ``outputFields``)."""
    out = Fields()
    if value is None:
        return out
    if not isinstance(value, list):
        _note(out, pointer, "not an array: no field is used")
        return out
    seen: set[str] = set()
    for index, item in enumerate(value):
        where = extend_pointer(pointer, index)
        if not isinstance(item, dict):
            _note(out, where, "left out: a FieldDefinition is an object")
            continue
        name = item.get("name")
        if not isinstance(name, str) or not name:
            _note(out, where, "left out: the field has no name (the data part's key)")
            continue
        if name in seen:
            _note(out, where, f"left out: another field is already named {name!r}")
            continue
        schema = item.get("schema")
        kind = item.get("kind")
        if kind is None:
            kind = DATA if isinstance(schema, dict) else TEXT
        elif kind not in KINDS:
            _note(out, where, f"left out: kind {str(kind)[:40]!r} is not text, file or data")
            continue
        if schema is not None and not isinstance(schema, dict):
            _note(out, extend_pointer(where, "schema"), "not a JSON object: not used")
            schema = None
        if schema is not None and kind != DATA:
            _note(out, extend_pointer(where, "schema"), f"ignored: the field's kind is {kind}")
            schema = None
        description = item.get("description")
        mime_types = item.get("mimeTypes")
        seen.add(name)
        out.fields.append(
            Field(
                name=name,
                kind=kind,
                description=description if isinstance(description, str) else "",
                optional=item.get("optional") is True,
                mime_types=[m for m in mime_types or [] if isinstance(m, str)]
                if isinstance(mime_types, list)
                else [],
                schema=schema,
                pointer=where,
            )
        )
    return out


def _rebased(node: Any, prefix: str, depth: int = 0) -> Any:
    """``node`` with each local ``$ref`` (``#`` or ``#/...``) pointing under ``prefix``."""
    if depth > _MAX_DEPTH:
        return node
    if isinstance(node, list):
        return [_rebased(item, prefix, depth + 1) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "$ref" and isinstance(value, str) and (value == "#" or value.startswith("#/")):
            out[key] = "#" + prefix + value[1:]
        elif key in _VALUES:
            out[key] = value
        else:
            out[key] = _rebased(value, prefix, depth + 1)
    return out


def _described(schema: dict[str, Any], item: Field) -> dict[str, Any]:
    out = {**schema, "title": item.name}
    if item.description:
        out["description"] = item.description
    return out


def _property(item: Field, *, shell: bool) -> dict[str, Any]:
    if item.kind == TEXT:
        text: dict[str, Any] = {"type": "string"}
        return _described(text if item.optional else {**text, "minLength": 1}, item)
    if item.kind == FILE:
        url: dict[str, Any] = {"type": "string", "format": "uri"}
        described = _described(url if item.optional else {**url, "minLength": 1}, item)
        said = "The file's URL (https:, or a data: URL with its bytes)"
        if item.mime_types:
            said += "; media types: " + ", ".join(item.mime_types)
        own = item.description.rstrip(". ")
        described["description"] = f"{own}. {said}." if own else f"{said}."
        return described
    if item.schema is None:
        # Open, and said so: the form library renders an object only with "properties".
        anything: dict[str, Any] = {
            "type": "object",
            "properties": {},
            "additionalProperties": True,
        }
        return _described(anything, item)
    if shell:
        return _described({}, item)
    embedded = {k: v for k, v in item.schema.items() if k not in ("$schema", "$id")}
    prefix = extend_pointer("/properties", item.name)
    return _described(_rebased(embedded, prefix), item)


def compose(value: Any, *, pointer: str = "", title: str = "") -> Composed:
    """The schema of the data part a skill with these ``inputFields`` takes."""
    found = read_fields(value, pointer)

    def document(*, shell: bool) -> dict[str, Any]:
        schema: dict[str, Any] = {
            "$schema": METASCHEMA_URI[DRAFT2020],
            "type": "object",
            "description": "Composed by the registry from the skill's inputFields (seed 001): "
            "one member per field.",
            "properties": {item.name: _property(item, shell=shell) for item in found.fields},
            "required": [item.name for item in found.fields if not item.optional],
        }
        if title:
            schema["title"] = title
        return schema

    return Composed(schema=document(shell=False), shell=document(shell=True), fields=found)


def check_fields(composed: Composed, payload: Any) -> dict[str, Any]:
    """``payload`` against the composed schema: the result of ``check_payload``, with
    ``fields_schema`` (the composed schema) instead of a named ``schema``."""
    with budget.scope():
        return _check(composed, payload)


def _check(composed: Composed, payload: Any) -> dict[str, Any]:
    warnings: list[dict[str, Any]] = [
        {"code": "field-left-out", **note} for note in composed.fields.notes
    ]
    sha256, _algorithm, _size = content_hash(composed.shell)
    validator = validator_for(sha256, composed.shell, DRAFT2020)
    if validator is None:  # a schema the registry wrote: never expected
        return _result("cannot-validate", composed, [], warnings)
    errors = [
        {"pointer": "/payload" + e.pointer, "message": e.message, "keyword": e.keyword}
        for e in error_items(validator, payload)
    ]
    unchecked = []
    for item in composed.fields.fields:
        if item.schema is None or not isinstance(payload, dict) or item.name not in payload:
            continue
        where = extend_pointer("/payload", item.name)
        analysis = analyse_schema(item.schema)
        own = analysis.validator()
        if own is None:
            unchecked.append(item.name)
            warnings.append(
                {
                    "code": "not-validated",
                    "pointer": where,
                    "message": "the registry cannot validate against this field's schema "
                    "(see its problems on the agent's schemas)",
                }
            )
            continue
        errors += [
            {"pointer": where + e.pointer, "message": e.message, "keyword": e.keyword}
            for e in error_items(own, payload[item.name])
        ]
    if errors:
        return _result("invalid", composed, errors, warnings)
    return _result("cannot-validate" if unchecked else "valid", composed, [], warnings)


_OUTCOMES = {
    "valid": (True, "delivered", "the payload is valid"),
    "invalid": (False, "rejected", ""),
    "cannot-validate": (
        None,
        "best-effort",
        "the registry cannot validate every field against its schema; the rest is valid",
    ),
}


def _result(
    outcome: str, composed: Composed, errors: list[dict[str, Any]], warnings: list[dict[str, Any]]
) -> dict[str, Any]:
    valid, delivery, detail = _OUTCOMES[outcome]
    return {
        "outcome": outcome,
        "valid": valid,
        "delivery": delivery,
        "detail": detail or f"{len(errors)} validation error(s)",
        "fields_schema": composed.schema,
        "errors": errors,
        "warnings": warnings,
        "available_schemas": [],
    }
