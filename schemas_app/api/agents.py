"""An agent's schemas and their history, and the agents declaring an extension URI."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import unquote

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from cards.api.common import CURSOR, LIMIT, page_of
from cards.models import Extension
from cards.reads import gate, paging
from cards.reads.gate import Viewer
from cards.reads.params import Query
from registry.errors import ProblemError
from schemas_app import selectors
from schemas_app.api.common import (
    CHANGES,
    EXTENSION_USES,
    SchemaChangeSerializer,
    _agent_ref,
    _document_link,
    _visible,
)
from schemas_app.checks import params_errors
from schemas_app.known_extensions import known_extension


class AgentSchemasView(APIView):
    """Every schema the agent's current card declares or uses, and where."""

    @extend_schema(responses={200: OpenApiTypes.OBJECT})
    def get(self, request: Request, pk: Any) -> Response:
        Query(request.query_params, [])
        agent = gate.agent(Viewer.of(request.user), pk)
        results = []
        for use in selectors.agent_schema_uses(agent):
            document = use.document
            results.append(
                {
                    "role": use.role,
                    "source": use.source,
                    "name": use.name or None,
                    "field": use.field_name or None,
                    "skill": use.skill_id or None,
                    "pointer": use.pointer,
                    "sha256": use.sha256 or None,
                    "title": document.title if document else "",
                    "usable": bool(document and document.usable),
                    "link": _document_link(request, document.sha256 if document else None),
                }
            )
        return Response({"results": results, "next": None})


class AgentSchemaChangesView(APIView):
    """The agent's schema compatibility history: one row per named schema that changed."""

    @extend_schema(
        parameters=[CURSOR, LIMIT],
        responses={200: page_of("SchemaChangePage", SchemaChangeSerializer)},
    )
    def get(self, request: Request, pk: Any) -> Response:
        query = Query(request.query_params, ["cursor", "limit"])
        size = query.limit()
        agents = _visible(request)
        agent = gate.agent(Viewer.of(request.user), pk)
        rows = list(
            CHANGES.apply(selectors.schema_changes(agents, agent=agent), query.one("cursor"))[
                : size + 1
            ]
        )
        more = len(rows) > size
        rows = rows[:size]
        data = SchemaChangeSerializer(rows, many=True, context={"request": request}).data
        next_cursor = CHANGES.next_cursor([rows[-1].created_at, rows[-1].pk]) if more else None
        return Response({"results": data, "next": paging.next_link(request, next_cursor)})


# --- /extensions/{uri} -----------------------------------------------------------------------

_COLLAPSED_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):/(?!/)")


class ExtensionUseSerializer(serializers.ModelSerializer):
    agent = serializers.SerializerMethodField()
    params = serializers.JSONField(allow_null=True)
    params_errors = serializers.SerializerMethodField()

    class Meta:
        model = Extension
        fields = ["agent", "required", "description", "params", "params_errors"]

    def get_agent(self, row: Extension) -> dict[str, str]:
        return _agent_ref(self.context["request"], row.agent)

    def get_params_errors(self, row: Extension) -> list[dict[str, str]] | None:
        if row.params is None:
            return None
        return params_errors(row.uri, row.params)


class ExtensionDetailView(APIView):
    """The agents declaring one extension URI (URL-encode it, or give it as is)."""

    def _uri(self, raw: str) -> str:
        uri = _COLLAPSED_SCHEME.sub(r"\1://", raw)
        if "%" in uri and not Extension.objects.filter(uri=uri).exists():
            decoded = unquote(uri)  # encoded twice on the way (some clients and proxies do)
            if Extension.objects.filter(uri=decoded).exists() or known_extension(decoded):
                return decoded
        return uri

    @extend_schema(
        operation_id="v1_extension_uses",
        parameters=[CURSOR, LIMIT],
        responses={200: OpenApiTypes.OBJECT},
    )
    def get(self, request: Request, uri: str) -> Response:
        query = Query(request.query_params, ["cursor", "limit"])
        size = query.limit()
        uri = self._uri(uri)
        known = known_extension(uri)
        uses = selectors.extension_rows(_visible(request), uri)
        if known is None and not uses.exists():
            raise ProblemError(
                status=404,
                slug="not-found",
                title="Not found",
                detail=f"No agent declares the extension {uri!r}, and the registry does not "
                "know it.",
            )
        rows = list(EXTENSION_USES.apply(uses, query.one("cursor"))[: size + 1])
        more = len(rows) > size
        rows = rows[:size]
        next_cursor = EXTENSION_USES.next_cursor([rows[-1].pk]) if more else None
        return Response(
            {
                "uri": uri,
                "known": known.as_dict() if known else None,
                "agent_count": uses.values("agent").distinct().count(),
                "required_by": uses.filter(required=True).values("agent").distinct().count(),
                "results": ExtensionUseSerializer(
                    rows, many=True, context={"request": request}
                ).data,
                "next": paging.next_link(request, next_cursor),
            }
        )
