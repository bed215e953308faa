"""What one skill takes as input, for checking a payload meant for it and sending it.

A skill's first ``application/json;schema=X`` input mode (seed 000) is its contract when it has
one: the payload goes in a data part of that media type and is checked against the declared
schema X. Otherwise its seed 001 ``inputFields``, composed into one schema
(:mod:`schemas_app.fields`): the data part says plain ``application/json`` (the fields are not
a named schema). The Skill row keeps neither fields nor their order, so they are read from the
agent's latest card (its skills only, not the whole document).
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


def card_skills(agent: Agent) -> list[Any]:
    """The ``skills`` of the agent's latest card: the snapshot already loaded, else one query
    reading that member alone."""
    if agent.latest_snapshot_id is None:
        return []
    if Agent.latest_snapshot.is_cached(agent):
        card = agent.latest_snapshot.card if agent.latest_snapshot is not None else None
        skills = card.get("skills") if isinstance(card, dict) else None
    else:
        skills = (
            Snapshot.objects.filter(pk=agent.latest_snapshot_id)
            .values_list("card__skills", flat=True)
            .first()
        )
    return skills if isinstance(skills, list) else []


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


def raw_skill(skills: list[Any], skill: Skill) -> Any:
    """The card's entry for ``skill``: at its position (the Skill row's), checked by id."""
    if skill.position < len(skills):
        entry = skills[skill.position]
        if isinstance(entry, dict) and entry.get("id") == skill.skill_id:
            return entry
    return None


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
    found = input_of(skill, raw_skill(card_skills(agent), skill))
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
