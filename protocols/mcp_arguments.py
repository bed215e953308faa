"""MCP tool arguments checked in the REST API's words, before the SDK's pydantic model sees them.

A mistake is answered as the API answers it ("limit must be an integer from 1 to 100", "text is
longer than 1000 characters", "Unknown argument: x. Known: ..."), never in pydantic's report.
"""

from __future__ import annotations

from typing import Any

from mcp.server.fastmcp.tools import Tool
from pydantic import ValidationError


def _allowed_values(schema: Any) -> list[str]:
    """Every ``enum`` value inside one argument's JSON Schema (a Literal, or a list of them)."""
    found: list[str] = []
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if isinstance(node.get("enum"), list):
                found.extend(str(v) for v in node["enum"])
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return list(dict.fromkeys(found))


_INTEGER_ERRORS = frozenset(
    {"int_parsing", "int_from_float", "int_type", "greater_than_equal", "less_than_equal",
     "greater_than", "less_than"}
)  # fmt: skip
_TYPE_PHRASES = {
    "bool_parsing": "must be true or false",
    "bool_type": "must be true or false",
    "string_type": "must be a string",
    "list_type": "must be a list",
    "dict_type": "must be an object",
    "float_type": "must be a number",
    "model_type": "must be an object",
    "missing": "is required",
}


def _phrase(error: Any, schema: dict[str, Any]) -> str:
    """One pydantic error as the end of the API's sentence ("... must be ...")."""
    kind, ctx = error["type"], error.get("ctx") or {}
    if kind == "string_too_long":
        return f"is longer than {ctx.get('max_length')} characters"
    if kind in _INTEGER_ERRORS:
        low, high = schema.get("minimum"), schema.get("maximum")
        return "must be an integer" if high is None else f"must be an integer from {low} to {high}"
    if kind == "literal_error":
        return "must be one of " + ", ".join(_allowed_values(schema))
    return _TYPE_PHRASES.get(kind) or f"is not valid ({error['msg']})"


# JSON types a string must not stand in for, and the pydantic error each is phrased as.
_SCALARS = {"integer": "int_type", "number": "float_type", "boolean": "bool_type"}


def _json_types(schema: dict[str, Any]) -> set[str]:
    """The JSON types one argument's schema allows (``type``, or each ``anyOf`` branch's)."""
    found: set[str] = set()
    for node in [schema, *(schema.get("anyOf") or [])]:
        kind = node.get("type") if isinstance(node, dict) else None
        if isinstance(kind, str):
            found.add(kind)
        elif isinstance(kind, list):
            found.update(str(name) for name in kind)
    return found


def argument_problem(tool: Tool, arguments: dict[str, Any]) -> str | None:
    """What is wrong with ``arguments`` for ``tool``, in the API's words; None when nothing.

    Unknown names are refused naming them (the API's 400 for an unknown parameter); the rest is
    the tool's own argument model, each error phrased as the API phrases it."""
    properties: dict[str, Any] = tool.parameters.get("properties", {})
    unknown = sorted(set(arguments) - set(properties))
    if unknown:
        return f"Unknown argument: {', '.join(unknown)}. Known: {', '.join(sorted(properties))}."
    for name, value in arguments.items():
        schema = properties.get(name, {})
        types = _json_types(schema)
        if isinstance(value, bool) and "integer" in types:
            # pydantic's lax mode reads true as 1; the API refuses it (docs/orchestrators.md).
            return f"{name} {_phrase({'type': 'int_type'}, schema)}"
        if isinstance(value, str) and types & _SCALARS.keys() and types <= {*_SCALARS, "null"}:
            # pydantic's lax mode reads "5" as 5 and "yes" as true; a JSON body of the API
            # (POST /api/v1/schemas/match's limit) and agentQuery refuse a string there.
            kind = next(_SCALARS[t] for t in ("integer", "number", "boolean") if t in types)
            return f"{name} {_phrase({'type': kind}, schema)}"
        texts = value if isinstance(value, list) else [value]
        if any(isinstance(text, str) and "\x00" in text for text in texts):
            return f"{name} contains a NUL character"  # the API's words for its parameters
    if tool.name == "find_agents_accepting" and isinstance(arguments.get("payload"), str):
        # The SDK would read a string as JSON text when it parses; either way it is ambiguous.
        return "payload must be a JSON object, array, number, boolean or null, not a string"
    metadata = tool.fn_metadata
    try:
        metadata.arg_model.model_validate(metadata.pre_parse_json(arguments))
    except ValidationError as exc:
        sentences: dict[str, None] = {}
        for error in exc.errors():
            name = str(error["loc"][0]) if error["loc"] else "arguments"
            sentences[f"{name} {_phrase(error, properties.get(name, {}))}"] = None
        return "; ".join(sentences)
    return None
