"""The whole of an agent's long lists, a page at a time (docs/api.md, "Large cards").

The detail (``GET /api/v1/agents/{id}``) carries the first skills, interfaces and live check
rows with each list's total (cards.rendering.bounds); these three lists page through all of
them, with the API's ``cursor`` and ``limit`` and ``{"results": [...], "next": url|null}``:

- ``GET /api/v1/agents/{id}/skills``: every skill, in the card's order, in the detail's shape;
- ``GET /api/v1/agents/{id}/interfaces``: the card's ``supportedInterfaces`` as indexed;
- ``GET /api/v1/agents/{id}/live-checks``: every row of the last live run's report.

A page also stops before ``PAGE_BYTES`` (its ``next`` goes on from there). Every read goes
through the one visibility gate: an agent the reader may not see is the same 404 as the
detail's.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpResponse
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.views import APIView

from cards.api.common import CURSOR, LIMIT, page_of, page_response, viewer_of
from cards.models import Skill
from cards.reads import gate, paging, parts
from cards.reads.params import Query
from cards.rendering.bounds import PAGE_BYTES, within
from cards.rendering.documents import skill_document
from cards.rendering.section_shapes import LiveCheckSerializer, SkillSerializer

SKILLS = paging.Keyset(scope="agent-skills", order=("position", "id"))

INTERFACE = inline_serializer(
    "AgentInterface",
    {
        "url": serializers.CharField(),
        "protocolBinding": serializers.CharField(),
        "protocolVersion": serializers.CharField(),
    },
)


class AgentSkillsView(APIView):
    """Every skill of the agent's card, in the card's order (the detail shows the first)."""

    @extend_schema(
        parameters=[CURSOR, LIMIT], responses={200: page_of("AgentSkillPage", SkillSerializer)}
    )
    def get(self, request: Request, pk: Any) -> HttpResponse:
        query = Query(request.query_params, ["cursor", "limit"])
        limit = query.limit()
        if not gate.agents(viewer_of(request)).filter(pk=pk).exists():
            raise gate.not_found()
        rows = SKILLS.apply(Skill.objects.filter(agent_id=pk), query.one("cursor"))
        page = list(rows[: limit + 1])
        shown = within(page[:limit], count=limit, budget=PAGE_BYTES, shape=skill_document)
        if not shown and page:  # one skill alone over the budget: it still gets its page
            shown = [skill_document(page[0])]
        cursor = None
        if len(page) > len(shown):
            last = page[len(shown) - 1]
            cursor = SKILLS.next_cursor([last.position, last.pk])
        return page_response({"results": shown, "next": paging.next_link(request, cursor)})


def _array_page(request: Request, pk: Any, which: str) -> HttpResponse:
    query = Query(request.query_params, ["cursor", "limit"])
    limit = query.limit()
    scope = f"agent-{which}:{pk}"
    offset = paging.cursor_offset(scope, query.one("cursor") or "")
    found = parts.array_slice(gate.agents(viewer_of(request)), pk, which, offset, limit)
    if found is None:
        raise gate.not_found()
    total, items = found
    shown = within(items, count=limit, budget=PAGE_BYTES)
    if not shown and items:
        shown = items[:1]
    after = offset + len(shown)
    cursor = paging.offset_cursor(scope, after) if after < total else None
    return page_response({"results": shown, "next": paging.next_link(request, cursor)})


class AgentInterfacesView(APIView):
    """Every interface the agent's card declares (``supportedInterfaces``; v0.3 cards' ``url``
    and ``additionalInterfaces`` in the v1.0 shape), in the card's order."""

    @extend_schema(
        parameters=[CURSOR, LIMIT],
        responses={200: page_of("AgentInterfacePage", INTERFACE)},
    )
    def get(self, request: Request, pk: Any) -> HttpResponse:
        return _array_page(request, pk, parts.INTERFACES)


class AgentLiveChecksView(APIView):
    """Every row of the report of the agent's last live run (docs/live-checks.md), in the
    report's order; an agent never checked has none."""

    @extend_schema(
        parameters=[CURSOR, LIMIT],
        responses={200: page_of("AgentLiveCheckPage", LiveCheckSerializer)},
    )
    def get(self, request: Request, pk: Any) -> HttpResponse:
        return _array_page(request, pk, parts.LIVE_CHECKS)
