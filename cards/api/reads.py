"""Read endpoints of the agents API: parse strictly, ask cards.reads, send stored bytes.

No serializer runs on a read: details and search results were rendered when the agent changed
(cards/rendering/), so a detail is one row and a page is one query plus string joins.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from django.db.models import BooleanField, ExpressionWrapper, Q
from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    PolymorphicProxySerializer,
    extend_schema,
    inline_serializer,
)
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.views import APIView

from cards.api.common import CURSOR, JSON, LIMIT, json_response, viewer_of
from cards.models import Agent
from cards.reads import compiled, documents, gate, paging
from cards.reads.gate import Viewer
from cards.reads.params import Query, invalid
from cards.rendering.shapes import AgentDetailDocumentSerializer, AgentSummarySerializer
from registry.errors import ProblemError
from search import door_metrics, semantic
from search.filters import AgentSearch

AGENTS = paging.Keyset(scope="agents", order=("-created_at", "-id"))

IS_JSON = ExpressionWrapper(Q(latest_snapshot__data__isnull=False), output_field=BooleanField())


SEARCH_PARAMETERS = [
    OpenApiParameter("q", str, description="Text over name, description and skills."),
    OpenApiParameter(
        "mode",
        str,
        enum=["lexical", "semantic"],
        description="semantic (the default where the model is available): q is a need in "
        "plain words; agents are ranked by meaning and words, each with a calibrated score "
        "(0 to 100), confident and matched_skill (docs/search.md). lexical (the default "
        "without the model): q is a full-text filter, newest first.",
    ),
    OpenApiParameter(
        "min_score",
        {"type": "integer", "minimum": 0, "maximum": 100},
        description="Ranked lists only: leave out agents scoring under it (0 to 100; 50 keeps "
        "the confident ones). Default 0: every agent above the noise floor.",
    ),
    OpenApiParameter("tag", str, many=True, description="Skill tag; repeat it: all must match."),
    OpenApiParameter("skill", str, description="Skill id or name."),
    OpenApiParameter(
        "input_mode", str, description="Media type accepted, e.g. application/json;schema=X."
    ),
    OpenApiParameter("output_mode", str, description="Media type produced."),
    OpenApiParameter("schema", str, description="Schema name in a mode."),
    OpenApiParameter("extension", str, description="Extension URI."),
    OpenApiParameter("provider", str, description="Provider organization (any case)."),
    OpenApiParameter("streaming", bool),
    OpenApiParameter("valid", bool, description="No error-level finding."),
    OpenApiParameter(
        "verified",
        bool,
        description="A verified publisher: the owner proved they run the card's origin.",
    ),
    OpenApiParameter("signed", bool, description="Signed with a key bound to its origin."),
    OpenApiParameter(
        "health",
        str,
        many=True,
        enum=Agent.Health.values,
        description="Repeatable (any matches). Without it, gone agents are left out.",
    ),
    OpenApiParameter("status", str, enum=Agent.Status.values),
    OpenApiParameter(
        "live",
        str,
        many=True,
        enum=["pass", "fail", "not-checked"],
        description="The live checks' outcome (docs/live-checks.md); repeatable (any matches).",
    ),
    OpenApiParameter(
        "updated_since",
        OpenApiTypes.DATETIME,
        description="Incremental sync for mirrors: agents changed at or after this time, oldest "
        'first; agents no longer visible come as {"id", "removed": true}. Not combined with the '
        "search filters.",
    ),
    CURSOR,
    LIMIT,
]


# --- agents -----------------------------------------------------------------------------------


SYNC = paging.Keyset(scope="agents-sync", order=("updated_at", "id"))
TOMBSTONE = inline_serializer(
    "RemovedAgent",
    {"id": serializers.UUIDField(), "removed": serializers.BooleanField()},
)
# A search result, or in the change feed (updated_since) an agent no longer in the view.
AGENT_OR_TOMBSTONE = PolymorphicProxySerializer(
    component_name="AgentOrRemoved",
    serializers=[AgentSummarySerializer, TOMBSTONE],
    resource_type_field_name=None,
    many=False,
)


def agent_list(request: Request) -> HttpResponse:
    """Search agents: one query chooses the page on indexed columns; stored summaries form it."""
    query = Query(
        request.query_params,
        [*AgentSearch.PARAMETERS, "mode", "min_score", "cursor", "limit", "updated_since"],
    )
    limit = query.limit()
    default = "semantic" if semantic.semantic_available() else "lexical"
    mode = query.choice("mode", ["lexical", "semantic"], default=default, blank=False)
    min_score = _min_score(query)  # checked whatever the mode, like every parameter
    since = query.timestamp("updated_since")
    if since is not None:
        return _changes(request, query, since, limit)
    search = AgentSearch.parse(query)
    filtered = door_metrics.filtering(search)
    with door_metrics.searched("rest", search.q, ranked=mode == "semantic", filtered=filtered):
        if mode == "semantic" and search.q:
            return _ranked(request, query, search, limit, min_score)
        return _listed(request, query, search, limit)


def _listed(request: Request, query: Query, search: AgentSearch, limit: int) -> HttpResponse:
    """The list order (newest first), filtered: a page by keyset cursor."""
    viewer = viewer_of(request)
    after = AGENTS.values(query.one("cursor"))
    columns = ("pk", "summary_doc", "doc_format", *AGENTS.fields)
    if compiled.usable():
        rows = _compiled_page(search, viewer, after, limit, columns)
    else:
        agents = AGENTS.ordered(search.apply(gate.agents(viewer)), after)
        rows = list(agents.values_list(*columns)[: limit + 1])
    texts, last = documents.summaries_page(rows, limit=limit)
    cursor = AGENTS.next_cursor(last) if last is not None else None
    body = documents.results_json(
        texts, paging.next_link(request, cursor), base=documents.base_of(request)
    )
    return json_response(body)


SEMANTIC_SCOPE = "agents-semantic"
SEMANTIC_MAX_OFFSET = 1000


def _min_score(query: Query) -> int:
    text = query.one("min_score")
    if not text:
        return 0
    if not (text.isascii() and text.isdigit()) or len(text) > 3 or int(text) > 100:
        raise invalid("min_score", "must be an integer from 0 to 100")
    return int(text)


def _ranked(
    request: Request, query: Query, search: AgentSearch, limit: int, min_score: int
) -> HttpResponse:
    """``mode=semantic``: the filters narrow, ``q`` ranks (search.semantic); pages by
    offset, in a signed cursor."""
    offset = paging.cursor_offset(SEMANTIC_SCOPE, query.one("cursor"))
    agents = replace(search, q="").apply(gate.agents(viewer_of(request)))
    found = semantic.rank(search.q, agents, limit=limit + 1, offset=offset, min_score=min_score)
    more = len(found) > limit and offset + limit < SEMANTIC_MAX_OFFSET
    texts = [match.explained(text) for text, match in documents.ranked_documents(found[:limit])]
    next_cursor = paging.offset_cursor(SEMANTIC_SCOPE, offset + limit) if more else None

    body = documents.results_json(
        texts, paging.next_link(request, next_cursor), base=documents.base_of(request)
    )
    return json_response(body)


def _compiled_page(
    search: AgentSearch,
    viewer: Viewer,
    after: list[Any] | None,
    limit: int,
    columns: tuple[str, ...],
) -> list[tuple[Any, ...]]:
    """The page's rows, by SQL compiled once per shape of search (cards/reads/compiled.py)."""
    sentinels = compiled.Sentinels()
    stand_in = search.with_sentinels(sentinels)
    reader = Viewer(
        user_id=None if viewer.user_id is None else sentinels.number(viewer.user_id),
        staff=viewer.staff,
    )
    keys = None if after is None else [sentinels.when(after[0]), sentinels.ident(after[1])]
    shape = ("agents", search.shape(), viewer.staff, viewer.user_id is None, after is None, limit)

    def build() -> Any:
        agents = AGENTS.ordered(stand_in.apply(gate.agents(reader)), keys)
        return agents.values_list(*columns)[: limit + 1]

    return compiled.fetch(shape, build, sentinels)


def _changes(request: Request, query: Query, since: Any, limit: int) -> HttpResponse:
    """Incremental sync: agents changed since a time, oldest change first. Agents the reader
    may no longer see (deleted, hidden, rejected), or that no longer match the search filters
    given with it, come as ``{"id", "removed": true}``: a mirror of a filtered view drops them."""
    search = AgentSearch.parse(query)
    viewer = viewer_of(request)
    rows = SYNC.apply(gate.changes(viewer, since), query.one("cursor"))
    found = list(
        rows.values_list("pk", "visible", "summary_doc", "doc_format", "updated_at")[: limit + 1]
    )
    more = len(found) > limit
    found = found[:limit]
    matching: set[Any] = set()
    if any(query.present(name) for name in AgentSearch.PARAMETERS):
        ids = [row[0] for row in found if row[1]]
        matching = set(
            search.apply(gate.agents(viewer)).filter(pk__in=ids).values_list("pk", flat=True)
        )
        found = [(pk, seen and pk in matching, *rest) for pk, seen, *rest in found]
    visible = {pk: (doc, fmt) for pk, seen, doc, fmt, _ in found if seen}
    docs = dict(zip(visible, documents.summaries(list(visible), visible), strict=True))
    texts = [
        docs[pk] if seen else json.dumps({"id": str(pk), "removed": True})
        for pk, seen, _doc, _fmt, _at in found
    ]
    last = [found[-1][4], found[-1][0]] if more and found else None
    cursor = SYNC.next_cursor(last) if last is not None else None
    body = documents.results_json(
        texts, paging.next_link(request, cursor), base=documents.base_of(request)
    )
    return json_response(body)


def agent_detail(request: Request, pk: Any) -> HttpResponse:
    Query(request.query_params, [])
    text = documents.detail(viewer_of(request), pk, base=documents.base_of(request))
    return json_response(text)


DETAIL_SCHEMA = extend_schema(responses={200: AgentDetailDocumentSerializer})


class AgentCardView(APIView):
    """The latest card exactly as fetched, with a strong ETag."""

    @extend_schema(responses={(200, "application/json"): OpenApiTypes.OBJECT, 304: None})
    def get(self, request: Request, pk: Any) -> HttpResponse:
        Query(request.query_params, [])
        row = gate.one_row(
            viewer_of(request),
            pk,
            "latest_snapshot__sha256",
            "latest_snapshot__raw",
            "is_json",
            is_json=IS_JSON,
        )
        if row is None:
            raise gate.not_found()
        sha256, raw, is_json = row
        if sha256 is None:
            raise ProblemError(
                status=409,
                slug="no-card",
                title="No card yet",
                detail="This agent has not been fetched successfully yet.",
            )
        etag = f'"{sha256}"'
        candidates = [t.strip() for t in request.headers.get("If-None-Match", "").split(",")]
        if etag in candidates or "*" in candidates:
            response = HttpResponse(status=304)
        else:
            # Served as JSON whatever the origin said, never as HTML: these bytes are untrusted.
            content_type = JSON if is_json else "application/octet-stream"
            response = HttpResponse(bytes(raw), content_type=content_type)
        response["ETag"] = etag
        response["X-Content-Type-Options"] = "nosniff"
        response["Content-Security-Policy"] = "default-src 'none'; sandbox"
        response["Cache-Control"] = "no-cache"
        return response
