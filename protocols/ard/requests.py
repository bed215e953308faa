"""Reading ARD request bodies and parameters strictly: every mistake is a 400 naming it."""

from __future__ import annotations

import json
from typing import Any

from django.http import HttpRequest

from protocols.ard.errors import ArdError, invalid
from registry.undecodable import body_fault, unpaired_surrogate

MAX_BODY = 64 * 1024
MAX_TEXT = 1000


def body(request: HttpRequest) -> dict[str, Any]:
    if request.content_type not in ("application/json", ""):
        raise ArdError(415, "the request body must be application/json")
    length = request.META.get("CONTENT_LENGTH") or "0"
    if not length.isdigit() or int(length) > MAX_BODY:
        raise ArdError(413, f"the request body is larger than {MAX_BODY} bytes")
    raw = request.body
    fault = body_fault(raw)
    if fault is not None:
        raise invalid(fault.sentence(), field=_field(fault.pointer))
    try:
        data = json.loads(raw.decode("utf-8") or "null")
    except json.JSONDecodeError as exc:
        # Where, in our words: the parser's own message is Python's, not the API's.
        raise invalid(
            f"the request body is not valid JSON (line {exc.lineno}, column {exc.colno})"
        ) from None
    except RecursionError:
        raise invalid("the request body is nested too deeply") from None
    if not isinstance(data, dict):
        raise invalid("the request body must be a JSON object")
    where = unpaired_surrogate(data)
    if where is not None:
        raise invalid(
            f"the string at {where or '/'} has an unpaired surrogate (\\ud800-\\udfff escape): "
            "it is not Unicode text"
        )
    return data


def _field(pointer: str | None) -> str | None:
    """A JSON pointer as ARD's dotted ``details.field`` (``/query/text`` -> ``query.text``)."""
    if not pointer:
        return None
    steps = pointer.lstrip("/").split("/")
    return ".".join(step.replace("~1", "/").replace("~0", "~") for step in steps)


def only(data: dict[str, Any], allowed: set[str], where: str) -> None:
    unknown = sorted(set(data) - allowed)
    if unknown:
        name = f"{where}.{unknown[0]}" if where else unknown[0]
        raise invalid(f"unknown member {name!r}; allowed: {', '.join(sorted(allowed))}", field=name)


def integer(data: dict[str, Any], name: str, *, default: int, low: int, high: int) -> int:
    value = data.get(name, default)
    if isinstance(value, str) and value.isascii() and value.isdigit():  # query parameters
        value = int(value)
    if isinstance(value, float) and value.is_integer() and low <= value <= high:
        value = int(value)  # 5.0 is an integer as JSON numbers go (a2a-sdk sends doubles)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise invalid(f"{name} must be an integer from {low} to {high}", field=name)
    return value


def text(query: dict[str, Any], *, required: bool) -> str:
    """``query.text`` with its spaces folded; "" when it is blank. ``required``: the member must
    be there (search, ARD 5.3.2); a blank text asks for no narrowing, so every entry matches
    (docs/ard.md, "An empty query")."""
    value = query.get("text")
    if value is None and not required:
        return ""
    if not isinstance(value, str):
        raise invalid(
            "query.text is required (ARD 5.3.2): a string; an empty one lists every entry",
            field="query.text",
        )
    if len(value) > MAX_TEXT:
        raise invalid(f"query.text is longer than {MAX_TEXT} characters", field="query.text")
    if "\x00" in value:
        raise invalid("query.text contains a NUL character", field="query.text")
    return " ".join(value.split())


def query_object(data: dict[str, Any], *, required: bool) -> dict[str, Any]:
    query = data.get("query")
    if query is None and not required:
        return {}
    if not isinstance(query, dict):
        raise invalid("query must be an object with text and filter", field="query")
    only(query, {"text", "filter", "@context"}, "query")
    context = query.get("@context")
    if context is not None and not isinstance(context, dict | str | list):
        raise invalid(
            "query.@context must be an object, a string or an array", field="query.@context"
        )
    return query
