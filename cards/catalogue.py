"""The public catalogue: server-rendered search and agent pages (plain templates, no JavaScript).

Everything starts from :func:`cards.selectors.visible_agents`, so agents that are pending,
hidden, rejected or deleted never reach the public. Card text is untrusted: the templates rely on
autoescaping and never mark it safe, links from cards are only rendered for http(s) URLs, and
every page is sent with a Content-Security-Policy that allows no script at all.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import uuid
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode, urlsplit

from django.apps import apps
from django.core.cache import cache
from django.db.models import Count, Prefetch, Q, QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import NoReverseMatch, reverse
from django.views.decorators.http import require_safe

from cards import selectors
from cards.models import Agent, Extension, Mode, Skill, SkillTag
from registry.errors import ProblemError

PAGE_SIZE = 20
FEATURED_LIMIT = 6
FACET_LIMIT = 12
FACET_CACHE_KEY = "catalogue:facets:v1"
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


@dataclass
class Search:
    q: str = ""
    tags: list[str] = field(default_factory=list)
    input_mode: str = ""
    output_mode: str = ""
    schema: str = ""
    after: tuple[dt.datetime, uuid.UUID] | None = None
    before: tuple[dt.datetime, uuid.UUID] | None = None
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


def encode_cursor(agent: Agent) -> str:
    raw = f"{agent.created_at.isoformat()}|{agent.pk}".encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(text: str) -> tuple[dt.datetime, uuid.UUID]:
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)).decode()
        when, _, pk = raw.partition("|")
        moment = dt.datetime.fromisoformat(when)
        if moment.tzinfo is None:
            raise ValueError("naive time")
        return moment, uuid.UUID(pk)
    except (ValueError, binascii.Error, UnicodeDecodeError):
        raise ValueError("malformed page link") from None


def parse_search(request: HttpRequest) -> Search:
    search = Search()
    get = request.GET
    for name, values in get.lists():
        for value in values:
            if "\x00" in value:
                search.errors.append(f"The {name} parameter contains a NUL character.")
            elif len(value) > MAX_PARAM_LENGTH:
                search.errors.append(
                    f"The {name} parameter is longer than {MAX_PARAM_LENGTH} characters."
                )
    if search.errors:
        return search

    search.q = " ".join(get.get("q", "").split())
    seen: set[str] = set()
    for tag in get.getlist("tag"):
        tag = " ".join(tag.split())
        if tag and tag.lower() not in seen:
            seen.add(tag.lower())
            search.tags.append(tag)
    if len(search.tags) > MAX_TAGS:
        search.errors.append(f"At most {MAX_TAGS} tags can be combined.")
    search.input_mode = get.get("input_mode", "").strip()
    search.output_mode = get.get("output_mode", "").strip()
    search.schema = get.get("schema", "").strip()
    for name in ("after", "before"):
        text = get.get(name, "").strip()
        if text:
            try:
                setattr(search, name, decode_cursor(text))
            except ValueError:
                search.errors.append("The page link is malformed; start again from the first page.")
    if search.after and search.before:
        search.errors.append("A page link cannot have both after and before.")
    return search


def _filtered(agents: QuerySet[Agent], search: Search) -> QuerySet[Agent]:
    """Apply the filters; a malformed media type adds an error instead of raising."""
    if search.q:
        agents = selectors.text_filter(agents, search.q)
    for tag in search.tags:
        agents = selectors.with_tag(agents, tag)
    for name, direction in (
        ("input_mode", Mode.Direction.INPUT),
        ("output_mode", Mode.Direction.OUTPUT),
    ):
        text = getattr(search, name)
        if text:
            try:
                query = selectors.mode_query(text, parameter=name)
            except ProblemError as exc:
                search.errors.append(f"{exc.detail}.")
                continue
            agents = selectors.with_mode(agents, query, direction)
    if search.schema:
        agents = selectors.with_schema(agents, search.schema)
    return agents


@dataclass
class Page:
    agents: list[Agent]
    next_url: str | None
    previous_url: str | None


def _page(agents: QuerySet[Agent], search: Search) -> Page:
    """Keyset pagination on (created_at, id), newest first: no COUNT, no OFFSET."""
    if search.before is not None:
        when, pk = search.before
        rows = list(
            agents.filter(Q(created_at__gt=when) | Q(created_at=when, pk__gt=pk)).order_by(
                "created_at", "id"
            )[: PAGE_SIZE + 1]
        )
        has_previous = len(rows) > PAGE_SIZE
        rows = list(reversed(rows[:PAGE_SIZE]))
        has_next = True
    else:
        if search.after is not None:
            when, pk = search.after
            agents = agents.filter(Q(created_at__lt=when) | Q(created_at=when, pk__lt=pk))
        rows = list(agents.order_by("-created_at", "-id")[: PAGE_SIZE + 1])
        has_next = len(rows) > PAGE_SIZE
        rows = rows[:PAGE_SIZE]
        has_previous = search.after is not None
    base = search.params()
    next_url = previous_url = None
    if rows and has_next:
        next_url = "/?" + urlencode([*base, ("after", encode_cursor(rows[-1]))])
    if rows and has_previous:
        previous_url = "/?" + urlencode([*base, ("before", encode_cursor(rows[0]))])
    elif has_previous:
        previous_url = search.url()
    return Page(agents=rows, next_url=next_url, previous_url=previous_url)


# --- facets ----------------------------------------------------------------------------------


def facets() -> dict[str, list[dict[str, Any]]]:
    """Top tags, modes and schemas over publicly listed agents, cached for a short while.

    Counted for the anonymous view only, so a cached facet never reveals a hidden agent's tags.
    """
    try:
        cached = cache.get(FACET_CACHE_KEY)
    except Exception:  # a cache outage must not take the catalogue down
        cached = None
    if cached is not None:
        return cached
    public = Q(agent__deleted_at__isnull=True, agent__moderation__in=Agent.PUBLIC_STATES)
    gone = Q(agent__health=Agent.Health.GONE)
    tags = (
        SkillTag.objects.filter(public)
        .exclude(gone)
        .values("tag")
        .annotate(agents=Count("agent", distinct=True))
        .order_by("-agents", "tag")[:FACET_LIMIT]
    )
    modes = Mode.objects.filter(public).exclude(gone)
    result = {
        "tags": [{"value": row["tag"], "agents": row["agents"]} for row in tags],
        "schemas": [
            {"value": row["schema"], "agents": row["agents"]}
            for row in modes.filter(schema__isnull=False)
            .exclude(schema="")
            .values("schema")
            .annotate(agents=Count("agent", distinct=True))
            .order_by("-agents", "schema")[:FACET_LIMIT]
        ],
    }
    for direction in (Mode.Direction.INPUT, Mode.Direction.OUTPUT):
        result[f"{direction}_modes"] = [
            {"value": row["essence"], "agents": row["agents"]}
            for row in modes.filter(direction=direction)
            .values("essence")
            .annotate(agents=Count("agent", distinct=True))
            .order_by("-agents", "essence")[:FACET_LIMIT]
        ]
    try:
        cache.set(FACET_CACHE_KEY, result, FACET_CACHE_SECONDS)
    except Exception:
        pass
    return result


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


def _summarise_skills(agent: Agent) -> None:
    """Skill names and distinct tags for a result row (from the prefetched skills)."""
    skills = list(agent.skills.all())
    tags: list[str] = []
    for skill in skills:
        for tag in skill.tags:
            if isinstance(tag, str) and tag not in tags:
                tags.append(tag)
    agent.catalogue_skills = [s.name or s.skill_id for s in skills[:6]]  # type: ignore[attr-defined]
    agent.catalogue_more_skills = max(0, len(skills) - 6)  # type: ignore[attr-defined]
    agent.catalogue_tags = tags[:8]  # type: ignore[attr-defined]


@require_safe
def home(request: HttpRequest) -> HttpResponse:
    search = parse_search(request)
    page = Page(agents=[], next_url=None, previous_url=None)
    featured: list[Agent] = []
    if not search.errors:
        agents = selectors.visible_agents(request.user).exclude(health=Agent.Health.GONE)
        agents = _filtered(agents, search)
        if not search.errors:
            skills = Prefetch(
                "skills",
                queryset=Skill.objects.only(
                    "agent_id", "position", "skill_id", "name", "tags"
                ).order_by("agent_id", "position"),
            )
            page = _page(agents.only(*LIST_FIELDS).prefetch_related(skills), search)
            for agent in page.agents:
                _summarise_skills(agent)
            if not search.filtered and search.after is None and search.before is None:
                featured = list(
                    selectors.visible_agents(request.user)
                    .filter(moderation=Agent.Moderation.FEATURED)
                    .exclude(health=Agent.Health.GONE)
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

    if apps.is_installed("schemas_app"):
        from schemas_app.models import SchemaUse

        uses = (
            SchemaUse.objects.filter(agent=agent)
            .select_related("document")
            .only(
                "agent_id",
                "role",
                "name",
                "skill_id",
                "field_name",
                "document__sha256",
                "document__title",
                "document__draft",
                "document__usable",
            )
            .order_by("name", "id")
        )
        for use in uses:
            if use.name:
                row = row_for(use.name, use.name)
            else:
                row = row_for(f"{use.skill_id}\x00{use.field_name}", "", use.field_name)
            if use.document is not None and row["document"] is None:
                row["document"] = use.document
            if use.role not in row["roles"]:
                row["roles"].append(use.role)
            if use.skill_id and use.skill_id not in row["skills"]:
                row["skills"].append(use.skill_id)

    named = (
        Mode.objects.filter(agent=agent, schema__isnull=False)
        .exclude(schema="")
        .values_list("schema", "direction")
        .distinct()
        .order_by("schema", "direction")
    )
    for name, direction in named:
        row = row_for(name, name)
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
        selectors.visible_agents(request.user)
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

    from cards.badges import embed_snippets  # built alongside; imported when a page is shown

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
