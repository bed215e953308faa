"""The registry's own skill: answer an ``agentQuery`` with an ``agentQueryResult`` (seed 000).

Text is matched by the natural-language search (search/semantic.py: embeddings fused with
full-text rank, one relevance cutoff), filters are the v1 search filters, a payload is matched
against the agents' declared input schemas. Every read goes through the visibility gate.
"""

from __future__ import annotations

from typing import Any

import jsonschema_rs
from django.http import HttpRequest

from cards.reads.gate import Viewer
from protocols import queries
from protocols.own_card import AGENT_QUERY, AGENT_QUERY_RESULT
from search import door_metrics

_QUERY = jsonschema_rs.validator_for(AGENT_QUERY)
RESULT_VALIDATOR = jsonschema_rs.validator_for(AGENT_QUERY_RESULT)


def query_errors(data: Any) -> list[dict[str, str]]:
    """``{pointer, message}`` for each way ``data`` is not an ``agentQuery``."""
    out = []
    for error in _QUERY.iter_errors(data):
        pointer = "".join(f"/{p}" for p in error.instance_path)
        message = error.message
        if isinstance(error.kind, jsonschema_rs.ValidationErrorKind.MaxLength):
            # The API's words, without echoing the whole over-long text back.
            message = f"is longer than {error.kind.limit} characters"
        out.append({"pointer": pointer, "message": message})
    return out


def integral(value: Any, default: int) -> Any:
    """``limit`` as an int when it is an integral number: JSON Schema counts 5.0 as an integer,
    and a2a-sdk sends every number as a protobuf double (5 arrives as 5.0)."""
    if value is None:
        return default
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _live(row: dict[str, Any]) -> dict[str, Any]:
    """The live checks' outcome from the stored summary, in this schema's spelling."""
    live = row.get("live") or {}
    return {
        "outcome": live.get("outcome") or "not-checked",
        "checkedAt": live.get("checked_at"),
        "counts": live.get("counts"),
    }


def _entry(row: dict[str, Any], score: float, skills: list[str]) -> dict[str, Any]:
    return {
        "id": row["id"],
        "identifiers": [row["ard_identifier"]] if row.get("ard_identifier") else [],
        "name": row["name"],
        "cardUrl": row.get("card_url") or "",
        "registryUrl": row["links"]["self"],
        "matchedSkills": skills,
        "score": score,
        "live": _live(row),
    }


def answer(query: dict[str, Any], *, viewer: Viewer, request: HttpRequest) -> dict[str, Any]:
    """The ``agentQueryResult`` for a valid ``agentQuery``. Raises ProblemError on bad filters."""
    text = query.get("text", "")
    with door_metrics.searched("a2a", text):
        return _answer(query, text, viewer=viewer, request=request)


def _answer(
    query: dict[str, Any], text: str, *, viewer: Viewer, request: HttpRequest
) -> dict[str, Any]:
    limit = integral(query.get("limit"), 10)
    filters = query.get("filters", {})
    accepted: dict[str, list[str]] | None = None
    if "payload" in query:
        matches = queries.find_accepting(payload=query["payload"], limit=100, viewer=viewer)
        accepted = {
            a["id"]: sorted({s for m in a["matches"] for s in m.get("skills", [])})
            for a in matches["agents"]
        }
    found = queries.search_agents(
        text=text, filters=filters, limit=100 if accepted is not None else limit,
        viewer=viewer, request=request,
    )  # fmt: skip
    rows = found["results"]
    if accepted is not None:
        rows = [r for r in rows if r["id"] in accepted]
    # With text, the rows come ranked by the natural-language search, each with its score.
    scores = [float(row.get("score", 100)) for row in rows]
    agents = [
        _entry(
            row,
            score,
            accepted[row["id"]] if accepted is not None else [s["id"] for s in row["skills"]],
        )
        for row, score in zip(rows, scores, strict=True)
    ]
    agents.sort(key=lambda a: -a["score"])
    return {
        "agents": agents[:limit],
        "truncated": len(agents) > limit or bool(found["truncated"] and accepted is None),
    }
