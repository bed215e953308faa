"""The public catalogue: server-rendered search and agent pages (plain templates, no JavaScript).

Everything starts from :func:`cards.reads.gate.agents`, so agents that are pending,
hidden, rejected or deleted never reach the public. Card text is untrusted: the templates rely on
autoescaping and never mark it safe, links from cards are only rendered for http(s) URLs, and
every page is sent with a Content-Security-Policy that allows no script at all.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any
from urllib.parse import urlencode, urlsplit

from django.core.cache import cache
from django.db.models import Prefetch, QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import NoReverseMatch, reverse
from django.views.decorators.http import require_safe

from cards import hooks
from cards.badges import embed_snippets
from cards.models import Agent, Extension, FacetCount, Mode, Skill
from cards.reads import documents, gate, paging
from cards.reads import facets as reads_facets
from cards.reads.gate import Viewer
from cards.reads.paging import Keyset
from cards.reads.params import Query
from cards.reads.search import AgentSearch
from registry.errors import ProblemError

PAGE_SIZE = 20
FEATURED_LIMIT = 6
FACET_LIMIT = 12
FACET_CACHE_KEY = "catalogue:facets:v2"
FACET_CACHE_SECONDS = 120
MAX_TAGS = 10
MAX_PARAM_LENGTH = 1000
# What a result row shows: large columns (findings, search text, signature) are left unread.
LIST_FIELDS = (
    "id",
    "url",
    "name",
    "description",
    "version",
    "provider_organization",
    "signature_status",
    "valid",
    "health",
    "moderation",
    "created_at",
)

# No script may run on a catalogue page, whatever a card contains; styles are inline in
# base.html and images (the badge) come from the registry itself.
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; form-action 'self'; "
    "base-uri 'none'; frame-ancestors 'none'"
)


def _secure(response: HttpResponse) -> HttpResponse:
    response["Content-Security-Policy"] = CONTENT_SECURITY_POLICY
    response["X-Content-Type-Options"] = "nosniff"
    response["Referrer-Policy"] = "same-origin"
    return response


def safe_link(url: str) -> str | None:
    """``url`` if it may be an href (http or https with a host); None for anything else, such
    as ``javascript:`` or ``data:``, which are then shown as text only."""
    if not url or any(ch.isspace() or ord(ch) < 32 for ch in url):
        return None
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        return None
    return url


# --- search parameters -----------------------------------------------------------------------

CATALOGUE_PARAMETERS = ("q", "tag", "input_mode", "output_mode", "schema", "cursor")
AGENTS = Keyset(scope="agents", order=("-created_at", "-id"))


@dataclass
class Search:
    """What the search form asked for, kept as text to fill the form and build links."""

    q: str = ""
    tags: list[str] = field(default_factory=list)
    input_mode: str = ""
    output_mode: str = ""
    schema: str = ""
    cursor: str = ""
    errors: list[str] = field(default_factory=list)

    @property
    def filtered(self) -> bool:
        return bool(self.q or self.tags or self.input_mode or self.output_mode or self.schema)

    def params(self) -> list[tuple[str, str]]:
        """The filters as query parameters, in a stable order (no cursor)."""
        out: list[tuple[str, str]] = []
        if self.q:
            out.append(("q", self.q))
        out.extend(("tag", tag) for tag in self.tags)
        for name in ("input_mode", "output_mode", "schema"):
            value = getattr(self, name)
            if value:
                out.append((name, value))
        return out

    def url(
        self, *, drop: tuple[str, str] | None = None, add: tuple[str, str] | None = None
    ) -> str:
        params = [p for p in self.params() if p != drop]
        if add is not None:
            # A single-valued filter is replaced; a tag is added to the others.
            if add[0] != "tag":
                params = [p for p in params if p[0] != add[0]]
            if add not in params:
                params.append(add)
        return "/?" + urlencode(params) if params else "/"


def parse_search(request: HttpRequest) -> tuple[Search, AgentSearch | None]:
    """The form's text and, when it is well formed, the shared search it stands for (the
    parameters are read by the same strict rules as the API; errors are shown on the page)."""
    search = Search()
    get = request.GET
    search.q = " ".join(get.get("q", "").split())
    seen: set[str] = set()
    for tag in get.getlist("tag"):
        tag = " ".join(tag.split())
        if tag and tag.lower() not in seen:
            seen.add(tag.lower())
            search.tags.append(tag)
    search.input_mode = get.get("input_mode", "").strip()
    search.output_mode = get.get("output_mode", "").strip()
    search.schema = get.get("schema", "").strip()
    search.cursor = get.get("cursor", "").strip()
    try:
        query = Query(get, CATALOGUE_PARAMETERS)
        parsed = AgentSearch.parse(query)
        if search.cursor:
            paging.decode(AGENTS.scope, search.cursor)
    except ProblemError as problem:
        search.errors.append(_sentence(problem))
        return search, None
    return search, parsed


def _sentence(problem: ProblemError) -> str:
    if problem.errors and problem.errors[0]["pointer"] == "#/cursor":
        return "The page link is malformed; start again from the first page."
    detail = problem.detail
    return detail if detail.endswith(".") else detail + "."


@dataclass
class Page:
    agents: list[Any]
    next_url: str | None
    previous_url: str | None


def _row(summary: dict[str, Any]) -> SimpleNamespace:
    """A result row for the template, from the agent's stored summary."""
    skills = summary.get("skills") or []
    tags: list[str] = []
    for skill in skills:
        for tag in skill.get("tags") or []:
            if isinstance(tag, str) and tag not in tags:
                tags.append(tag)
    provider = summary.get("provider") or {}
    return SimpleNamespace(
        pk=summary["id"],
        url=summary["url"],
        name=summary["name"],
        description=summary["description"],
        version=summary["version"],
        provider_organization=provider.get("organization", ""),
        signature_status=summary["signature_status"],
        valid=(summary.get("validation") or {}).get("valid"),
        health=summary["health"],
        moderation=summary["moderation"],
        catalogue_skills=[s.get("name") or s.get("id") for s in skills[:6]],
        catalogue_more_skills=max(0, len(skills) - 6),
        catalogue_tags=tags[:8],
    )


def _page(agents: QuerySet[Agent], search: Search) -> Page:
    """Keyset pagination on (created_at, id), newest first: no COUNT, no OFFSET."""
    texts, last = documents.page_of_summaries(
        AGENTS.apply(agents, search.cursor), keys=AGENTS.fields, limit=PAGE_SIZE
    )
    rows = [_row(json.loads(text)) for text in texts]
    next_url = None
    if last is not None:
        next_url = "/?" + urlencode([*search.params(), ("cursor", AGENTS.next_cursor(last))])
    # Forward-only cursors: the way back is the first page.
    previous_url = search.url() if search.cursor else None
    return Page(agents=rows, next_url=next_url, previous_url=previous_url)


# --- facets ----------------------------------------------------------------------------------


def facets() -> dict[str, list[dict[str, Any]]]:
    """Top tags, modes and schemas over public agents, from the maintained counts, cached for
    a short while (the same for every reader: the counts are over public agents only)."""
    try:
        cached = cache.get(FACET_CACHE_KEY)
    except Exception:  # a cache outage must not take the catalogue down
        cached = None
    if cached is not None:
        return cached
    result = _count_facets()
    try:
        cache.set(FACET_CACHE_KEY, result, FACET_CACHE_SECONDS)
    except Exception:
        pass
    return result


def _count_facets() -> dict[str, list[dict[str, Any]]]:

    def values(rows: list[dict[str, Any]], key: str) -> list[dict[str, Any]]:
        return [{"value": row[key], "agents": row["agents"]} for row in rows]

    return {
        "tags": values(reads_facets.top(FacetCount.Kind.TAG, limit=FACET_LIMIT), "tag"),
        "schemas": values(reads_facets.top(FacetCount.Kind.SCHEMA, limit=FACET_LIMIT), "schema"),
        "input_modes": values(
            reads_facets.top(FacetCount.Kind.MODE, direction="input", limit=FACET_LIMIT),
            "media_type",
        ),
        "output_modes": values(
            reads_facets.top(FacetCount.Kind.MODE, direction="output", limit=FACET_LIMIT),
            "media_type",
        ),
    }


def _facet_links(search: Search, found: dict[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    groups = [
        ("Tags", "tag", "tags"),
        ("Input modes", "input_mode", "input_modes"),
        ("Output modes", "output_mode", "output_modes"),
        ("Schemas", "schema", "schemas"),
    ]
    out = []
    for title, param, key in groups:
        items = []
        for row in found.get(key, []):
            value = row["value"]
            active = (
                value.lower() in {t.lower() for t in search.tags}
                if param == "tag"
                else getattr(search, param) == value
            )
            url = search.url(drop=(param, value)) if active else search.url(add=(param, value))
            items.append({"value": value, "agents": row["agents"], "url": url, "active": active})
        if items:
            out.append({"title": title, "param": param, "items": items})
    return out


def _active_filters(search: Search) -> list[dict[str, str]]:
    labels = {
        "q": "text",
        "tag": "tag",
        "input_mode": "input",
        "output_mode": "output",
        "schema": "schema",
    }
    return [
        {"label": labels[name], "value": value, "remove_url": search.url(drop=(name, value))}
        for name, value in search.params()
    ]


# --- views -----------------------------------------------------------------------------------


@require_safe
def home(request: HttpRequest) -> HttpResponse:
    search, parsed = parse_search(request)
    page = Page(agents=[], next_url=None, previous_url=None)
    featured: list[Agent] = []
    if parsed is not None:
        viewer = Viewer.of(request.user)
        page = _page(parsed.apply(gate.agents(viewer)), search)
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

    defaults = list(
        Mode.objects.filter(agent=agent, skill__isnull=True)
        .only("direction", "media_type", "essence", "schema")
        .order_by("direction", "id")
    )
    schemas = _schemas(agent)
    base_url = request.build_absolute_uri("/")
    page_url = request.build_absolute_uri(reverse("catalogue-agent", args=[agent.pk]))
    snippets = embed_snippets(agent, base_url, link_url=page_url)
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
    }
    return _secure(render(request, "catalogue/agent.html", context))
