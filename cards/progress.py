"""Task Progress Metadata v1 (seed 002): its normative JSON Schema and the rules it cannot express.

The registry reports import progress in this shape, and checks its own documents with it.
"""

from __future__ import annotations

from typing import Any

import jsonschema_rs

EXTENSION_URI = "https://a2a-protocol.org/extensions/task-progress/v1"

# Section 8 of the extension, as published.
SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://a2a-protocol.org/extensions/task-progress/v1/schema.json",
    "title": "A2A Task Progress Metadata Extension v1",
    "type": "object",
    "required": ["trackers"],
    "properties": {
        "trackers": {"type": "array", "items": {"$ref": "#/definitions/tracker"}, "maxItems": 100},
        "aggregate": {"$ref": "#/definitions/aggregate"},
    },
    "additionalProperties": False,
    "definitions": {
        "tracker": {
            "type": "object",
            "required": ["id"],
            "properties": {
                "id": {"type": "string", "minLength": 1, "maxLength": 128},
                "progress": {"type": "number"},
                "total": {"type": "number"},
                "message": {"type": "string", "maxLength": 512},
                "status": {"type": "string", "enum": ["running", "completed", "failed"]},
                "startedAt": {"type": "string", "format": "date-time"},
                "updatedAt": {"type": "string", "format": "date-time"},
            },
            "additionalProperties": False,
        },
        "aggregate": {
            "type": "object",
            "properties": {
                "progress": {"type": "number"},
                "total": {"type": "number"},
                "message": {"type": "string", "maxLength": 512},
            },
            "additionalProperties": False,
        },
    },
}

_VALIDATOR = jsonschema_rs.validator_for(SCHEMA, validate_formats=True)


def progress_errors(payload: Any, previous: dict[str, Any] | None = None) -> list[str]:
    """Every way ``payload`` breaks the extension: the schema, then section 5.2's semantics.

    ``previous`` is an earlier payload of the same task: progress of a tracker with a total must
    not go down (section 5.2). The aggregate is advisory, so it is never an error (vector 5).
    """
    errors = [error.message for error in _VALIDATOR.iter_errors(payload)]
    if errors:
        return errors
    before = {
        t["id"]: t
        for t in (previous or {}).get("trackers", [])
        if isinstance(t, dict) and "id" in t
    }
    for tracker in payload["trackers"]:
        progress, total = tracker.get("progress"), tracker.get("total")
        name = tracker["id"]
        if progress is not None and progress < 0 or total is not None and total < 0:
            errors.append(f"tracker {name}: progress and total must be >= 0")
        if progress is not None and total is not None and progress > total:
            errors.append(f"tracker {name}: progress {progress} is greater than total {total}")
        old = before.get(name)
        if (
            old is not None
            and total is not None
            and progress is not None
            and old.get("progress") is not None
            and progress < old["progress"]
        ):
            errors.append(
                f"tracker {name}: progress went down from {old['progress']} to {progress}"
            )
    return errors
