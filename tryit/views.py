"""``GET /agents/{id}/try?skill=...``: one skill's "Try it" page, its form built on demand.

The agent is read through the one visibility gate (an agent the reader may not see is the
catalogue's 404 page); a skill the card does not have is a 404 page that says so, a skill with
no structured input a page that says why there is no form. ``?example=N`` starts the form from
the skill's N-th example: the example links work without JavaScript.
"""

from __future__ import annotations

import uuid
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_safe

from cards.catalogue.common import _secure
from cards.models import Skill
from cards.reads import gate
from cards.reads.gate import Viewer
from tryit.blocks import blocks_of
from tryit.page import block_section

# Columns a "Try it" page never reads (the interfaces are read: the message goes to one).
UNREAD = ("findings", "search_text", "signature", "summary_doc", "detail_doc", "live")
_MAX_SKILL_ID = Skill._meta.get_field("skill_id").max_length or 512


def _number(text: str) -> int:
    """A positive page parameter, or 0 for anything else."""
    return int(text) if text.isascii() and text.isdigit() and len(text) <= 4 else 0


@require_safe
def try_page(request: HttpRequest, pk: uuid.UUID) -> HttpResponse:
    agent = gate.agents(Viewer.of(request.user)).defer(*UNREAD).filter(pk=pk).first()
    if agent is None or agent.latest_snapshot_id is None:
        return _secure(render(request, "catalogue/not_found.html", {"pk": pk}, status=404))
    skill_id = request.GET.get("skill", "")
    skill = None
    if skill_id and "\x00" not in skill_id and len(skill_id) <= _MAX_SKILL_ID:
        skill = agent.skills.filter(skill_id=skill_id).order_by("position").first()
    context: dict[str, Any] = {
        "agent": agent,
        "skill": skill,
        "skill_id": skill_id[:200],
        "agent_url": reverse("catalogue-agent", args=[agent.pk]),
        "section": None,
    }
    if skill is None:
        return _secure(render(request, "tryit/try_page.html", context, status=404))
    blocks = blocks_of(agent, [skill], example=_number(request.GET.get("example", "")))
    if blocks:
        context["section"] = block_section(request, agent, blocks)
    response = render(request, "tryit/try_page.html", context)
    return _secure(response, scripts=bool(blocks))
