"""The text of an agent that is embedded: what it is and what it does, in its own words.

Name, description, the ARD entry's description and representative queries, then each skill's name,
description and examples. Each skill also gets a text of its own (name, description, examples, tags:
:func:`skill_text`), embedded separately, so a need matches an agent through its best skill rather
than through the average of everything it does. Examples that are structured payloads (JSON,
starting with ``{`` or ``[``) say little about the need they serve and are left out; repeated
strings are kept once. The model reads the first 128 tokens (it was trained on 128), so the most
telling parts come first.
"""

from __future__ import annotations

import hashlib
import uuid
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from cards.models import Agent, Skill

MAX_CHARS = 4000  # well past 128 tokens: the tokenizer truncates the rest


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [item for item in value if isinstance(item, str)]
    return []


def compose(
    *,
    name: str,
    description: str,
    ard_entry: Any,
    skills: Iterable[tuple[str, str, Any]],
) -> str:
    """The text of one agent from its parts; ``skills`` are (name, description, examples)."""
    entry = ard_entry if isinstance(ard_entry, dict) else {}
    parts: list[str] = []
    seen: set[str] = set()

    def add(text: str) -> None:
        text = " ".join(text.split())
        key = text.lower()
        if text and key not in seen:
            seen.add(key)
            parts.append(text)

    add(name)
    add(description)
    for text in _strings(entry.get("description")):
        add(text)
    for text in _strings(entry.get("representativeQueries"))[:10]:
        add(text)
    examples: list[str] = []
    for skill_name, skill_description, skill_examples in skills:
        add(skill_name)
        add(skill_description)
        examples.extend(
            text for text in _strings(skill_examples) if not text.lstrip().startswith(("{", "["))
        )
    for text in examples:
        add(text)
    return "\n".join(parts)[:MAX_CHARS]


MAX_SKILLS = 16  # skills with a vector of their own; later ones count through the whole text


def skill_text(name: str, description: str, examples: Any, tags: Any) -> str:
    """The text of one skill: name, description, examples (payloads and repeats left out),
    tags."""
    said = dict.fromkeys(
        " ".join(t.split()) for t in _strings(examples) if not t.lstrip().startswith(("{", "["))
    )
    parts = [name, description, *said]
    parts.append(" ".join(_strings(tags)))
    return "\n".join(" ".join(part.split()) for part in parts if part.strip())[:MAX_CHARS]


def texts_of(
    *, name: str, description: str, ard_entry: Any, skills: Sequence[tuple[str, str, Any, Any]]
) -> list[str]:
    """An agent's texts from its parts, ``skills`` as (name, description, examples, tags): the
    whole text first, then one per skill (at most :data:`MAX_SKILLS`, in the card's order)."""
    whole = compose(
        name=name,
        description=description,
        ard_entry=ard_entry,
        skills=[(n, d, e) for n, d, e, _ in skills],
    )
    return [whole] + [skill_text(*skill) for skill in skills[:MAX_SKILLS]]


def digest(text: str, model: str) -> str:
    """What decides whether an agent needs embedding again: its text and the model."""
    return hashlib.sha256(f"{model}\x00{text}".encode()).hexdigest()


def agent_texts(ids: Sequence[uuid.UUID | str]) -> dict[uuid.UUID, list[str]]:
    """The texts of each agent of ``ids`` that exists (two queries): the whole text first, then
    one per skill (at most :data:`MAX_SKILLS`, in the card's order). The whole text is empty
    when the agent has none yet (never crawled)."""
    rows = list(
        Agent.objects.filter(pk__in=list(ids)).values_list("pk", "name", "description", "ard_entry")
    )
    skills: dict[uuid.UUID, list[tuple[str, str, Any, Any]]] = defaultdict(list)
    for agent_id, name, description, examples, tags in (
        Skill.objects.filter(agent_id__in=[row[0] for row in rows])
        .order_by("agent_id", "position")
        .values_list("agent_id", "name", "description", "examples", "tags")
    ):
        skills[agent_id].append((name, description, examples, tags))
    out: dict[uuid.UUID, list[str]] = {}
    for pk, name, description, entry in rows:
        out[pk] = texts_of(name=name, description=description, ard_entry=entry, skills=skills[pk])
    return out
