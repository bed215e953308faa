"""Skill rules: required members, unique ids, kebab-case ids (advice only)."""

from __future__ import annotations

import re

from cards.rules.context import Run
from cards.rules.fields import SKILL_FIELDS, SKILL_REQUIRED
from cards.rules.objects import check_object, dicts
from registry.findings import extend_pointer

KEBAB_CASE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


def rule_skills(run: Run) -> None:
    first_seen: dict[str, int] = {}
    for index, skill in dicts(run.data.get("skills")):
        pointer = extend_pointer("/skills", index)
        check_object(run.report, skill, pointer, SKILL_FIELDS, SKILL_REQUIRED)
        skill_id = skill.get("id")
        if not isinstance(skill_id, str) or not skill_id.strip():
            continue
        where = extend_pointer(pointer, "id")
        if skill_id in first_seen:
            first = extend_pointer("/skills", first_seen[skill_id])
            message = f"id {skill_id!r} is also used by {first}"
            run.report.error("skill.duplicate-id", where, message)
        else:
            first_seen[skill_id] = index
        if not KEBAB_CASE.match(skill_id):
            # Seed 004: "Skill id should be kebab-case (code-review, not CodeReview)". The spec
            # has no rule on the form of an id, so this is advice (info), never a defect.
            run.report.info(
                "skill.id-not-kebab-case", where, f"{skill_id!r} is not kebab-case ('code-review')"
            )
