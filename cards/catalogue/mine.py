"""My agents: the signed-in reader's own agents, in every state (issue 39).

The public lists show only agents with a card (cards.reads.gate); an owner still needs to see
what became of each submission: which are listed, which wait for moderation or were hidden,
and which have no card yet, with the reason and the next try. Read through the gate like every
other page, narrowed to the reader's own agents, so staff see their own here, not everyone's.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe

from cards.catalogue.common import _secure
from cards.catalogue.no_card import no_card_sentence
from cards.models import Agent, AuditEntry
from cards.reads import gate
from cards.reads.gate import Viewer

# Newest first, at most this many; the API lists them all (docs/catalogue.md, "My agents").
MINE_LIMIT = 200
MINE_FIELDS = (
    "id", "url", "name", "moderation", "moderation_reason", "health", "valid",
    "signature_status", "latest_snapshot", "last_error", "last_crawled_at", "next_crawl_at",
    "created_at", "publisher_origin", "live_outcome",
)  # fmt: skip


MOVED_LIMIT = 50


def moved_away(user_id: Any) -> list[dict[str, Any]]:
    """Agents that left this account for the verified publisher of their origin (issue 44),
    newest first: the audit entries naming it as the previous owner."""
    entries = (
        AuditEntry.objects.filter(action="owner-moved", detail__previous_owner=user_id)
        .select_related("agent")
        .only("created_at", "detail", "agent__id", "agent__name", "agent__url")
        .order_by("-created_at", "-id")[:MOVED_LIMIT]
    )
    return [
        {"agent": entry.agent, "origin": entry.detail.get("origin"), "at": entry.created_at}
        for entry in entries
        if entry.agent is not None
    ]


def _row(agent: Agent) -> dict[str, Any]:
    carded = agent.latest_snapshot_id is not None
    return {
        "agent": agent,
        "public": carded and agent.moderation in Agent.PUBLIC_STATES,
        "no_card": None
        if carded
        else no_card_sentence(
            last_error=agent.last_error,
            last_crawled_at=agent.last_crawled_at,
            next_crawl_at=agent.next_crawl_at,
        ),
    }


@require_safe
def my_agents(request: HttpRequest) -> HttpResponse:
    viewer = Viewer.of(request.user)
    rows: list[dict[str, Any]] = []
    more = False
    if not viewer.anonymous:
        found = list(
            gate.agents(viewer)
            .filter(submitted_by_id=viewer.user_id)
            .only(*MINE_FIELDS)
            .order_by("-created_at", "-id")[: MINE_LIMIT + 1]
        )
        more = len(found) > MINE_LIMIT
        rows = [_row(agent) for agent in found[:MINE_LIMIT]]
    context = {
        "rows": rows,
        "more": more,
        "limit": MINE_LIMIT,
        "signed_in": not viewer.anonymous,
        "moved": [] if viewer.anonymous else moved_away(viewer.user_id),
        # Anyone may sign in or sign up on the catalogue's own pages (allauth), and come back.
        "login_url": f"{settings.LOGIN_URL}?{urlencode({'next': request.path})}",
    }
    return _secure(render(request, "catalogue/mine.html", context))
