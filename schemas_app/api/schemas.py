"""``/schemas``: named schemas, their variants and agents, and a schema by content hash."""

from __future__ import annotations

import json
import uuid
from urllib.parse import urlencode

from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from cards.api.common import CURSOR, LIMIT, json_response, page_of
from cards.models import Agent
from cards.reads import documents, paging
from cards.reads.params import Query, invalid
from cards.rendering.shapes import AgentSummarySerializer
from registry.errors import ProblemError
from schemas_app import selectors
from schemas_app.api.common import (
    _HEX,
    DIRECTION,
    NAMES,
    SCHEMA_AGENTS,
    SchemaChangeSerializer,
    _abs,
    _agent_ref,
    _document_link,
    _invalid,
    _schema_path,
    _visible,
    document_summary,
)
from schemas_app.models import SchemaDocument


class SchemaListView(APIView):
    """Named schemas with the number of agents declaring, accepting and producing each."""

    @extend_schema(
        parameters=[
            OpenApiParameter("prefix", str, description="Only names starting with this."),
            CURSOR,
            LIMIT,
        ],
        responses={200: OpenApiTypes.OBJECT},
        operation_id="v1_schemas_list",
    )
    def get(self, request: Request) -> Response:
        query = Query(request.query_params, ["prefix", "cursor", "limit"])
        size = query.limit()
        cursor = query.one("cursor")
        after = paging.decode(NAMES.scope, cursor)[0] if cursor else None
        if after is not None and not isinstance(after, str):
            raise invalid("cursor", "is not a cursor this list issued")
        names = selectors.schema_names(
            _visible(request), prefix=query.one("prefix"), after=after, limit=size
        )
        more = len(names) > size
        names = names[:size]
        counts = selectors.schema_counts(_visible(request), names)
        results = [
            {
                "name": name,
                **counts[name],
                "link": _abs(request, _schema_path(name)),
            }
            for name in names
        ]
        next_cursor = NAMES.next_cursor([names[-1]]) if more and names else None
        return Response({"results": results, "next": paging.next_link(request, next_cursor)})


class SchemaDetailView(APIView):
    """One schema name: its variants (one per content hash), agents and compatibility history."""

    @extend_schema(responses={200: OpenApiTypes.OBJECT})
    def get(self, request: Request, name: str) -> Response:
        Query(request.query_params, [])
        agents = _visible(request)
        if not selectors.schema_known(agents, name):
            raise ProblemError(
                status=404,
                slug="not-found",
                title="Not found",
                detail=f"No agent names or declares a schema {name!r}.",
            )
        counts = selectors.schema_counts(agents, [name])[name]
        variants = []
        for variant in selectors.schema_variants(agents, name):
            variants.append(
                {
                    "sha256": variant["sha256"],
                    "schema": document_summary(request, variant["document"]),
                    "agent_count": variant["agent_count"],
                    "agents": [_agent_ref(request, a) for a in variant["agents"]],
                }
            )
        changes = selectors.schema_changes(agents, name=name)[:50]
        agents_url = _abs(request, _schema_path(name, "/agents"))
        return Response(
            {
                "name": name,
                **counts,
                "variants": variants,
                "compatibility": SchemaChangeSerializer(
                    changes, many=True, context={"request": request}
                ).data,
                "links": {
                    "agents": agents_url,
                    "accepting": agents_url + "?direction=input",
                    "producing": agents_url + "?direction=output",
                    "search": _abs(request, reverse("agent-list"))
                    + "?"
                    + urlencode({"schema": name}),
                },
            }
        )


class SchemaAgentsView(APIView):
    """Agents accepting (input) or producing (output) ``application/json;schema={name}``."""

    @extend_schema(
        parameters=[DIRECTION, CURSOR, LIMIT],
        responses={200: page_of("SchemaAgentPage", AgentSummarySerializer)},
    )
    def get(self, request: Request, name: str) -> HttpResponse:
        query = Query(request.query_params, ["direction", "cursor", "limit"])
        size = query.limit()
        direction = query.choice("direction", ["input", "output"], blank=False) or None
        agents = selectors.agents_with_schema(
            _visible(request).exclude(health=Agent.Health.GONE), name, direction
        )
        rows = SCHEMA_AGENTS.apply(agents, query.one("cursor"))
        texts, last = documents.page_of_summaries(rows, keys=SCHEMA_AGENTS.fields, limit=size)
        ids = [json.loads(text)["id"] for text in texts]
        uses = selectors.uses_by_agent(ids, name)
        joined = []
        for ident, text in zip(ids, texts, strict=True):
            use = uses.get(uuid.UUID(ident)) or {
                "sha256": None,
                "input_skills": [],
                "output_skills": [],
            }
            extra = {**use, "link": _document_link(request, use["sha256"])}
            joined.append(text[:-1] + ',"schema_use":' + json.dumps(extra) + "}")
        next_cursor = SCHEMA_AGENTS.next_cursor(last) if last is not None else None
        body = documents.results_json(
            joined, paging.next_link(request, next_cursor), base=documents.base_of(request)
        )
        return json_response(body)


class SchemaByHashView(APIView):
    """One schema by content hash, with every current use of it."""

    @extend_schema(responses={200: OpenApiTypes.OBJECT})
    def get(self, request: Request, hex: str) -> Response:
        Query(request.query_params, [])
        if not _HEX.fullmatch(hex):
            raise _invalid("the hash must be 64 hexadecimal digits", "#/hex", "invalid-parameter")
        document = get_object_or_404(SchemaDocument, sha256=hex.lower())
        uses = selectors.document_uses(_visible(request), document)
        if not uses:  # only hidden agents use it: as unknown as a hash nobody uses
            raise ProblemError(
                status=404, slug="not-found", title="Not found", detail="No such schema."
            )
        return Response(
            {
                **(document_summary(request, document) or {}),
                "content": document.content,
                "agent_count": document.uses.filter(agent__in=_visible(request))
                .values("agent")
                .distinct()
                .count(),
                "uses": [
                    {
                        "agent": _agent_ref(request, use.agent),
                        "role": use.role,
                        "source": use.source,
                        "name": use.name or None,
                        "field": use.field_name or None,
                        "skill": use.skill_id or None,
                        "pointer": use.pointer,
                    }
                    for use in uses
                ],
            }
        )
