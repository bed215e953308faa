"""What the test agents' two skills answer, as pure functions over v1.0 ProtoJSON messages
(dicts), shared by the a2a-sdk agent's executor and the hand-made agents so that a broken
agent differs from the good one in exactly the rule it breaks.

Seed 000, section 3: the first data part whose media type names a schema is the structured
input; a declared schema it satisfies must give a task, and one it breaks should be refused.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import jsonschema

from tests.live.cards import OUTPUT_MODE, OUTPUT_SCHEMA, PROGRESS_EXTENSION, SCHEMAS, schema_name

# Input schemas a message may name; the output schema is not an input.
_INPUTS = {name for name in SCHEMAS if name != OUTPUT_SCHEMA}


@dataclass(frozen=True)
class Outcome:
    """How a task ends: its state (v1.0 enum name), the agent's status text, the artifact
    parts (v1.0 ProtoJSON) and the progress snapshot (seed 002) of its last status."""

    state: str
    reply: str
    parts: list[dict[str, Any]] = field(default_factory=list)
    progress: dict[str, Any] | None = None


def part_media_type(part: dict[str, Any]) -> str:
    """A part's media type: v1.0 ``mediaType``, else seed 000's ``metadata.mimeType``."""
    metadata = part.get("metadata") or {}
    return str(part.get("mediaType") or metadata.get("mimeType") or metadata.get("mediaType") or "")


def structured_input(message: dict[str, Any]) -> tuple[str, Any] | None:
    """The first data part that names a schema: (schema name, data); None if there is none."""
    for part in message.get("parts") or []:
        if isinstance(part, dict) and "data" in part:
            name = schema_name(part_media_type(part))
            if name is not None:
                return name, part["data"]
    return None


def message_text(message: dict[str, Any]) -> str:
    return "\n".join(
        str(part["text"])
        for part in message.get("parts") or []
        if isinstance(part, dict) and "text" in part
    )


def refusal(name: str, data: Any) -> str | None:
    """Why this structured input is refused, or None when the named schema accepts it."""
    if name not in _INPUTS:
        return f"schema {name!r} is not declared as an input of this agent"
    error = jsonschema.exceptions.best_match(
        jsonschema.Draft202012Validator(SCHEMAS[name]).iter_errors(data)
    )
    if error is None:
        return None
    where = "/".join(str(step) for step in error.absolute_path) or "the payload"
    return f"{where} does not match schema {name!r}: {error.message}"


def fair_verdict(data: Any) -> dict[str, Any]:
    """A verdict valid under fightVerdict: the longer name wins (deterministic for tests).
    It copes with any payload, as an agent that skips validation must."""
    fields = data if isinstance(data, dict) else {}
    a, b = str(fields.get("a", "")), str(fields.get("b", ""))
    winner = a if len(a) >= len(b) else b
    return {"winner": winner, "probability": 0.75, "explanation": f"{winner} has more letters."}


def progress(*, done: bool) -> dict[str, Any]:
    """A progress snapshot in seed 002's shape (metadata key PROGRESS_EXTENSION)."""
    value = 1 if done else 0
    tracker = {
        "id": "compare",
        "progress": value,
        "total": 1,
        "message": "compared" if done else "comparing",
        "status": "completed" if done else "running",
    }
    return {"trackers": [tracker], "aggregate": {"progress": value, "total": 1}}


def progress_metadata(*, done: bool) -> dict[str, Any]:
    return {PROGRESS_EXTENSION: progress(done=done)}


Verdict = Callable[[Any], Any]


def answer(
    message: dict[str, Any], *, validate: bool = True, verdict: Verdict = fair_verdict
) -> Outcome:
    """How the agent ends the task this message starts. ``validate`` and ``verdict`` are the
    two places a broken agent departs from the rules."""
    structured = structured_input(message)
    if structured is None:
        text = message_text(message)
        return Outcome("TASK_STATE_COMPLETED", f"echo: {text}", [{"text": text}])
    name, data = structured
    reason = refusal(name, data) if validate else None
    if reason is not None:
        return Outcome("TASK_STATE_REJECTED", f"refused: {reason}")
    part = {"data": verdict(data), "mediaType": OUTPUT_MODE, "metadata": {"mimeType": OUTPUT_MODE}}
    return Outcome("TASK_STATE_COMPLETED", "compared", [part], progress(done=True))
