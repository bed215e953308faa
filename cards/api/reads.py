"""Read endpoints of the agents API: parse strictly, ask cards.reads, send stored bytes.

No serializer runs on a read: details and search results were rendered when the agent changed
(cards/rendering/), so a detail is one row and a page is one query plus string joins.
"""

from __future__ import annotations

import json
from typing import Any

from django.db.models import BooleanField, ExpressionWrapper, Q
from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.views import APIView

from cards import hooks
from cards.indexing import normalise_tag
from cards.models import Agent, FacetCount, Mode, Skill, Snapshot
from cards.reads import compiled, documents, facets, gate, paging
from cards.reads.gate import Viewer
from cards.reads.params import LIMIT_DEFAULT, LIMIT_MAX, Query, invalid
from cards.reads.search import AgentSearch, mode_query
from cards.rendering.shapes import AgentDetailDocumentSerializer
from registry.errors import ProblemError

AGENTS = paging.Keyset(scope="agents", order=("-created_at", "-id"))
SKILLS = paging.Keyset(scope="skills", order=("-id",))
SNAPSHOTS = paging.Keyset(scope="history", order=("-fetched_at", "-id"))

JSON = "application/json"
_renderer = JSONRenderer()
IS_JSON = ExpressionWrapper(Q(latest_snapshot__data__isnull=False), output_field=BooleanField())


def json_response(text: str, status: int = 200) -> HttpResponse:
    return HttpResponse(text.encode("utf-8"), status=status, content_type=JSON)


def viewer_of(request: Request) -> Viewer:
    return Viewer.of(request.user)


# --- OpenAPI pieces ---------------------------------------------------------------------------

CURSOR = OpenApiParameter(
    "cursor",
    str,
    description="Opaque: the `next` link of the previous page carries it.",
    pattern=paging.CURSOR_PATTERN,
)
LIMIT = OpenApiParameter(
    "limit",
    int,
    description=f"Page size, 1 to {LIMIT_MAX} (default {LIMIT_DEFAULT}).",
)


def page_of(name: str, item: Any) -> Any:
    return inline_serializer(
        name,
        {
            "results": item(many=True)
            if isinstance(item, type)
            else serializers.ListField(child=item),
            "next": serializers.URLField(allow_null=True),
        },
    )


SEARCH_PARAMETERS = [
    OpenApiParameter("q", str, description="Text over name, description and skills."),
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
    OpenApiParameter("verified", bool, description="Signed with a key bound to its origin."),
    OpenApiParameter(
        "health",
        str,
        many=True,
        enum=Agent.Health.values,
        description="Repeatable (any matches). Without it, gone agents are left out.",
    ),
    OpenApiParameter("status", str, enum=Agent.Status.values),
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


def agent_list(request: Request) -> HttpResponse:
    """Search agents: one query chooses the page on indexed columns; stored summaries form it."""
    query = Query(
        request.query_params, [*AgentSearch.PARAMETERS, "cursor", "limit", "updated_since"]
    )
    limit = query.limit()
    since = query.timestamp("updated_since")
    if since is not None:
        return _changes(request, query, since, limit)
    search = AgentSearch.parse(query)
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
    """Incremental sync: agents changed since a time, oldest change first; agents the reader
    may no longer see (deleted, hidden, rejected) come as ``{"id", "removed": true}``."""
    for name in AgentSearch.PARAMETERS:
        if query.present(name):
            raise invalid(name, "cannot be combined with updated_since")
    rows = SYNC.apply(gate.changes(viewer_of(request), since), query.one("cursor"))
    found = list(
        rows.values_list("pk", "visible", "summary_doc", "doc_format", "updated_at")[: limit + 1]
    )
    more = len(found) > limit
    found = found[:limit]
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
                status=404,
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


# --- history ----------------------------------------------------------------------------------


def _counts(findings: Any) -> dict[str, int]:
    tally = {"error": 0, "warning": 0, "info": 0}
    for finding in findings or []:
        severity = finding.get("severity") if isinstance(finding, dict) else None
        if severity in tally:
            tally[severity] += 1
    return tally


HISTORY_ITEM = inline_serializer(
    "Snapshot",
    {
        "sha256": serializers.CharField(),
        "fetched_at": serializers.DateTimeField(),
        "card_url": serializers.CharField(),
        "content_type": serializers.CharField(),
        "shape": serializers.CharField(),
        "counts": serializers.DictField(child=serializers.IntegerField()),
        "changes": serializers.DictField(),
        "schema_changes": serializers.ListField(child=serializers.DictField()),
        "signature": serializers.DictField(),
        "events": serializers.ListField(child=serializers.DictField()),
    },
)


class AgentHistoryView(APIView):
    """The snapshots of one agent's card, newest first: what changed and the schema verdicts."""

    @extend_schema(
        parameters=[CURSOR, LIMIT], responses={200: page_of("SnapshotPage", HISTORY_ITEM)}
    )
    def get(self, request: Request, pk: Any) -> HttpResponse:
        query = Query(request.query_params, ["cursor", "limit"])
        limit = query.limit()
        if not gate.agents(viewer_of(request)).filter(pk=pk).exists():
            raise gate.not_found()
        rows = SNAPSHOTS.apply(
            Snapshot.objects.filter(agent_id=pk).defer("raw", "data", "card"), query.one("cursor")
        ).prefetch_related("events")
        page = list(rows[: limit + 1])
        more = len(page) > limit
        page = page[:limit]
        ids = [snapshot.pk for snapshot in page]
        details = {name: get(ids) for name, get in hooks.snapshot_details.items()}
        results = [
            {
                "sha256": snapshot.sha256,
                "fetched_at": snapshot.fetched_at,
                "card_url": snapshot.card_url,
                "content_type": snapshot.content_type,
                "shape": snapshot.shape,
                "counts": _counts(snapshot.findings),
                "changes": snapshot.changes,
                **{name: rows.get(snapshot.pk, []) for name, rows in details.items()},
                "signature": {
                    "status": (snapshot.signature or {}).get("status"),
                    "thumbprints": (snapshot.signature or {}).get("thumbprints", []),
                },
                "events": [
                    {"kind": e.kind, "detail": e.detail, "at": e.created_at.isoformat()}
                    for e in snapshot.events.all()
                ],
            }
            for snapshot in page
        ]
        cursor = (
            SNAPSHOTS.next_cursor([page[-1].fetched_at, page[-1].pk]) if more and page else None
        )
        return page_response({"results": results, "next": paging.next_link(request, cursor)})


def page_response(data: dict[str, Any]) -> HttpResponse:
    return json_response(_renderer.render(data).decode("utf-8"))


# --- skills -----------------------------------------------------------------------------------

SKILL_ITEM = inline_serializer(
    "SkillWithAgent",
    {
        "id": serializers.CharField(),
        "name": serializers.CharField(),
        "description": serializers.CharField(),
        "tags": serializers.ListField(child=serializers.CharField()),
        "examples": serializers.ListField(child=serializers.CharField()),
        "input_modes": serializers.ListField(child=serializers.CharField()),
        "output_modes": serializers.ListField(child=serializers.CharField()),
        "agent": inline_serializer(
            "SkillAgent",
            {
                "id": serializers.UUIDField(),
                "name": serializers.CharField(),
                "link": serializers.URLField(),
            },
        ),
    },
)


class SkillListView(APIView):
    """Skill-level search over visible agents."""

    @extend_schema(
        parameters=[
            OpenApiParameter("q", str, description="Text in the skill name or description."),
            OpenApiParameter("tag", str, many=True, description="Tag; repeat it: all must match."),
            OpenApiParameter("input_mode", str),
            OpenApiParameter("output_mode", str),
            OpenApiParameter("agent", OpenApiTypes.UUID),
            CURSOR,
            LIMIT,
        ],
        responses={200: page_of("SkillPage", SKILL_ITEM)},
    )
    def get(self, request: Request) -> HttpResponse:
        query = Query(
            request.query_params,
            ["q", "tag", "input_mode", "output_mode", "agent", "cursor", "limit"],
        )
        limit = query.limit()
        skills = Skill.objects.filter(agent__in=gate.agents(viewer_of(request), include_gone=False))
        agent = query.uuid("agent")
        if agent is not None:
            skills = skills.filter(agent_id=agent)
        for word in query.one("q").split()[:10]:
            skills = skills.filter(Q(name__icontains=word) | Q(description__icontains=word))
        for tag in query.all("tag"):
            skills = skills.filter(tag_rows__tag=normalise_tag(tag))
        for name, direction in (
            ("input_mode", Mode.Direction.INPUT),
            ("output_mode", Mode.Direction.OUTPUT),
        ):
            text = query.one(name)
            if text:
                modes = mode_query(text, parameter=name).rows(direction).filter(skill__isnull=False)
                skills = skills.filter(pk__in=modes.values("skill_id"))
        rows = list(
            SKILLS.apply(skills, query.one("cursor")).values(
                "pk",
                "skill_id",
                "name",
                "description",
                "tags",
                "examples",
                "input_modes",
                "output_modes",
                "agent_id",
                "agent__name",
            )[: limit + 1]
        )
        more = len(rows) > limit
        rows = rows[:limit]
        base = documents.base_of(request)
        results = [
            {
                "id": row["skill_id"],
                "name": row["name"],
                "description": row["description"],
                "tags": row["tags"],
                "examples": row["examples"],
                "input_modes": row["input_modes"],
                "output_modes": row["output_modes"],
                "agent": {
                    "id": str(row["agent_id"]),
                    "name": row["agent__name"],
                    "link": f"{base}/api/v1/agents/{row['agent_id']}",
                },
            }
            for row in rows
        ]
        cursor = SKILLS.next_cursor([rows[-1]["pk"]]) if more and rows else None
        return page_response({"results": results, "next": paging.next_link(request, cursor)})


# --- facets -----------------------------------------------------------------------------------

TAG_FACET = inline_serializer(
    "TagFacet",
    {
        "tag": serializers.CharField(),
        "agents": serializers.IntegerField(),
        "skills": serializers.IntegerField(),
    },
)
MODE_FACET = inline_serializer(
    "ModeFacet",
    {
        "media_type": serializers.CharField(),
        "essence": serializers.CharField(),
        "schema": serializers.CharField(allow_null=True),
        "direction": serializers.ChoiceField(choices=["input", "output"]),
        "agents": serializers.IntegerField(),
    },
)
EXTENSION_FACET = inline_serializer(
    "ExtensionFacet",
    {
        "uri": serializers.CharField(),
        "agents": serializers.IntegerField(),
        "required_by": serializers.IntegerField(),
    },
)
PREFIX = OpenApiParameter("prefix", str, description="Only values starting with this.")


def _facet(request: Request, kind: str, *, directions: bool = False) -> HttpResponse:
    known = ["prefix", "cursor", "limit"] + (["direction"] if directions else [])
    query = Query(request.query_params, known)
    limit = query.limit()
    direction = query.choice("direction", ["input", "output"]) if directions else ""
    rows, last = facets.facet_page(
        kind,
        prefix=query.one("prefix"),
        direction=direction,
        cursor=query.one("cursor"),
        limit=limit,
    )
    cursor = facets.KEYSET[FacetCount.Kind(kind)].next_cursor(last) if last is not None else None
    return page_response({"results": rows, "next": paging.next_link(request, cursor)})


class TagFacetView(APIView):
    """Tags of public agents, most common first (maintained counts)."""

    @extend_schema(
        parameters=[PREFIX, CURSOR, LIMIT], responses={200: page_of("TagFacetPage", TAG_FACET)}
    )
    def get(self, request: Request) -> HttpResponse:
        return _facet(request, FacetCount.Kind.TAG)


class ModeFacetView(APIView):
    """Input and output media types of public agents, most common first."""

    @extend_schema(
        parameters=[
            PREFIX,
            OpenApiParameter("direction", str, enum=["input", "output"]),
            CURSOR,
            LIMIT,
        ],
        responses={200: page_of("ModeFacetPage", MODE_FACET)},
    )
    def get(self, request: Request) -> HttpResponse:
        return _facet(request, FacetCount.Kind.MODE, directions=True)


class ExtensionFacetView(APIView):
    """Extensions declared by public agents, most common first."""

    @extend_schema(
        parameters=[PREFIX, CURSOR, LIMIT],
        responses={200: page_of("ExtensionFacetPage", EXTENSION_FACET)},
    )
    def get(self, request: Request) -> HttpResponse:
        return _facet(request, FacetCount.Kind.EXTENSION)
