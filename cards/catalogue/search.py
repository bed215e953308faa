"""The catalogue's search: the form's parameters, pages of stored summaries, facet links."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any
from urllib.parse import urlencode

from django.core.cache import cache
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.dateparse import parse_datetime

from cards.catalogue.common import (
    FACET_CACHE_KEY,
    FACET_CACHE_SECONDS,
    FACET_LIMIT,
    PAGE_SIZE,
)
from cards.models import Agent, FacetCount
from cards.models.agents import catalogue_rank
from cards.reads import documents, paging
from cards.reads import facets as reads_facets
from cards.reads.paging import Keyset
from cards.reads.params import Query
from registry.errors import ProblemError
from registry.undecodable import query_fault
from search import semantic
from search.filters import AgentSearch

# --- search parameters -----------------------------------------------------------------------

CATALOGUE_PARAMETERS = ("q", "tag", "input_mode", "output_mode", "schema", "cursor")
# The catalogue's order (docs/catalogue.md): what people want first. Featured agents, then
# healthy agents with a verified signature, then healthy agents with a valid card, then the
# rest (not checked yet, failing, invalid); newest first within each group. Agents without a
# card come after all of these (only their owner and staff see them: cards.reads.gate).
AGENTS = Keyset(scope="catalogue", order=("catalogue_rank", "-created_at", "-id"))


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
    fault = query_fault(request.META.get("QUERY_STRING", ""))
    if fault is not None:
        # Django would read the bytes as U+FFFD and search for that: say what is wrong instead,
        # with nothing of it in the form (the API's 400 says the same, docs/catalogue.md).
        search.errors.append(f"The search could not be read: {fault.sentence()}.")
        return search, None
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
    # Ranked pages only: the weak matches (search.matches), shown collapsed after ``agents``.
    weak: list[Any] = field(default_factory=list)

    def rows(self) -> list[Any]:
        return [*self.agents, *self.weak]


def _live_outcome(live: Any) -> str:
    """The live checks' outcome a row's chip shows: "" when no run happened (the summary says
    ``not-checked`` without a time then), else pass, fail or not-checked."""
    if not isinstance(live, dict) or not isinstance(live.get("outcome"), str):
        return ""
    outcome: str = live["outcome"]
    return "" if outcome == "not-checked" and not live.get("checked_at") else outcome


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
        score=None,  # set on a ranked (semantic) page, with the two below
        matched_skill=None,
        less_likely_from_here=False,
        no_card=None,  # the sentence of an agent without a card (cards.catalogue.no_card)
        pk=summary["id"],
        url=summary["url"],
        name=summary["name"],
        description=summary["description"],
        version=summary["version"],
        provider_organization=provider.get("organization", ""),
        signature_status=summary["signature_status"],
        # Documents rendered before issue 44 have no publisher: not verified until re-rendered.
        publisher_origin=(summary.get("publisher") or {}).get("origin") or "",
        valid=(summary.get("validation") or {}).get("valid"),
        health=summary["health"]["state"],
        live_outcome=_live_outcome(summary.get("live")),
        moderation=summary["moderation"]["state"],
        status=summary["status"],
        last_error=summary["crawl"]["last_error"],
        last_crawled_at=parse_datetime(summary["crawl"]["last_crawled_at"] or ""),
        next_crawl_at=parse_datetime(summary["crawl"]["next_crawl_at"] or ""),
        catalogue_skills=[s.get("name") or s.get("id") for s in skills[:6]],
        # The summary holds the first skills; skills_total counts them all.
        catalogue_more_skills=max(0, int(summary.get("skills_total") or len(skills)) - 6),
        catalogue_tags=tags[:8],
    )


def _page(agents: QuerySet[Agent], search: Search) -> Page:
    """Keyset pagination on (rank, created_at, id): no COUNT, no OFFSET (see AGENTS)."""
    texts, last = documents.page_of_summaries(
        AGENTS.apply(agents.annotate(catalogue_rank=catalogue_rank()), search.cursor),
        keys=AGENTS.fields,
        limit=PAGE_SIZE,
    )
    rows = [_row(json.loads(text)) for text in texts]
    next_url = None
    if last is not None:
        next_url = "/?" + urlencode([*search.params(), ("cursor", AGENTS.next_cursor(last))])
    # Forward-only cursors: the way back is the first page.
    previous_url = search.url() if search.cursor else None
    return Page(agents=rows, next_url=next_url, previous_url=previous_url)


def _ranked_page(agents: QuerySet[Agent], search: Search, text: str) -> Page:
    """Agents ranked by how well they serve ``text`` (search.semantic), best first, with
    their score; pages by offset in a signed cursor."""
    try:
        offset = paging.cursor_offset(AGENTS.scope, search.cursor)
    except ProblemError:  # a cursor of the plain list: start the ranking from the top
        offset = 0
    found = semantic.rank(text, agents, limit=PAGE_SIZE + 1, offset=offset)
    more = len(found) > PAGE_SIZE
    rows, weak = [], []
    sure = True  # unsure matches are shown under a "less likely" divider, not hidden
    for text_doc, match in documents.ranked_documents(found[:PAGE_SIZE]):
        row = _row(json.loads(text_doc))
        row.score = match.score
        row.matched_skill = match.matched_skill
        if match.weak:
            weak.append(row)  # collapsed, not dropped: recall first (docs/search.md)
            continue
        row.less_likely_from_here = sure and not match.confident
        sure = sure and match.confident
        rows.append(row)
    next_url = None
    if more:
        cursor = paging.offset_cursor(AGENTS.scope, offset + PAGE_SIZE)
        next_url = "/?" + urlencode([*search.params(), ("cursor", cursor)])
    previous_url = search.url() if search.cursor else None
    return Page(agents=rows, next_url=next_url, previous_url=previous_url, weak=weak)


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
