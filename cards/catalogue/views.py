"""The catalogue's search page (an agent's page: :mod:`cards.catalogue.agent`)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe

from cards.catalogue.common import FEATURED_LIMIT, _secure
from cards.catalogue.no_card import sentences
from cards.catalogue.search import (
    Page,
    _active_filters,
    _facet_links,
    _page,
    _ranked_page,
    facets,
    parse_search,
)
from cards.models import Agent
from cards.reads import gate
from cards.reads.gate import Viewer
from search import door_metrics, semantic

# --- views -----------------------------------------------------------------------------------

# A small icon so no page load asks for /favicon.ico in vain (a 404 in every log). Browsers take
# SVG icons; the catalogue links it with type image/svg+xml, others fetch /favicon.ico itself.
FAVICON_SVG = (
    b'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">'
    b'<rect width="32" height="32" rx="6" fill="#0550ae"/>'
    b'<text x="16" y="22" font-family="system-ui,sans-serif" font-size="15" font-weight="700" '
    b'fill="#fff" text-anchor="middle">A2A</text></svg>'
)


def fixed_file(body: bytes | str, content_type: str) -> HttpResponse:
    """A file that never changes between releases (the favicon, robots.txt): a day in caches,
    and never sniffed as anything else."""
    response = HttpResponse(body, content_type=content_type)
    response["Cache-Control"] = "public, max-age=86400"
    response["X-Content-Type-Options"] = "nosniff"
    return response


@require_safe
def favicon(request: HttpRequest) -> HttpResponse:
    return fixed_file(FAVICON_SVG, "image/svg+xml")


@require_safe
def home(request: HttpRequest) -> HttpResponse:
    search, parsed = parse_search(request)
    page = Page(agents=[], next_url=None, previous_url=None)
    featured: list[Agent] = []
    if parsed is not None:
        viewer = Viewer.of(request.user)
        filtered = door_metrics.filtering(parsed)
        with door_metrics.searched("catalogue", parsed.q, filtered=filtered):
            if parsed.q and semantic.semantic_available():
                # The search box takes a need in plain words: ranked by meaning (docs/search.md).
                agents = replace(parsed, q="").apply(gate.agents(viewer))
                page = _ranked_page(agents, search, parsed.q)
            else:
                page = _page(parsed.apply(gate.agents(viewer)), search)
        if not viewer.anonymous:
            # Only owners and staff can see agents without a card: one query for their rows.
            mark_uncarded(page.rows())
        if not search.filtered and not search.cursor:
            featured = list(
                gate.agents(viewer, include_gone=False)
                .filter(moderation=Agent.Moderation.FEATURED)
                .only("id", "url", "name", "description")
                .order_by("-created_at", "-id")[:FEATURED_LIMIT]
            )
    context = {
        "search": search,
        "page": page,
        "featured": featured,
        "facets": _facet_links(search, facets()),
        "active_filters": _active_filters(search),
        # The filters folded on a phone say how many are on (the words searched for aside).
        "filters_on": len(search.params()) - (1 if search.q else 0),
        "tag_inputs": [*search.tags, ""],
    }
    status = 400 if search.errors else 200
    return _secure(render(request, "catalogue/home.html", context, status=status))


def mark_uncarded(rows: list[Any]) -> None:
    """Give each row of an agent without a card its sentence (``row.no_card``)."""
    found = sentences([row.pk for row in rows]) if rows else {}
    for row in rows:
        row.no_card = found.get(str(row.pk))
