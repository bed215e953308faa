"""The ARD entry and manifest, as JSON Schema (2020-12), written from ARD v0.91 section 4 and
Appendix D: an entry carries identifier, displayName, type and exactly one of url or data;
extra terms are allowed (JSON-LD namespaces); a manifest is an object with an entries array."""

from __future__ import annotations

from typing import Any

STRING_LIST: dict[str, Any] = {"type": "array", "items": {"type": "string"}}

ENTRY: dict[str, Any] = {
    "type": "object",
    "required": ["identifier", "displayName", "type"],
    "properties": {
        "identifier": {
            "type": "string",
            "maxLength": 512,
            "pattern": "^urn:air:[A-Za-z0-9.-]+(:[A-Za-z0-9._-]+)+$",
        },
        "displayName": {"type": "string", "minLength": 1, "maxLength": 512},
        "type": {"type": "string", "minLength": 1, "maxLength": 255},
        "url": {"type": "string", "minLength": 1, "maxLength": 2048},
        "data": {"type": "object"},
        "description": {"type": "string"},
        "tags": STRING_LIST,
        "capabilities": STRING_LIST,
        "representativeQueries": STRING_LIST,
        "version": {"type": "string"},
        "updatedAt": {"type": "string"},
        "metadata": {"type": "object"},
        "trustManifest": {
            "type": "object",
            "required": ["identity"],
            "properties": {"identity": {"type": "string", "minLength": 1}},
        },
        "@context": {"type": ["string", "object", "array"]},
    },
    "oneOf": [
        {"required": ["url"], "not": {"required": ["data"]}},
        {"required": ["data"], "not": {"required": ["url"]}},
    ],
}

MANIFEST: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["entries"],
    "properties": {
        "specVersion": {"type": "string"},
        "host": {"type": "object"},
        "entries": {"type": "array", "items": {"$ref": "#/$defs/ardEntry"}},
    },
    "$defs": {"ardEntry": ENTRY},
}
