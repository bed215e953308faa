"""What changed between two versions of a card, for the agent's history."""

from __future__ import annotations

import json
from typing import Any

from cards.indexing import as_dict, as_list, string_items


def _skills(card: dict[str, Any]) -> dict[str, str]:
    """Skill id -> a stable rendering of the skill, to tell changed skills from unchanged."""
    out: dict[str, str] = {}
    for skill in as_list(card.get("skills")):
        if isinstance(skill, dict) and isinstance(skill.get("id"), str):
            out[skill["id"]] = json.dumps(skill, sort_keys=True, default=str)
    return out


def _modes(card: dict[str, Any]) -> set[str]:
    modes = {f"input {m}" for m in string_items(card.get("defaultInputModes"))}
    modes |= {f"output {m}" for m in string_items(card.get("defaultOutputModes"))}
    for skill in as_list(card.get("skills")):
        if isinstance(skill, dict):
            modes |= {f"input {m}" for m in string_items(skill.get("inputModes"))}
            modes |= {f"output {m}" for m in string_items(skill.get("outputModes"))}
    return modes


def _extensions(card: dict[str, Any]) -> set[str]:
    capabilities = as_dict(card.get("capabilities"))
    return {
        ext["uri"]
        for ext in as_list(capabilities.get("extensions"))
        if isinstance(ext, dict) and isinstance(ext.get("uri"), str)
    }


def _added_removed(old: set[str], new: set[str]) -> dict[str, list[str]] | None:
    added, removed = sorted(new - old), sorted(old - new)
    if not added and not removed:
        return None
    return {"added": added, "removed": removed}


def summarise(
    old_card: dict[str, Any] | None,
    new_card: dict[str, Any] | None,
    *,
    old_signature: dict[str, Any] | None = None,
    new_signature: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A compact summary; an empty dict means nothing a client would notice changed."""
    if old_card is None:
        return {"first": True} if new_card is not None else {}
    if new_card is None:
        return {"card": "no longer parses"}
    changes: dict[str, Any] = {}
    old_skills, new_skills = _skills(old_card), _skills(new_card)
    skills = _added_removed(set(old_skills), set(new_skills)) or {"added": [], "removed": []}
    skills["changed"] = sorted(
        k for k in set(old_skills) & set(new_skills) if old_skills[k] != new_skills[k]
    )
    if any(skills.values()):
        changes["skills"] = skills
    for key, extract in (("modes", _modes), ("extensions", _extensions)):
        diff = _added_removed(extract(old_card), extract(new_card))
        if diff:
            changes[key] = diff
    for field in ("version", "name", "description"):
        if old_card.get(field) != new_card.get(field):
            changes[field] = {"from": old_card.get(field), "to": new_card.get(field)}
    old_sig, new_sig = old_signature or {}, new_signature or {}
    if old_sig.get("status") != new_sig.get("status") and old_sig:
        changes["signature_status"] = {"from": old_sig.get("status"), "to": new_sig.get("status")}
    old_keys, new_keys = old_sig.get("thumbprints") or [], new_sig.get("thumbprints") or []
    if old_keys and new_keys and set(old_keys) != set(new_keys):
        changes["signing_key"] = {"from": sorted(old_keys), "to": sorted(new_keys)}
    return changes
