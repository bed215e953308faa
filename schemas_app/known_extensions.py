"""Extensions the registry knows, with a JSON Schema for the ``params`` of their declaration.

A card declares an extension in ``capabilities.extensions[]`` as ``{uri, description, required,
params}``. For the URIs below the registry validates ``params``; any other URI is indexed as it
is (its params are stored, never judged).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from cards.progress import EXTENSION_URI as TASK_PROGRESS_URI
from cards.progress import SCHEMA as PROGRESS_SCHEMA

SCHEMAS_EXTENSION_URI = (
    "https://raw.githubusercontent.com/facultyai/a2a-extension-object-schemas/refs/heads/main/v1"
)

_DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"


@dataclass(frozen=True)
class KnownExtension:
    uri: str
    name: str
    summary: str
    source: str  # where the extension is specified (the seed it comes from)
    params_schema: dict[str, Any]
    # Other JSON Schemas the extension defines (e.g. the metadata payload), for clients.
    schemas: dict[str, dict[str, Any]] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "uri": self.uri,
            "name": self.name,
            "summary": self.summary,
            "source": self.source,
            "params_schema": self.params_schema,
            "schemas": self.schemas,
        }


# Seed 000 defines no params; anything declared must at least be an object.
_SCHEMAS_PARAMS: dict[str, Any] = {
    "$schema": _DRAFT_2020_12,
    "title": "Input/output schemas (v1) declaration params",
    "type": "object",
}

# Seed 002 section 3.1. The upper bounds of maxMessageChars and maxIdChars are the maxLength of
# `message` (512) and `id` (128) in the extension's normative schema (section 8): declaring more
# than the schema lets a tracker carry would be a contradiction. maxTrackers is bounded by the
# schema's "hard upper bound" maxItems: 100.
_TASK_PROGRESS_PARAMS: dict[str, Any] = {
    "$schema": _DRAFT_2020_12,
    "title": "Task Progress Metadata v1 declaration params",
    "type": "object",
    "properties": {
        "maxTrackers": {"type": "integer", "minimum": 1, "maximum": 100},
        "maxMessageChars": {"type": "integer", "minimum": 1, "maximum": 512},
        "maxIdChars": {"type": "integer", "minimum": 1, "maximum": 128},
        "recommendedMaxUpdatesPerSecond": {"type": "number", "exclusiveMinimum": 0},
    },
}

# Seed 002 section 8: what an agent puts in metadata[EXT_URI]. One copy, in cards.progress,
# which the registry also uses for its own import progress documents.
_TASK_PROGRESS_PAYLOAD: dict[str, Any] = PROGRESS_SCHEMA

KNOWN_EXTENSIONS: dict[str, KnownExtension] = {
    ext.uri: ext
    for ext in (
        KnownExtension(
            uri=SCHEMAS_EXTENSION_URI,
            name="Input/output schemas (v1)",
            summary=(
                "A top-level `schemas` map of named JSON Schemas, used as modes "
                "`application/json;schema=<name>` for structured data parts."
            ),
            source="seed 000",
            params_schema=_SCHEMAS_PARAMS,
        ),
        KnownExtension(
            uri=TASK_PROGRESS_URI,
            name="Task Progress Metadata v1",
            summary="Structured task progress (trackers and an aggregate) in task metadata.",
            source="seed 002",
            params_schema=_TASK_PROGRESS_PARAMS,
            schemas={"metadata": _TASK_PROGRESS_PAYLOAD},
        ),
    )
}


def known_extension(uri: str) -> KnownExtension | None:
    return KNOWN_EXTENSIONS.get(uri)
