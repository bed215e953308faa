"""Findings about the JSON Schemas a card embeds, the modes naming them, FieldDefinitions,
skill examples and the params of known extensions.

:func:`schema_findings` is called by ``cards.pipeline.check`` next to the card rules, so
ingestion and ``POST /api/v1/validate`` report the same findings. It reads nothing from the
database and fetches nothing. Validating examples and extension params runs under the schema
budget (:mod:`schemas_app.budget`: the request's, or the crawl's in a Celery task); when it is
spent the checks stop with a ``schema.budget-exhausted`` finding and the rest of the report
stands. An example holding a text too long for one match of a pattern to stay cheap gets the
same finding and is not checked; the next examples are.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from typing import Any

from registry.findings import Finding, Severity, extend_pointer
from registry.mediatypes import MediaTypeError, parse_media_type
from schemas_app import budget
from schemas_app.analysis import SchemaAnalysis, analyse_schema, validator_for
from schemas_app.conf import limit
from schemas_app.extract import INPUT, CardSchemas, FieldRef, extract
from schemas_app.known_extensions import SCHEMAS_EXTENSION_URI, known_extension
from schemas_app.validation import error_items

logger = logging.getLogger(__name__)

FIELD_KINDS = ("text", "file", "data")
MAX_FINDINGS = 500


class _Findings:
    def __init__(self) -> None:
        self.items: list[Finding] = []

    def add(self, code: str, severity: Severity, pointer: str, message: str) -> None:
        if len(self.items) < MAX_FINDINGS:
            self.items.append(Finding(code, severity, pointer, message))

    def schema(self, base: str, analysis: SchemaAnalysis) -> None:
        for problem in analysis.problems:
            self.add(problem.code, problem.severity, base + problem.pointer, problem.message)


def _declared_analyses(found: CardSchemas, out: _Findings) -> dict[str, SchemaAnalysis]:
    cap = limit("REGISTRY_SCHEMA_MAX_PER_CARD")
    analyses: dict[str, SchemaAnalysis] = {}
    for position, declared in enumerate(found.declared.values()):
        if position >= cap:
            out.add(
                "schemas.too-many",
                "warning",
                "/schemas",
                f"{len(found.declared)} schemas declared; the registry checks and indexes the "
                f"first {cap}",
            )
            break
        analysis = analyse_schema(declared.value)
        out.schema(declared.pointer, analysis)
        analyses[declared.name] = analysis
    return analyses


def _check_map(found: CardSchemas, out: _Findings) -> None:
    if not found.schemas_present:
        return
    if not isinstance(found.schemas_value, dict):
        out.add(
            "schemas.wrong-type",
            "error",
            "/schemas",
            "schemas must be an object mapping names to JSON Schemas",
        )
        return
    if SCHEMAS_EXTENSION_URI not in found.extension_uris():
        out.add(
            "schemas.extension-not-declared",
            "warning",
            "/schemas",
            "the card declares schemas but not the schemas extension "
            f"({SCHEMAS_EXTENSION_URI}) in capabilities.extensions",
        )


def _check_modes(found: CardSchemas, analyses: dict[str, SchemaAnalysis], out: _Findings) -> None:
    named: set[str] = set()
    for ref in found.modes:
        named.add(ref.name)
        if ref.inherited or ref.name in found.declared:
            continue  # an inherited default mode is reported once, where it is written
        out.add(
            "schema.undeclared",
            "error",
            ref.pointer,
            f"the mode {ref.media_type!r} names the schema {ref.name!r}, which the card does "
            "not declare in schemas",
        )
    for name, declared in found.declared.items():
        if name not in named and name in analyses:
            out.add(
                "schema.unused",
                "info",
                declared.pointer,
                f"no input or output mode names the schema {name!r}",
            )


def _parse_example(text: Any) -> Any:
    if not isinstance(text, str) or not text.lstrip().startswith(("{", "[")):
        return None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, (dict, list)) else None


def _check_examples(
    found: CardSchemas, analyses: dict[str, SchemaAnalysis], out: _Findings
) -> None:
    cap = limit("REGISTRY_SCHEMA_EXAMPLES_PER_SKILL")
    for skill_index, skill in found.skills:
        names = [r.name for r in found.schema_modes_of_skill(skill_index, INPUT)]
        usable = [(n, analyses[n]) for n in names if n in analyses and analyses[n].usable]
        examples = skill.get("examples")
        if not usable or not isinstance(examples, list):
            continue
        for index, text in enumerate(examples[:cap]):
            value = _parse_example(text)
            if value is None:
                continue
            problems: list[str] = []
            pointer = extend_pointer("/skills", skill_index, "examples", index)
            try:
                for name, analysis in usable:
                    validator = analysis.validator()
                    if validator is None:
                        continue
                    errors = error_items(validator, value, max_errors=1)
                    if not errors:
                        problems = []
                        break
                    first = errors[0]
                    problems.append(f"{name}: {first.message} at {first.pointer or '/'}")
            except budget.InputTooLong as exc:
                # This example alone was not evaluated; the budget lasts for the others.
                out.add("schema.budget-exhausted", "warning", pointer, exc.finding("examples"))
                continue
            except budget.BudgetExhausted as exc:
                out.add("schema.budget-exhausted", "warning", pointer, exc.finding("examples"))
                return
            if problems:
                out.add(
                    "skill.example-invalid",
                    "warning",
                    pointer,
                    "the example is JSON but matches none of the skill's input schemas ("
                    + "; ".join(problems)
                    + ")",
                )


def _wrong_type(out: _Findings, pointer: str, what: str) -> None:
    out.add("field.wrong-type", "error", pointer, what)


def _check_field(ref: FieldRef, out: _Findings) -> None:
    value = ref.value
    if not isinstance(value, dict):
        _wrong_type(out, ref.pointer, "a FieldDefinition must be an object")
        return
    for key, expected, kind in (
        ("name", str, "a string"),
        ("description", str, "a string"),
        ("optional", bool, "a boolean"),
    ):
        if key in value and value[key] is not None and not isinstance(value[key], expected):
            _wrong_type(out, extend_pointer(ref.pointer, key), f"{key} must be {kind}")
    kind_value = value.get("kind")
    if kind_value is not None and kind_value not in FIELD_KINDS:
        out.add(
            "field.invalid-kind",
            "error",
            extend_pointer(ref.pointer, "kind"),
            f"kind must be one of {', '.join(FIELD_KINDS)}, not {json.dumps(kind_value)[:100]}",
        )
    mime_types = value.get("mimeTypes")
    if mime_types is not None:
        if not isinstance(mime_types, list):
            _wrong_type(out, extend_pointer(ref.pointer, "mimeTypes"), "mimeTypes must be an array")
        else:
            for index, mime in enumerate(mime_types):
                where = extend_pointer(ref.pointer, "mimeTypes", index)
                try:
                    parse_media_type(mime)
                except MediaTypeError as exc:
                    out.add("field.invalid-mime-type", "warning", where, f"not a media type: {exc}")
    schema = value.get("schema")
    if schema is None:
        return
    where = extend_pointer(ref.pointer, "schema")
    if kind_value in ("text", "file"):
        out.add(
            "field.schema-on-non-data",
            "error",
            where,
            f"a schema describes data parts; this field's kind is {kind_value!r}",
        )
    out.schema(where, analyse_schema(schema))


def _check_fields(found: CardSchemas, out: _Findings) -> None:
    names: dict[tuple[int, str], set[str]] = {}
    for skill_index, skill in found.skills:
        for key in ("inputFields", "outputFields"):
            if skill.get(key) is not None and not isinstance(skill[key], list):
                _wrong_type(
                    out, extend_pointer("/skills", skill_index, key), f"{key} must be an array"
                )
    for ref in found.fields:
        _check_field(ref, out)
        name = ref.name
        if name is None:
            continue
        seen = names.setdefault((ref.skill_index, ref.direction), set())
        if name in seen:
            out.add(
                "field.duplicate-name",
                "error",
                extend_pointer(ref.pointer, "name"),
                f"another {ref.direction} field of this skill is already named {name!r}",
            )
        seen.add(name)


def params_errors(uri: str, params: Any) -> list[dict[str, str]] | None:
    """Errors of a known extension's params (pointers into params); None for unknown URIs."""
    known = known_extension(uri)
    if known is None:
        return None
    analysis = analyse_schema(known.params_schema)
    validator = validator_for(analysis.sha256, known.params_schema, analysis.draft)
    return [
        {"pointer": item.pointer, "message": item.message}
        for item in error_items(validator, params, max_errors=20)
    ]


def _check_extensions(found: CardSchemas, out: _Findings) -> None:
    for ext in found.extensions:
        if not ext.has_params:
            continue
        errors = params_errors(ext.uri, ext.params)
        base = extend_pointer(ext.pointer, "params")
        for error in errors or []:
            out.add(
                "extension.invalid-params",
                "warning",
                base + error["pointer"],
                f"params of {ext.uri}: {error['message']}",
            )


def schema_findings(data: dict[str, Any] | None, card: dict[str, Any] | None) -> list[Finding]:
    """Every schema-related finding about a card (``data`` as served, ``card`` normalised)."""
    if not isinstance(card, dict):
        return []
    out = _Findings()
    try:
        with budget.scope():
            found = extract(card)
            _check_map(found, out)
            analyses = _declared_analyses(found, out)
            _check_modes(found, analyses, out)
            _check_fields(found, out)
            try:
                _check_extensions(found, out)
            except budget.BudgetExhausted as exc:
                out.add(
                    "schema.budget-exhausted",
                    "warning",
                    "/capabilities/extensions",
                    exc.finding("extension params"),
                )
            else:
                _check_examples(found, analyses, out)
    except Exception as exc:  # noqa: BLE001 - a crawl must record, not crash
        logger.exception("schema checks failed")
        out.add("schemas.internal-error", "error", "", f"the schema checks failed: {exc!r}")
    return out.items


def finding_codes() -> Iterable[str]:
    """The codes this module can emit (documented in docs/schemas.md)."""
    return (
        "schemas.wrong-type",
        "schemas.too-many",
        "schemas.extension-not-declared",
        "schema.not-a-schema",
        "schema.too-large",
        "schema.not-canonical",
        "schema.unknown-dialect",
        "schema.invalid",
        "schema.remote-ref",
        "schema.unresolvable-ref",
        "schema.compile-error",
        "schema.undeclared",
        "schema.unused",
        "skill.example-invalid",
        "schema.budget-exhausted",
        "field.wrong-type",
        "field.invalid-kind",
        "field.invalid-mime-type",
        "field.schema-on-non-data",
        "field.duplicate-name",
        "extension.invalid-params",
        "schemas.internal-error",
    )
