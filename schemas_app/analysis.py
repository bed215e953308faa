"""One embedded JSON Schema, analysed: content hash, dialect, problems, prefilter features.

Everything here depends on the schema's content only, so analyses are cached by content hash.
Problems carry pointers relative to the schema; :mod:`schemas_app.checks` prefixes them with
where the schema sits in the card.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, urldefrag, urljoin

import rfc8785

from cards.findings import Severity, json_pointer
from schemas_app.conf import limit
from schemas_app.validation import (
    DEFAULT_DRAFT,
    DRAFT4,
    DRAFT6,
    DRAFT7,
    DRAFT2019,
    METASCHEMA_URI,
    compile_schema,
    draft_of,
    is_metaschema_uri,
    meta_errors,
    validators,
)

HASH_JCS = "jcs"  # sha256 of the RFC 8785 form
HASH_SORTED_JSON = "sorted-json"  # fallback when RFC 8785 cannot represent the schema

# Top-level JSON types as bits, for the type prefilter of payload matching.
TYPE_BITS = {
    "object": 1,
    "array": 2,
    "string": 4,
    "integer": 8,
    "number": 16 | 8,  # a number schema accepts integers too
    "boolean": 32,
    "null": 64,
}
ALL_TYPES = 127

# The synthetic base URI of a schema without $id. ".invalid" is reserved (RFC 2606): it never
# names anything, and nothing is ever fetched anyway.
_BASE = "https://registry.invalid/schema.json"

_OLD_DRAFTS = (DRAFT4, DRAFT6, DRAFT7)

# Keywords whose value is a schema, a list of schemas, or a map of schemas (every draft).
_SCHEMA_KEYS = (
    "additionalProperties",
    "unevaluatedProperties",
    "additionalItems",
    "unevaluatedItems",
    "contains",
    "propertyNames",
    "not",
    "if",
    "then",
    "else",
    "contentSchema",
)
_SCHEMA_LIST_KEYS = ("allOf", "anyOf", "oneOf", "prefixItems")
_SCHEMA_MAP_KEYS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_REF_KEYS = ("$ref", "$dynamicRef", "$recursiveRef")


@dataclass(frozen=True)
class Problem:
    code: str
    severity: Severity
    pointer: str  # into the schema
    message: str


@dataclass
class SchemaAnalysis:
    content: Any
    sha256: str = ""
    hash_algorithm: str = HASH_JCS
    size: int = 0
    dialect: str = ""  # $schema as written
    draft: str = DEFAULT_DRAFT  # the draft it is validated as
    schema_uri: str = ""
    title: str = ""
    types: list[str] = field(default_factory=list)
    type_mask: int = ALL_TYPES
    required: list[str] = field(default_factory=list)
    property_names: list[str] = field(default_factory=list)
    closed: bool = False
    deprecated: bool = False
    problems: list[Problem] = field(default_factory=list)
    storable: bool = True  # hashed and within the size cap: stored as a SchemaDocument
    usable: bool = False  # metaschema-valid, every $ref resolved offline, compiles

    def validator(self) -> Any:
        """The compiled validator (cached by hash), or None when the schema is not usable."""
        if not self.usable:
            return None
        return validator_for(self.sha256, self.content, self.draft)

    def problem_dicts(self) -> list[dict[str, str]]:
        return [
            {"code": p.code, "severity": p.severity, "pointer": p.pointer, "message": p.message}
            for p in self.problems
        ]


def for_validation(content: Any, draft: str) -> Any:
    """The schema as it is compiled: with the ``$schema`` of the draft it is validated as.

    An unknown dialect is validated as 2020-12 (reported as ``schema.unknown-dialect``);
    replacing ``$schema`` means no library ever tries to look the unknown one up.
    """
    if not isinstance(content, dict):
        return content
    copy = dict(content)
    copy["$schema"] = METASCHEMA_URI[draft]
    return copy


def validator_for(sha256: str, content: Any, draft: str) -> Any:
    return validators.get(sha256, lambda: compile_schema(for_validation(content, draft), draft))


# --- hashing ---------------------------------------------------------------------------------


def canonical_bytes(value: Any) -> tuple[bytes, str]:
    """The RFC 8785 form, or sorted-key JSON when RFC 8785 cannot represent the value
    (integers beyond +-(2^53-1), e.g. a uint64 maximum)."""
    try:
        return rfc8785.dumps(value), HASH_JCS
    except (rfc8785.CanonicalizationError, ValueError, TypeError):
        text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return text.encode("utf-8", "surrogatepass"), HASH_SORTED_JSON


def content_hash(value: Any) -> tuple[str, str, int]:
    data, algorithm = canonical_bytes(value)
    return hashlib.sha256(data).hexdigest(), algorithm, len(data)


# --- $ref resolution -------------------------------------------------------------------------


@dataclass
class _Resources:
    nodes: dict[str, Any] = field(default_factory=dict)  # resource URI -> its schema node
    anchors: set[tuple[str, str]] = field(default_factory=set)  # (resource URI, anchor)
    refs: list[tuple[str, str, str, str]] = field(default_factory=list)  # key, value, base, ptr


def _children(node: dict[str, Any], draft: str) -> list[tuple[tuple[str | int, ...], Any]]:
    """The subschemas of ``node`` with their relative paths."""
    out: list[tuple[tuple[str | int, ...], Any]] = []
    for key in _SCHEMA_KEYS:
        if key in node:
            out.append(((key,), node[key]))
    for key in _SCHEMA_LIST_KEYS:
        if isinstance(node.get(key), list):
            out.extend(((key, i), sub) for i, sub in enumerate(node[key]))
    for key in _SCHEMA_MAP_KEYS:
        if isinstance(node.get(key), dict):
            out.extend(((key, name), sub) for name, sub in node[key].items())
    items = node.get("items")
    if isinstance(items, list):
        out.extend((("items", i), sub) for i, sub in enumerate(items))
    elif items is not None:
        out.append((("items",), items))
    dependencies = node.get("dependencies")
    if isinstance(dependencies, dict):
        out.extend(
            (("dependencies", name), sub)
            for name, sub in dependencies.items()
            if isinstance(sub, (dict, bool))
        )
    return out


def _collect(content: Any, draft: str) -> _Resources:
    found = _Resources(nodes={_BASE: content})
    id_key = "id" if draft == DRAFT4 else "$id"
    stack: list[tuple[Any, tuple[str | int, ...], str]] = [(content, (), _BASE)]
    while stack:
        node, path, base = stack.pop()
        if not isinstance(node, dict):
            continue
        own_id = node.get(id_key)
        if isinstance(own_id, str) and own_id:
            if own_id.startswith("#") and draft in _OLD_DRAFTS:
                found.anchors.add((urldefrag(base)[0], own_id[1:]))  # draft <= 7 anchor form
            else:
                base = urljoin(base, own_id) if not own_id.startswith("#") else base
                resource, fragment = urldefrag(base)
                found.nodes.setdefault(resource, node)
                if fragment and draft in _OLD_DRAFTS:
                    found.anchors.add((resource, fragment))
                base = resource
        for anchor_key in ("$anchor", "$dynamicAnchor"):
            anchor = node.get(anchor_key)
            if isinstance(anchor, str):
                found.anchors.add((urldefrag(base)[0], anchor))
        for key in _REF_KEYS:
            value = node.get(key)
            if isinstance(value, str):
                found.refs.append((key, value, base, json_pointer(*path, key)))
        for sub_path, sub in _children(node, draft):
            stack.append((sub, path + sub_path, base))
    return found


def resolve_pointer(root: Any, fragment: str) -> tuple[bool, Any]:
    """Follow an RFC 6901 pointer (percent-encoded, as in a URI fragment) from ``root``."""
    node = root
    if not fragment:
        return True, node
    for raw in unquote(fragment).split("/")[1:]:
        part = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return False, None
    return True, node


def _ref_problems(content: Any, draft: str) -> list[Problem]:
    found = _collect(content, draft)
    problems: list[Problem] = []
    for key, value, base, pointer in found.refs:
        if value.startswith("#"):
            target = urldefrag(base)[0] + value
        else:
            target = urljoin(base, value)
        resource, fragment = urldefrag(target)
        if resource in found.nodes:
            node = found.nodes[resource]
            if fragment.startswith("/") or not fragment:
                ok, _ = resolve_pointer(node, fragment)
            else:
                ok = (resource, unquote(fragment)) in found.anchors
            if not ok:
                problems.append(
                    Problem(
                        "schema.unresolvable-ref",
                        "error",
                        pointer,
                        f"{key} {value!r} points at nothing in this schema",
                    )
                )
        elif is_metaschema_uri(resource):
            continue  # an official metaschema: bundled, resolved offline
        else:
            problems.append(
                Problem(
                    "schema.remote-ref",
                    "warning",
                    pointer,
                    f"{key} {value!r} refers to another document; the registry never fetches "
                    "one, so it cannot validate against this schema",
                )
            )
    return problems


# --- prefilter features ----------------------------------------------------------------------


def _type_mask(node: Any) -> int:
    if node is False:
        return 0
    if not isinstance(node, dict):
        return ALL_TYPES
    mask = ALL_TYPES
    declared = node.get("type")
    if isinstance(declared, str):
        declared = [declared]
    if isinstance(declared, list) and all(isinstance(t, str) for t in declared):
        mask &= sum_bits(TYPE_BITS.get(t, 0) for t in declared)
    if "const" in node:
        mask &= value_bits(node["const"])
    if isinstance(node.get("enum"), list):
        mask &= sum_bits(value_bits(v) for v in node["enum"])
    return mask


def sum_bits(bits: Any) -> int:
    total = 0
    for bit in bits:
        total |= bit
    return total


def value_bits(value: Any) -> int:
    """The type bits a JSON value has (1.0 is an integer for JSON Schema too)."""
    if isinstance(value, bool):
        return TYPE_BITS["boolean"]
    if isinstance(value, int):
        return 8
    if isinstance(value, float):
        return 16 | (8 if value.is_integer() else 0)
    if isinstance(value, str):
        return TYPE_BITS["string"]
    if isinstance(value, dict):
        return TYPE_BITS["object"]
    if isinstance(value, list):
        return TYPE_BITS["array"]
    return TYPE_BITS["null"]


def _necessary_nodes(content: Any, draft: str) -> list[Any]:
    """Subschemas every accepted instance must satisfy: the root, its allOf branches and the
    targets of local $refs, recursively (each node once)."""
    out: list[Any] = []
    seen: set[int] = set()
    stack = [content]
    while stack and len(out) < 200:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        ref = node.get("$ref") if isinstance(node, dict) else None
        if isinstance(ref, str) and (ref.startswith("#/") or ref == "#"):
            ok, target = resolve_pointer(content, ref[1:])
            if ok:
                stack.append(target)
            if draft in _OLD_DRAFTS:
                continue  # before 2019-09 the siblings of $ref are ignored
        out.append(node)
        if isinstance(node, dict) and isinstance(node.get("allOf"), list):
            stack.extend(node["allOf"])
    return out


def _features(analysis: SchemaAnalysis) -> None:
    content = analysis.content
    nodes = _necessary_nodes(content, analysis.draft)
    mask = ALL_TYPES
    required: set[str] = set()
    names: set[str] = set()
    closed = False
    for node in nodes:
        mask &= _type_mask(node)
        if not isinstance(node, dict):
            continue
        if isinstance(node.get("required"), list):
            required.update(r for r in node["required"] if isinstance(r, str))
        properties = node.get("properties")
        if isinstance(properties, dict):
            names.update(properties)
        if node.get("additionalProperties") is False and not node.get("patternProperties"):
            closed = True
    analysis.type_mask = mask
    analysis.types = [t for t, bit in TYPE_BITS.items() if t != "integer" and mask & bit == bit]
    if mask & 8 and not mask & 16:
        analysis.types.append("integer")
    if mask == ALL_TYPES:
        analysis.types = []
    analysis.required = sorted(required)
    analysis.property_names = sorted(names)
    analysis.closed = closed


# --- the analysis ----------------------------------------------------------------------------


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


__all__ = [
    "ALL_TYPES",
    "DRAFT2019",
    "HASH_JCS",
    "HASH_SORTED_JSON",
    "Problem",
    "SchemaAnalysis",
    "analyse_schema",
    "canonical_bytes",
    "content_hash",
    "for_validation",
    "resolve_pointer",
    "validator_for",
    "value_bits",
]
