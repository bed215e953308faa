"""Index a normalised card: the agent's summary fields and its skill, tag, mode and extension rows.

The card may be anything a publisher served, so every access checks the type it expects and
skips what does not fit (the validation rules report it). Index rows are replaced as a whole.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from cards.models import Agent, Extension, Mode, Skill, SkillTag
from registry.mediatypes import MediaTypeError, parse_media_type


def clip(value: Any, limit: int) -> str:
    """A string that fits a column of ``limit`` characters (and a B-tree index entry)."""
    text = value if isinstance(value, str) else ""
    return text[:limit]


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def string_items(value: Any) -> list[str]:
    return [item for item in as_list(value) if isinstance(item, str)]


def _bool_or_none(value: Any) -> bool | None:
    return value if isinstance(value, bool) else None


def normalise_tag(tag: str) -> str:
    return " ".join(tag.split()).lower()[:256]


def apply_summary(agent: Agent, card: dict[str, Any]) -> None:
    """Copy the card's top-level facts onto the agent row (not saved here)."""
    provider = as_dict(card.get("provider"))
    capabilities = as_dict(card.get("capabilities"))
    agent.name = clip(card.get("name"), 512)
    agent.description = clip(card.get("description"), 20000)
    agent.version = clip(card.get("version"), 128)
    agent.provider_organization = clip(provider.get("organization"), 512)
    agent.provider_url = clip(provider.get("url"), 2048)
    agent.documentation_url = clip(card.get("documentationUrl"), 2048)
    agent.icon_url = clip(card.get("iconUrl"), 2048)
    agent.streaming = _bool_or_none(capabilities.get("streaming"))
    agent.push_notifications = _bool_or_none(capabilities.get("pushNotifications"))
    agent.extended_card = _bool_or_none(capabilities.get("extendedAgentCard"))
    agent.interfaces = [
        {
            "url": clip(item.get("url"), 2048),
            "protocolBinding": clip(item.get("protocolBinding"), 128),
            "protocolVersion": clip(item.get("protocolVersion"), 32),
        }
        for item in as_list(card.get("supportedInterfaces"))
        if isinstance(item, dict)
    ]
    agent.search_text = _search_text(card, agent.ard_entry)


def entry_text(entry: dict[str, Any] | None) -> list[str]:
    """What an ARD manifest entry adds to the agent's searchable text."""
    entry = entry or {}
    parts = [clip(entry.get("description"), 5000)]
    parts.extend(string_items(entry.get("representativeQueries")))
    parts.extend(string_items(entry.get("tags")))
    return [p for p in parts if p]


def search_text_of(card: dict[str, Any] | None, entry: dict[str, Any] | None) -> str:
    return _search_text(card or {}, entry)


def _search_text(card: dict[str, Any], entry: dict[str, Any] | None = None) -> str:
    parts: list[str] = [
        clip(card.get("name"), 512),
        clip(card.get("description"), 5000),
        clip(as_dict(card.get("provider")).get("organization"), 512),
    ]
    for skill in as_list(card.get("skills")):
        if isinstance(skill, dict):
            parts.append(clip(skill.get("name"), 512))
            parts.append(clip(skill.get("description"), 2000))
            parts.extend(string_items(skill.get("tags")))
    parts.extend(entry_text(entry))
    return "\n".join(p for p in parts if p)[:100000]


def _mode_rows(
    agent: Agent, skill: Skill | None, direction: str, modes: Iterable[str]
) -> list[Mode]:
    rows: list[Mode] = []
    seen: set[str] = set()
    for text in modes:
        try:
            media = parse_media_type(text)
        except MediaTypeError:
            continue  # reported by the rules; an unparsable mode cannot be searched for
        canonical = media.canonical
        if canonical in seen or len(canonical) > 512:
            continue
        seen.add(canonical)
        schema = media.schema
        rows.append(
            Mode(
                agent=agent,
                skill=skill,
                direction=direction,
                media_type=canonical,
                essence=media.essence[:255],
                schema=schema[:512] if schema is not None else None,
                params=dict(media.params),
            )
        )
    return rows


@dataclass
class IndexRows:
    """The rows search runs on for one card, built without touching the database."""

    skills: list[Skill] = field(default_factory=list)
    tags: list[SkillTag] = field(default_factory=list)
    modes: list[Mode] = field(default_factory=list)
    extensions: list[Extension] = field(default_factory=list)


def index_rows(agent: Agent, card: dict[str, Any]) -> IndexRows:
    """Skills, tags, modes (parsed media types) and extensions of ``card``, for ``agent``."""
    out = IndexRows()
    default_in = string_items(card.get("defaultInputModes"))
    default_out = string_items(card.get("defaultOutputModes"))
    out.modes = _mode_rows(agent, None, Mode.Direction.INPUT, default_in)
    out.modes += _mode_rows(agent, None, Mode.Direction.OUTPUT, default_out)
    for position, raw in enumerate(as_list(card.get("skills"))):
        if not isinstance(raw, dict):
            continue
        # A skill without modes of its own takes the card's defaults (spec: AgentSkill).
        inputs = string_items(raw.get("inputModes")) or default_in
        outputs = string_items(raw.get("outputModes")) or default_out
        out.skills.append(
            Skill(
                agent=agent,
                position=position,
                skill_id=clip(raw.get("id"), 512),
                name=clip(raw.get("name"), 512),
                description=clip(raw.get("description"), 20000),
                tags=string_items(raw.get("tags"))[:100],
                examples=string_items(raw.get("examples"))[:100],
                input_modes=inputs,
                output_modes=outputs,
            )
        )
    for skill in out.skills:
        seen: set[str] = set()
        for tag in skill.tags:
            norm = normalise_tag(tag)
            if norm and norm not in seen:
                seen.add(norm)
                out.tags.append(SkillTag(agent=agent, skill=skill, tag=norm))
        out.modes += _mode_rows(agent, skill, Mode.Direction.INPUT, skill.input_modes)
        out.modes += _mode_rows(agent, skill, Mode.Direction.OUTPUT, skill.output_modes)
    capabilities = as_dict(card.get("capabilities"))
    for position, raw in enumerate(as_list(capabilities.get("extensions"))):
        if not isinstance(raw, dict) or not isinstance(raw.get("uri"), str) or not raw["uri"]:
            continue
        params = raw.get("params")
        out.extensions.append(
            Extension(
                agent=agent,
                position=position,
                uri=raw["uri"][:2048],
                description=clip(raw.get("description"), 5000),
                required=raw.get("required") is True,
                params=params if isinstance(params, dict) else None,
            )
        )
    return out


def index_write(rows: IndexRows) -> None:
    """Insert built rows (skills first: tags and modes point at them)."""
    Skill.objects.bulk_create(rows.skills)
    SkillTag.objects.bulk_create(rows.tags)
    Mode.objects.bulk_create(rows.modes)
    Extension.objects.bulk_create(rows.extensions)


def index_card(agent: Agent, card: dict[str, Any], *, fresh: bool = False) -> IndexRows:
    """Replace the agent's skill, tag, mode and extension rows with those of ``card``.

    ``fresh``: the agent was never indexed, so there is nothing to delete (four DELETEs saved
    on every first crawl)."""
    if not fresh:
        Mode.objects.filter(agent=agent).delete()
        SkillTag.objects.filter(agent=agent).delete()
        Skill.objects.filter(agent=agent).delete()
        Extension.objects.filter(agent=agent).delete()
    rows = index_rows(agent, card)
    index_write(rows)
    return rows
