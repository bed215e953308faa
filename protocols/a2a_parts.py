"""Reading an A2A message's parts: its text, and the data part flagged as an ``agentQuery``."""

from __future__ import annotations

from typing import Any

from protocols import agent_query
from protocols.a2a_errors import INVALID_PARAMS, RpcError
from protocols.own_card import QUERY
from registry.mediatypes import schema_json_type


def flagged(parts: list[Any]) -> tuple[int, str, Any] | None:
    """``(index, schema name, data)`` of the first part flagged for structured processing."""
    for index, part in enumerate(parts):
        if not isinstance(part, dict) or "data" not in part:
            continue
        raw = part.get("metadata")
        metadata: dict[str, Any] = raw if isinstance(raw, dict) else {}
        for text in (metadata.get("mimeType"), metadata.get("mediaType"), part.get("mediaType")):
            media = schema_json_type(text)
            if media is not None and media.schema is not None:
                return index, media.schema, part["data"]
    return None


def unread_part(parts: list[Any]) -> int | None:
    """The index of the first part this endpoint cannot read (a file, or data without the
    agentQuery flag) in a message with no text: answering it as an empty query would drop it."""
    if text_of(parts):
        return None
    for index, part in enumerate(parts):
        if not isinstance(part, dict) or not isinstance(part.get("text"), str):
            return index
    return None


def text_of(parts: list[Any]) -> str:
    return " ".join(
        p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)
    ).strip()


def structured_query(parts: list[Any]) -> dict[str, Any] | None:
    found = flagged(parts)
    if found is None:
        return None
    index, name, data = found
    pointer = f"/message/parts/{index}"
    if name != QUERY:
        raise RpcError(
            INVALID_PARAMS,
            f"Structured input error: this agent declares no schema named {name!r}",
            {"errors": [{"pointer": pointer + "/metadata/mimeType",
                         "message": f"undeclared schema {name!r}; declared: agentQuery"}]},
        )  # fmt: skip
    errors = agent_query.query_errors(data)
    if errors:
        for error in errors:
            error["pointer"] = pointer + "/data" + error["pointer"]
        # a2a-sdk's client keeps only the message (not data.errors): it names the first error.
        raise RpcError(
            INVALID_PARAMS,
            naming_first("Structured input error: the data does not match agentQuery", errors),
            {"errors": errors},
        )
    return dict(data)


def naming_first(summary: str, errors: list[dict[str, str]]) -> str:
    """``summary`` with the first error's pointer and reason (and how many more there are), so
    a client that shows only the message still learns what to change."""
    if not errors:
        return summary
    first = errors[0]
    more = f" (and {len(errors) - 1} more in data.errors)" if len(errors) > 1 else ""
    return f"{summary}: {first['pointer'] or '/'}: {first['message']}{more}"
