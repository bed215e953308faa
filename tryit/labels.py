"""Words for people on a "Try it" page: a field's label as the form shows it, and an example's
name from its own values (not "Skill example 1")."""

from __future__ import annotations

import json
from typing import Any

# An example's name: its first values, cut at this many characters.
MAX_LABEL = 60
MAX_VALUE = 24


def field_label(name: str, schema: Any) -> str:
    """What the form library shows above a member: its ``title``, else its name with ``_`` as
    spaces, the first letter upper case and the rest lower case (react-json-form's own rule;
    try-it.js names fields in errors by the same rule)."""
    title = schema.get("title") if isinstance(schema, dict) else None
    if isinstance(title, str) and title.strip():
        return title.strip()
    text = name.replace("_", " ")
    return text[:1].upper() + text[1:].lower()


def _short(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _value(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


def example_label(payload: Any, schema: Any, fallback: str) -> str:
    """An example named by what it holds: "A: Lion · B: Tiger" for ``{"a": "Lion", "b":
    "Tiger"}``, each member by its field label; ``fallback`` when it holds nothing to show."""
    if isinstance(payload, dict):
        found = schema.get("properties") if isinstance(schema, dict) else None
        properties: dict[str, Any] = found if isinstance(found, dict) else {}
        parts = [
            f"{field_label(str(key), properties.get(key))}: {_short(_value(value), MAX_VALUE)}"
            for key, value in payload.items()
            if value not in ("", None, [], {})
        ]
        text = " · ".join(parts)
    elif payload in ("", None, [], {}):
        text = ""
    else:
        text = _value(payload)
    return _short(text, MAX_LABEL) if text.strip() else fallback
