"""An output schema as a readable table: one row per field (dotted for nested objects); a
skill's outputFields (seed 001) as one row per field."""

from __future__ import annotations

from typing import Any

from schemas_app.fields import Field

# A table is for reading: deep or wide schemas are cut, and the cut is said.
MAX_DEPTH = 3
MAX_ROWS = 60


def type_of(schema: Any) -> str:
    """A short human type: ``string``, ``number 0..1``, ``array of string``, ``one of: a, b``."""
    if not isinstance(schema, dict):
        return "any"
    if "enum" in schema and isinstance(schema["enum"], list):
        return "one of: " + ", ".join(str(v) for v in schema["enum"][:10])
    if "const" in schema:
        return f"always {schema['const']!r}"
    if isinstance(schema.get("$ref"), str):
        return "see " + schema["$ref"].rsplit("/", 1)[-1]
    for keyword in ("oneOf", "anyOf"):
        if isinstance(schema.get(keyword), list):
            return f"{keyword} of {len(schema[keyword])}"
    kind = schema.get("type")
    text = " or ".join(map(str, kind)) if isinstance(kind, list) else str(kind or "any")
    if text == "array":
        text = "array of " + type_of(schema.get("items"))
    bounds = [schema.get("minimum"), schema.get("maximum")]
    if any(isinstance(b, int | float) for b in bounds):
        low, high = ("" if b is None else str(b) for b in bounds)
        text += f" {low}..{high}"
    return text


def rows(schema: Any) -> tuple[list[dict[str, Any]], bool]:
    """(rows of field, type, description, required), and whether the table was cut."""
    out: list[dict[str, Any]] = []
    cut = False

    def walk(node: Any, prefix: str, depth: int) -> None:
        nonlocal cut
        if not isinstance(node, dict) or not isinstance(node.get("properties"), dict):
            return
        listed = node.get("required")
        required: list[Any] = listed if isinstance(listed, list) else []
        for name, child in node["properties"].items():
            if len(out) >= MAX_ROWS:
                cut = True
                return
            child = child if isinstance(child, dict) else {}
            description = child.get("description") or child.get("title") or ""
            out.append(
                {
                    "field": prefix + str(name),
                    "type": type_of(child),
                    "description": str(description),
                    "required": name in required,
                }
            )
            if isinstance(child.get("properties"), dict):
                if depth + 1 >= MAX_DEPTH:
                    cut = True
                else:
                    walk(child, f"{prefix}{name}.", depth + 1)

    walk(schema, "", 0)
    return out, cut


def field_rows(fields: list[Field]) -> list[dict[str, Any]]:
    """(field, kind, media types, description, required) of each outputField; a field is
    required unless it says ``optional``."""
    return [
        {
            "field": item.name,
            "kind": item.kind,
            "media_types": ", ".join(item.mime_types),
            "schema": type_of(item.schema) if item.schema is not None else "",
            "description": item.description,
            "required": not item.optional,
        }
        for item in fields
    ]
