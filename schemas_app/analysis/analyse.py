"""``analyse_schema``: the whole analysis of one schema, cached by content hash."""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from typing import Any

from schemas_app.analysis.features import _features
from schemas_app.analysis.hashing import content_hash
from schemas_app.analysis.model import HASH_SORTED_JSON, Problem, SchemaAnalysis, for_validation
from schemas_app.analysis.refs import _ref_problems
from schemas_app.conf import limit
from schemas_app.validation import (
    DEFAULT_DRAFT,
    DRAFT4,
    compile_schema,
    draft_of,
    meta_errors,
    validators,
)


def _kind(value: Any) -> str:
    return {list: "an array", str: "a string", int: "a number", float: "a number"}.get(
        type(value), "null"
    )


def _analyse(value: Any, sha256: str, algorithm: str, size: int) -> SchemaAnalysis:
    analysis = SchemaAnalysis(content=value, sha256=sha256, hash_algorithm=algorithm, size=size)
    if algorithm == HASH_SORTED_JSON:
        analysis.problems.append(
            Problem(
                "schema.not-canonical",
                "warning",
                "",
                "the schema holds a number RFC 8785 cannot represent (an integer beyond "
                "+-(2^53-1)); its hash is taken over sorted-key JSON instead",
            )
        )
    if size > limit("REGISTRY_SCHEMA_MAX_BYTES"):
        analysis.storable = False
        analysis.problems.append(
            Problem(
                "schema.too-large",
                "error",
                "",
                f"the schema is {size} bytes in canonical form; the registry checks and indexes "
                f"schemas up to {limit('REGISTRY_SCHEMA_MAX_BYTES')} bytes",
            )
        )
        return analysis
    if isinstance(value, dict):
        raw_dialect = value.get("$schema")
        if raw_dialect is not None:
            analysis.dialect = (
                raw_dialect if isinstance(raw_dialect, str) else json.dumps(raw_dialect)
            )
            draft = draft_of(raw_dialect)
            if draft is None:
                analysis.problems.append(
                    Problem(
                        "schema.unknown-dialect",
                        "warning",
                        "/$schema",
                        f"unknown dialect {analysis.dialect[:200]!r}; validated as JSON Schema "
                        "2020-12",
                    )
                )
            analysis.draft = draft or DEFAULT_DRAFT
        id_value = value.get("id" if analysis.draft == DRAFT4 else "$id")
        analysis.schema_uri = id_value[:2048] if isinstance(id_value, str) else ""
        title = value.get("title")
        analysis.title = title[:512] if isinstance(title, str) else ""
        analysis.deprecated = value.get("deprecated") is True
    checked = for_validation(value, analysis.draft)
    invalid = meta_errors(checked, analysis.draft)
    for item in invalid:
        analysis.problems.append(Problem("schema.invalid", "error", item.pointer, item.message))
    ref_problems = _ref_problems(value, analysis.draft)
    analysis.problems.extend(ref_problems)
    _features(analysis)
    if invalid or ref_problems:
        return analysis
    try:
        compiled = compile_schema(checked, analysis.draft)
    except Exception as exc:  # noqa: BLE001 - jsonschema-rs raises several types
        message = str(getattr(exc, "message", "") or exc)
        analysis.problems.append(
            Problem("schema.compile-error", "error", "", f"the schema does not compile: {message}")
        )
        return analysis
    analysis.usable = True
    validators.get(sha256, lambda: compiled)
    return analysis


class _AnalysisCache:
    def __init__(self, size: int = 4096) -> None:
        self.size = size
        self.items: OrderedDict[str, SchemaAnalysis] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, key: str) -> SchemaAnalysis | None:
        with self.lock:
            found = self.items.get(key)
            if found is not None:
                self.items.move_to_end(key)
            return found

    def put(self, key: str, value: SchemaAnalysis) -> None:
        with self.lock:
            self.items[key] = value
            while len(self.items) > self.size:
                self.items.popitem(last=False)

    def clear(self) -> None:
        with self.lock:
            self.items.clear()


_analyses = _AnalysisCache()


def analyse_schema(value: Any) -> SchemaAnalysis:
    """Analyse one schema (a JSON object or boolean). Never raises."""
    if not isinstance(value, (dict, bool)):
        analysis = SchemaAnalysis(content=value, storable=False)
        analysis.problems.append(
            Problem(
                "schema.not-a-schema",
                "error",
                "",
                f"a JSON Schema is an object or a boolean, not {_kind(value)}",
            )
        )
        return analysis
    sha256, algorithm, size = content_hash(value)
    key = f"{algorithm}:{sha256}"
    cached = _analyses.get(key)
    if cached is not None:
        return cached
    analysis = _analyse(value, sha256, algorithm, size)
    _analyses.put(key, analysis)
    return analysis


def clear_caches() -> None:
    _analyses.clear()
    validators.clear()
