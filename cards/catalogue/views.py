"""The catalogue's two pages: the search page and an agent's page."""

from __future__ import annotations

import uuid
from dataclasses import replace
from typing import Any

from django.db.models import Prefetch
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import NoReverseMatch, reverse
from django.views.decorators.http import require_safe

from cards import hooks
from cards.badges import embed_snippets
from cards.catalogue.common import FEATURED_LIMIT, _secure, safe_link
from cards.catalogue.live import live_context
from cards.catalogue.no_card import of_agent, sentences
from cards.catalogue.search import (
    Page,
    _active_filters,
    _facet_links,
    _page,
    _ranked_page,
    facets,
    parse_search,
)
from cards.models import Agent, Extension, Mode, Skill
from cards.reads import door_metrics, gate, semantic
from cards.reads.gate import Viewer

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
        with door_metrics.searched("catalogue", parsed.q):
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
        "tag_inputs": [*search.tags, ""],
    }
    status = 400 if search.errors else 200
    return _secure(render(request, "catalogue/home.html", context, status=status))


def mark_uncarded(rows: list[Any]) -> None:
    """Give each row of an agent without a card its sentence (``row.no_card``)."""
    found = sentences([row.pk for row in rows]) if rows else {}
    for row in rows:
        row.no_card = found.get(str(row.pk))


def _schemas(agent: Agent) -> list[dict[str, Any]]:
    """The agent's schemas: the schema index's rows (documents, roles, skills) when that app is
    installed, plus any schema a mode names that the index has not recorded (yet)."""
    rows: dict[str, dict[str, Any]] = {}

    def row_for(key: str, name: str, field_name: str = "") -> dict[str, Any]:
        return rows.setdefault(
            key,
            {"name": name, "field_name": field_name, "document": None, "roles": [], "skills": []},
        )

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
            if use["skill_id"] and use["skill_id"] not in row["skills"]:
                row["skills"].append(use["skill_id"])

    named = (
        Mode.objects.filter(agent=agent, schema__isnull=False)
        .exclude(schema="")
        .values_list("schema", "direction")
        .distinct()
        .order_by("schema", "direction")
    )
    for name, direction in named:
        row = row_for(str(name), str(name))
        if direction not in row["roles"]:
            row["roles"].append(direction)
    return sorted(rows.values(), key=lambda row: (row["name"] == "", row["name"]))


def _optional_url(name: str, *args: Any) -> str | None:
    try:
        return reverse(name, args=args)
    except NoReverseMatch:
        return None


@require_safe
def agent_page(request: HttpRequest, pk: uuid.UUID) -> HttpResponse:
    agent = (
        gate.agents(Viewer.of(request.user))
        .defer("findings", "search_text", "signature")
        .prefetch_related(
            Prefetch("skills", queryset=Skill.objects.order_by("position")),
            Prefetch("extensions", queryset=Extension.objects.order_by("position")),
        )
        .filter(pk=pk)
        .first()
    )
    if agent is None:
        response = render(request, "catalogue/not_found.html", {"pk": pk}, status=404)
        return _secure(response)
    if agent.latest_snapshot_id is None:
        return _no_card_page(request, agent)

    defaults = list(
        Mode.objects.filter(agent=agent, skill__isnull=True)
        .only("direction", "media_type", "essence", "schema")
        .order_by("direction", "id")
    )
    schemas = _schemas(agent)
    base_url = request.build_absolute_uri("/")
    page_url = request.build_absolute_uri(reverse("catalogue-agent", args=[agent.pk]))
    snippets = embed_snippets(agent, base_url, link_url=page_url)
    # Sections other apps add (the "Try it" forms of tryit/), each with its own template.
    sections = [
        section
        for hook in hooks.agent_page_sections
        if (section := hook(request, agent)) is not None
    ]
    context = {
        "agent": agent,
        "public": agent.moderation in Agent.PUBLIC_STATES,
        "provider_link": safe_link(agent.provider_url),
        "documentation_link": safe_link(agent.documentation_url),
        "input_modes": [m for m in defaults if m.direction == Mode.Direction.INPUT],
        "output_modes": [m for m in defaults if m.direction == Mode.Direction.OUTPUT],
        "schemas": schemas,
        "snippets": [
            ("Markdown", snippets["markdown"]),
            ("HTML", snippets["html"]),
            ("reStructuredText", snippets["rst"]),
        ],
        "badge_url": f"/badges/{agent.pk}.svg",
        "card_url": reverse("agent-card", args=[agent.pk]),
        "api_url": reverse("agent-detail", args=[agent.pk]),
        "history_url": reverse("agent-history", args=[agent.pk]),
        "attestation_url": _optional_url("agent-attestation", agent.pk),
        "live": live_context(agent, request.user),
        "sections": sections,
    }
    scripts = any(section.get("scripts") for section in sections)
    return _secure(render(request, "catalogue/agent.html", context), scripts=scripts)


def _no_card_page(request: HttpRequest, agent: Agent) -> HttpResponse:
    """The page of an agent without a card (its owner's or staff's only: cards.reads.gate):
    one sentence with the reason and the next try; nothing that only a card can fill (badge,
    states, health, skills, schemas) and no link that cannot answer (card JSON, attestation)."""
    context = {
        "agent": agent,
        "public": agent.moderation in Agent.PUBLIC_STATES,
        "no_card": of_agent(agent),
        "manager": Viewer.of(request.user).manages(agent),
        "api_url": reverse("agent-detail", args=[agent.pk]),
        "recrawl_url": _optional_url("agent-recrawl", agent.pk),
    }
    return _secure(render(request, "catalogue/agent_no_card.html", context))
