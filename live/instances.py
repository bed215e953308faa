"""A payload for a message check: an ``examples`` entry of the schema, else one built from it.

The builder covers what declared input schemas use (types, ``required``, ``properties``,
``enum``/``const``/``default``, bounds, ``items``/``minItems``, local ``$ref``, ``allOf`` and the
first workable ``anyOf``/``oneOf`` branch). What it makes is validated by the caller; a schema it
cannot satisfy (a ``pattern``, ``format`` it does not know...) leaves the check skipped with that
reason rather than sending a payload the agent could rightly refuse.
"""

from __future__ import annotations

import copy
from typing import Any

_MAX_DEPTH = 12


class CannotBuild(Exception):
    pass


def _resolve(ref: str, root: Any) -> Any:
    if not ref.startswith("#"):
        raise CannotBuild(f"a remote $ref ({ref}) is not followed")
    node = root
    for token in [t for t in ref[1:].split("/") if t]:
        token = token.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            raise CannotBuild(f"$ref {ref} does not resolve")
    return node


def _string(schema: dict[str, Any]) -> str:
    if "pattern" in schema:
        raise CannotBuild("a string with a pattern")
    formats = {
        "date-time": "2026-01-01T00:00:00Z",
        "date": "2026-01-01",
        "time": "00:00:00Z",
        "email": "check@example.com",
        "uri": "https://example.com/",
        "url": "https://example.com/",
        "uuid": "00000000-0000-4000-8000-000000000000",
    }
    text = formats.get(str(schema.get("format")), "example")
    minimum = int(schema.get("minLength", 0) or 0)
    maximum = schema.get("maxLength")
    if len(text) < minimum:
        text = text + "x" * (minimum - len(text))
    if isinstance(maximum, int) and len(text) > maximum:
        text = text[:maximum]
    return text


def _number(schema: dict[str, Any], integer: bool) -> int | float:
    low = schema.get("minimum", schema.get("exclusiveMinimum"))
    high = schema.get("maximum", schema.get("exclusiveMaximum"))
    value: float = 1
    if isinstance(low, int | float) and not isinstance(low, bool):
        value = low + (1 if "exclusiveMinimum" in schema and "minimum" not in schema else 0)
    elif isinstance(high, int | float) and not isinstance(high, bool):
        value = min(1, high - (1 if "exclusiveMaximum" in schema else 0))
    multiple = schema.get("multipleOf")
    if isinstance(multiple, int | float) and multiple > 0 and not isinstance(multiple, bool):
        value = multiple * max(1, round(value / multiple))
    return int(value) if integer else value


def _with_siblings(schema: dict[str, Any], branch: Any) -> Any:
    """An anyOf/oneOf branch constrains the same instance as its siblings: ``{"required":
    ["text"]}`` beside ``properties`` requires that ``text`` property, not any value."""
    if not isinstance(branch, dict):
        return branch
    rest = {k: v for k, v in schema.items() if k not in ("anyOf", "oneOf")}
    merged = {**rest, **branch}
    properties = {**(rest.get("properties") or {}), **(branch.get("properties") or {})}
    required = [*(rest.get("required") or []), *(branch.get("required") or [])]
    if properties:
        merged["properties"] = properties
    if required:
        merged["required"] = list(dict.fromkeys(required))
    return merged


def build(schema: Any, root: Any = None, depth: int = 0) -> Any:
    """An instance of ``schema``; :class:`CannotBuild` with the reason when there is none."""
    root = schema if root is None else root
    if depth > _MAX_DEPTH:
        raise CannotBuild("the schema nests too deeply")
    if schema is True or schema == {}:
        return {}
    if not isinstance(schema, dict):
        raise CannotBuild("the schema is not an object")
    if "$ref" in schema and isinstance(schema["$ref"], str):
        return build(_resolve(schema["$ref"], root), root, depth + 1)
    for key in ("const", "default"):
        if key in schema:
            return copy.deepcopy(schema[key])
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return copy.deepcopy(schema["enum"][0])
    if isinstance(schema.get("allOf"), list):
        merged: dict[str, Any] = {}
        for branch in schema["allOf"]:
            part = build(branch, root, depth + 1)
            if not isinstance(part, dict):
                return part
            merged.update(part)
        rest = {k: v for k, v in schema.items() if k != "allOf"}
        own = build(rest, root, depth + 1) if rest.get("type") or rest.get("properties") else {}
        return {**merged, **own} if isinstance(own, dict) else own
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list):
            for branch in schema[key]:
                try:
                    return build(_with_siblings(schema, branch), root, depth + 1)
                except CannotBuild:
                    continue
            raise CannotBuild(f"no {key} branch could be built")
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind is None:
        kind = "object" if "properties" in schema or "required" in schema else "string"
    if kind == "object":
        declared = schema.get("properties")
        properties: dict[str, Any] = declared if isinstance(declared, dict) else {}
        out = {}
        for name in schema.get("required") or []:
            out[name] = build(properties.get(name, {}), root, depth + 1)
        return out
    if kind == "array":
        items = schema.get("items", {})
        count = int(schema.get("minItems", 1) or 1)
        return [build(items, root, depth + 1) for _ in range(min(count, 10))]
    if kind == "string":
        return _string(schema)
    if kind in ("integer", "number"):
        return _number(schema, kind == "integer")
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    raise CannotBuild(f"unknown type {kind!r}")


def without_required(schema: Any, payload: Any) -> tuple[Any, str] | None:
    """``payload`` with the first required member of the schema's top level removed, and its
    name; None when the schema requires nothing at the top."""
    if not isinstance(schema, dict) or not isinstance(payload, dict):
        return None
    node = schema
    if "$ref" in node and isinstance(node["$ref"], str):
        try:
            node = _resolve(node["$ref"], schema)
        except CannotBuild:
            return None
    if not isinstance(node, dict):
        return None
    for name in node.get("required") or []:
        if name in payload:
            broken = {k: v for k, v in payload.items() if k != name}
            return broken, name
    # Required only through anyOf/oneOf branches: leave out every branch's required members.
    branches = [b for key in ("anyOf", "oneOf") for b in node.get(key) or []]
    if branches and all(isinstance(b, dict) and b.get("required") for b in branches):
        names = [n for b in branches for n in b["required"] if n in payload]
        if names:
            broken = {k: v for k, v in payload.items() if k not in names}
            return broken, ", ".join(dict.fromkeys(names))
    return None
