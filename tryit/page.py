""" "Try it" on the catalogue: a link beside each skill of an agent's page that has a structured
input (registered in ``cards.hooks``), and the skill's own page with its form (:mod:`tryit.views`).

The form is built when a reader opens it, for that one skill: an agent page with thousands of
skills costs its page of links, not a form for each (issue 43; docs/catalogue.md, "Try it").
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode

from django.db import connection
from django.http import HttpRequest
from django.urls import reverse
from django_jsonform.widgets import JSONFormWidget

from cards import moderation
from cards.models import Agent, Skill, Snapshot
from live import proofs
from registry.compiled import prepared_cursor
from registry.mediatypes import schema_modes
from tryit.blocks import Block


def may_send(user: Any, agent: Agent) -> bool:
    """Owner or staff, and only where the owner opted in to messages (live checks)."""
    return bool(agent.probe_messages) and moderation.can_manage(user, agent)


def _form(block: Block) -> str:
    """The form library's own widget: a container and the hidden field its script fills."""
    if block.reason:
        return ""
    widget = JSONFormWidget(schema=block.schema)
    return widget.render(
        f"try-{block.slug}", json.dumps(block.payload), {"id": f"try-{block.slug}-data"}
    )


def try_url(agent: Agent, skill_id: str) -> str:
    """The "Try it" page of one skill of ``agent``."""
    return reverse("catalogue-try", args=[agent.pk]) + "?" + urlencode({"skill": skill_id})


# The card's inputFields of the skills at the given positions, as one JSON array in their order
# (null where a skill has none).
_FIELDS_SQL = (
    "SELECT jsonb_agg(s.card #> ARRAY['skills', t.p::text, 'inputFields'] ORDER BY t.o) "
    f'FROM "{Snapshot._meta.db_table}" s CROSS JOIN unnest(%s::int[]) WITH ORDINALITY AS t(p, o) '
    "WHERE s.id = %s"
)


def _with_fields(agent: Agent, skills: list[Skill]) -> set[int]:
    """Positions of ``skills`` whose entry in the latest card declares ``inputFields`` (one
    query reading those members alone; none when every skill has a schema'd mode)."""
    positions = [skill.position for skill in skills]
    if not positions or agent.latest_snapshot_id is None:
        return set()
    if connection.vendor == "postgresql":  # one statement whatever the positions: no compiling
        with prepared_cursor(connection) as cursor:
            array = "{" + ",".join(str(position) for position in positions) + "}"
            cursor.execute(_FIELDS_SQL, [array, agent.latest_snapshot_id])
            found = cursor.fetchone()
        row = found[0] if found else None
        row = json.loads(row) if isinstance(row, str) else row
    else:
        names = [f"card__skills__{position}__inputFields" for position in positions]
        row = Snapshot.objects.filter(pk=agent.latest_snapshot_id).values_list(*names).first()
    return {position for position, value in zip(positions, row or (), strict=False) if value}


def section(request: HttpRequest, agent: Agent) -> dict[str, Any] | None:
    """The "Try it" links of the skills the agent page shows (``agent.page_skills``)."""
    skills: list[Skill] = list(getattr(agent, "page_skills", None) or [])
    schemad = [skill for skill in skills if schema_modes(skill.input_modes)]
    fielded = _with_fields(agent, [skill for skill in skills if skill not in schemad])
    links = {
        skill.pk: try_url(agent, skill.skill_id)
        for skill in skills
        if skill in schemad or skill.position in fielded
    }
    if not links:
        return None
    return {
        "template": "tryit/_try_links.html",
        "scripts": False,
        "skill_links": links,
        "context": {"count": len(links), "manager": moderation.can_manage(request.user, agent)},
    }


def _examples(agent: Agent, block: Block) -> list[dict[str, Any]]:
    """The block's examples as links to the page started from each (``?example=N``): they
    work without JavaScript, and try-it.js loads them in place."""
    page = try_url(agent, block.skill_id)
    return [
        {
            "label": example.label,
            "url": f"{page}&{urlencode({'example': number})}",
            "current": number == block.chosen,
        }
        for number, example in enumerate(block.examples, start=1)
    ]


def block_section(request: HttpRequest, agent: Agent, blocks: list[Block]) -> dict[str, Any]:
    """What ``tryit/_try_it.html`` shows of ``blocks`` (one skill's, on its "Try it" page)."""
    unproven = proofs.missing(agent) if may_send(request.user, agent) else []
    send = may_send(request.user, agent) and not unproven
    validate_url = reverse("agent-validate-payload", args=[agent.pk])
    send_url = reverse("agent-try", args=[agent.pk]) if send else None
    return {
        "may_send": send,
        # The validator's calls need the CSRF token only with a session (DRF checks it for
        # session-authenticated requests); anonymous pages set no cookie.
        "signed_in": bool(getattr(request.user, "is_authenticated", False)),
        "opted_in": bool(agent.probe_messages),
        "unproven": unproven,  # origins its owner has not proven (issue 44): no Send
        "manager": moderation.can_manage(request.user, agent),
        "blocks": [
            {
                "block": block,
                "form": _form(block),
                "examples": _examples(agent, block),
                "config": block.config(validate_url=validate_url, send_url=send_url),
                "payload": json.dumps(block.payload, indent=2, ensure_ascii=False),
                "schema": json.dumps(block.schema, indent=2, ensure_ascii=False),
                "body": json.dumps(block.body, indent=2, ensure_ascii=False),
            }
            for block in blocks
        ],
    }
