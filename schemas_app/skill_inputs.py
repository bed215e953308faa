"""What one skill takes as input, for checking a payload meant for it and sending it.

A skill's first ``application/json;schema=X`` input mode (seed 000) is its contract when it has
one: the payload goes in a data part of that media type and is checked against the declared
schema X. Otherwise its seed 001 ``inputFields``, composed into one schema
(:mod:`schemas_app.fields`): the data part says plain ``application/json`` (the fields are not
a named schema). The Skill row keeps neither fields nor their order, so they are read from the
agent's latest card (the one skill's entry, not the whole document: :func:`card_entry`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cards.models import Agent, Skill, Snapshot
from registry.errors import ProblemError
from registry.findings import extend_pointer
from registry.mediatypes import schema_modes
from schemas_app.fields import Composed, check_fields, compose, read_fields
from schemas_app.payloads import DeclaredSchemas, check_payload

JSON = "application/json"
_MAX_SKILL_ID = Skill._meta.get_field("skill_id").max_length or 512


@dataclass
class SkillInput:
    """A skill's input contract: a named schema, or the schema composed from its fields."""

    skill: Skill
    card_skill: dict[str, Any]  # the skill as the latest card (v1.0 shape) has it
    media_type: str  # of the data part: application/json;schema=X, or application/json
    schema_name: str | None = None
    fields: Composed | None = None

    def field_names(self) -> list[str]:
        """The names of the skill's inputFields, also when its schema'd mode is the contract."""
        if self.fields is not None:
            return self.fields.fields.names()
        found = read_fields(self.card_skill.get("inputFields"), "")
        return found.names()

    def check(self, payload: Any, declared: DeclaredSchemas | None = None) -> dict[str, Any]:
        """``payload`` against the contract (``declared``: the agent's, read when not given)."""
        if self.fields is not None:
            return check_fields(self.fields, payload)
        assert self.schema_name is not None
        declared = declared if declared is not None else DeclaredSchemas.of(self.skill.agent)
        return check_payload(self.schema_name, payload, declared)


def card_entry(agent: Agent, skill: Skill) -> Any:
    """The latest card's entry for ``skill``, read at its position alone (one query; a card
    may hold thousands of skills): None when there is none or its id is not the skill's."""
    if agent.latest_snapshot_id is None:
        return None
    entry = (
        Snapshot.objects.filter(pk=agent.latest_snapshot_id)
        .values_list(f"card__skills__{skill.position}", flat=True)
        .first()
    )
    return entry if isinstance(entry, dict) and entry.get("id") == skill.skill_id else None


def input_of(skill: Skill, raw: Any) -> SkillInput | None:
    """The contract of ``skill`` (``raw``: the card's entry for it), or None without one."""
    card_skill = raw if isinstance(raw, dict) else {}
    modes = schema_modes(skill.input_modes)
    if modes:
        media_type, name = modes[0]
        return SkillInput(skill, card_skill, media_type, schema_name=name)
    declared = card_skill.get("inputFields")
    if not declared:
        return None
    pointer = extend_pointer("/skills", skill.position, "inputFields")
    composed = compose(declared, pointer=pointer, title=skill.name or skill.skill_id)
    return SkillInput(skill, card_skill, JSON, fields=composed)


def skill_input(agent: Agent, skill_id: str) -> SkillInput:
    """The contract of the agent's skill ``skill_id``: a 404 problem for a skill the card does
    not have, a 422 for one with neither a schema'd input mode nor inputFields."""
    # No stored skill id holds a NUL or exceeds the column (PostgreSQL refuses the first in a
    # query): such an id names no skill, asked or not.
    storable = "\x00" not in skill_id and len(skill_id) <= _MAX_SKILL_ID
    skill = (
        agent.skills.filter(skill_id=skill_id).order_by("position").first() if storable else None
    )
    if skill is None:
        raise ProblemError(
            status=404,
            slug="no-such-skill",
            title="No such skill",
            detail=f"The agent's card has no skill {skill_id[:200]!r}.",
            errors=[{"pointer": "/skill", "message": "no skill with this id"}],
        )
    skill.agent = agent
    found = input_of(skill, card_entry(agent, skill))
    if found is None:
        raise ProblemError(
            status=422,
            slug="no-input-schema",
            title="Nothing to check against",
            detail=f"The skill {skill_id[:200]!r} has neither an application/json;schema=X "
            "input mode nor inputFields.",
            errors=[{"pointer": "/skill", "message": "the skill declares no structured input"}],
        )
    return found
