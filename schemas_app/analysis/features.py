"""Prefilter features of a schema for payload matching: type bits, required and property names."""

from __future__ import annotations

from typing import Any

from schemas_app.analysis.model import ALL_TYPES, TYPE_BITS, SchemaAnalysis
from schemas_app.analysis.refs import _OLD_DRAFTS, resolve_pointer


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
