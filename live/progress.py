"""Seed 002's Task Progress Metadata v1 as the PROGRESS-META check reads an agent's answers:
where the metadata lives in a task. The schema and its rules are the registry's one copy
(``cards.progress``, which the registry's own progress reports follow too)."""

from __future__ import annotations

from typing import Any

from cards.progress import EXTENSION_URI as PROGRESS_URI
from cards.progress import progress_errors


def declared(card: dict[str, Any]) -> bool:
    capabilities = card.get("capabilities") if isinstance(card.get("capabilities"), dict) else {}
    extensions = capabilities.get("extensions") if isinstance(capabilities, dict) else None
    return any(isinstance(e, dict) and e.get("uri") == PROGRESS_URI for e in (extensions or []))


def found_in(task: dict[str, Any]) -> list[tuple[str, Any]]:
    """(where, value) of each progress entry in a task: the status message's metadata (the
    canonical place) and the task's own metadata (a mirror)."""
    out = []
    status = task.get("status") if isinstance(task.get("status"), dict) else {}
    message = status.get("message") if isinstance(status, dict) else None
    places = [("status.message.metadata", message), ("metadata", task)]
    for where, holder in places:
        metadata = holder.get("metadata") if isinstance(holder, dict) else None
        if isinstance(metadata, dict) and PROGRESS_URI in metadata:
            out.append((where, metadata[PROGRESS_URI]))
    return out


def problems(value: Any) -> list[str]:
    """The schema's errors, then section 5.2's semantics (at most five)."""
    return progress_errors(value)[:5]
