"""The "Schemas" section of an agent's page: each named schema (or a skill's inputFields), its
roles, the skills using it and its document, at most :data:`SHOWN` of them.

The rows come from the schema index (schemas_app's hook, which reads at most a few hundred uses)
and from the modes that name a schema; a schema used by many skills names its first ones and
says how many more of them the rows read show.
"""

from __future__ import annotations

from typing import Any

from cards import hooks
from cards.catalogue.page_reads import named_modes
from cards.models import Agent

SHOWN = 25
SKILLS_NAMED = 10


def schema_rows(agent: Agent) -> dict[str, Any]:
    """``{"rows": [...], "more": n}``: the first :data:`SHOWN` schema rows (named first, by
    name), and how many more were found."""
    rows: dict[str, dict[str, Any]] = {}

    def row_for(key: str, name: str, field_name: str = "") -> dict[str, Any]:
        return rows.setdefault(
            key,
            {
                "name": name, "field_name": field_name, "document": None, "roles": [],
                "skills": [], "skills_more": 0,
            },
        )  # fmt: skip

    for hook in hooks.agent_schema_rows:  # the schema index's rows (schemas_app), if installed
        for use in hook(agent):
            if use["name"]:
                row = row_for(use["name"], use["name"])
            else:
                row = row_for(f"{use['skill_id']}\x00{use['field_name']}", "", use["field_name"])
            if use["document"] is not None and row["document"] is None:
                row["document"] = use["document"]
            if use["role"] not in row["roles"]:
                row["roles"].append(use["role"])
            skill = use["skill_id"]
            if skill and skill not in row["skills"]:
                if len(row["skills"]) < SKILLS_NAMED:
                    row["skills"].append(skill)
                else:
                    row["skills_more"] += 1

    for name, direction in named_modes(agent.pk):
        row = row_for(name, name)
        if direction not in row["roles"]:
            row["roles"].append(direction)
    ordered = sorted(rows.values(), key=lambda row: (row["name"] == "", row["name"]))
    return {"rows": ordered[:SHOWN], "more": max(0, len(ordered) - SHOWN)}
