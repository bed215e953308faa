"""HTTP views of the schema API: parse the request, call a selector or a check, render.

Every error is problem+json (``registry.errors.ProblemError``); nothing here stores anything.
"""

from __future__ import annotations

import json
import re
import uuid
from typing import Any
from urllib.parse import quote, unquote, urlencode

from django.db.models import QuerySet
from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from cards.api.reads import CURSOR, LIMIT, json_response, page_of
from cards.models import Agent, Extension
from cards.reads import documents, gate, paging
from cards.reads.gate import Viewer
from cards.reads.paging import Keyset
from cards.reads.params import Query, invalid
from cards.rendering.shapes import AgentSummarySerializer
from registry.errors import ProblemError
from schemas_app import selectors
from schemas_app.checks import params_errors
from schemas_app.conf import limit as setting
from schemas_app.known_extensions import known_extension
from schemas_app.matching import match_payload
from schemas_app.models import SchemaChange, SchemaDocument
from schemas_app.payloads import DeclaredSchemas, check_message, check_payload

_HEX = re.compile(r"[0-9a-fA-F]{64}")


# --- request helpers -----------------------------------------------------------------------


def _invalid(detail: str, pointer: str, slug: str = "invalid-request") -> ProblemError:
    title = "Invalid query parameter" if slug == "invalid-parameter" else "Invalid request"
    return ProblemError(
        status=400,
        slug=slug,
        title=title,
        detail=detail,
        errors=[{"pointer": pointer, "message": detail}],
    )


def _body(request: Request) -> dict[str, Any]:
    size = len(request.body)
    cap = setting("REGISTRY_SCHEMA_PAYLOAD_MAX_BYTES")
    if size > cap:
        raise ProblemError(
            status=413,
            slug="body-too-large",
            title="Request body too large",
            detail=f"the body is {size} bytes; this endpoint takes at most {cap}",
        )
    data = request.data
    if not isinstance(data, dict):
        raise _invalid("The request body must be a JSON object.", "")
    return data


def _int_param(value: Any, name: str, pointer: str, *, default: int, query: bool) -> int:
    if value is None:
        return default
    if query:
        if not isinstance(value, str) or not value.isdigit():
            value = None
        else:
            value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 100:
        slug = "invalid-parameter" if query else "invalid-request"
        raise _invalid(f"{name} must be an integer from 1 to 100", pointer, slug)
    return value


def _visible(request: Request) -> QuerySet[Agent]:
    """The agents this reader may see: the one gate (cards.reads.gate)."""
    return gate.agents(Viewer.of(request.user))


def _agent_with_card(request: Request, pk: Any) -> Agent:
    agent = gate.agent(Viewer.of(request.user), pk)
    if agent.latest_snapshot_id is None:
        raise ProblemError(
            status=404,
            slug="no-card",
            title="No card yet",
            detail="This agent has not been fetched successfully yet.",
        )
    return agent


def _abs(request: Request, path: str) -> str:
    return request.build_absolute_uri(path)


def _agent_ref(request: Request, agent: Agent) -> dict[str, str]:
    return {
        "id": str(agent.pk),
        "name": agent.name,
        "link": _abs(request, reverse("agent-detail", args=[agent.pk])),
    }


def _document_link(request: Request, sha256: str | None) -> str | None:
    if not sha256:
        return None
    return _abs(request, reverse("schema-by-hash", args=[sha256]))


def _schema_path(name: str, suffix: str = "") -> str:
    # Built by hand: a name may hold characters (a newline) no route pattern reverses.
    return reverse("schema-list") + "/" + quote(name, safe="") + suffix


NAMES = Keyset(scope="schema-names", order=("name",))
SCHEMA_AGENTS = Keyset(scope="schema-agents", order=("-created_at", "-id"))
CHANGES = Keyset(scope="schema-changes", order=("-created_at", "-id"))
EXTENSION_USES = Keyset(scope="extension-uses", order=("-id",))
DIRECTION = OpenApiParameter("direction", str, enum=["input", "output"])


# --- output shapes -----------------------------------------------------------------------------


def document_summary(request: Request, document: SchemaDocument | None) -> dict[str, Any] | None:
    if document is None:
        return None
    return {
        "sha256": document.sha256,
        "hash_algorithm": document.hash_algorithm,
        "title": document.title,
        "dialect": document.dialect,
        "draft": document.draft,
        "id": document.schema_uri,
        "types": document.types,
        "required": document.required,
        "property_names": document.property_names,
        "closed": document.closed,
        "deprecated": document.deprecated,
        "usable": document.usable,
        "size": document.size,
        "problems": document.problems,
        "link": _document_link(request, document.sha256),
    }


class SchemaChangeSerializer(serializers.ModelSerializer):
    agent = serializers.SerializerMethodField()
    snapshot = serializers.SerializerMethodField()
    previous_snapshot = serializers.SerializerMethodField()
    reasons = serializers.JSONField()
    # Plain strings: the two verdicts share one choice set, which OpenAPI would name twice.
    kind = serializers.CharField()
    verdict = serializers.CharField(help_text="compatible, breaking or unknown (STRICT policy).")
    lenient_verdict = serializers.CharField(help_text="The same under the LENIENT policy.")

    class Meta:
        model = SchemaChange
        fields = [
            "name",
            "kind",
            "direction",
            "verdict",
            "lenient_verdict",
            "semantic",
            "old_sha256",
            "new_sha256",
            "reasons",
            "agent",
            "snapshot",
            "previous_snapshot",
            "created_at",
        ]

    def get_agent(self, change: SchemaChange) -> dict[str, str]:
        return _agent_ref(self.context["request"], change.agent)

    def get_snapshot(self, change: SchemaChange) -> dict[str, Any]:
        return {"sha256": change.snapshot.sha256, "fetched_at": change.snapshot.fetched_at}

    def get_previous_snapshot(self, change: SchemaChange) -> dict[str, Any] | None:
        previous = change.previous_snapshot
        if previous is None:
            return None
        return {"sha256": previous.sha256, "fetched_at": previous.fetched_at}


# --- /schemas --------------------------------------------------------------------------------


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
        direction = query.choice("direction", ["input", "output"]) or None
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


class SchemaMatchView(APIView):
    """``{"payload": ..., "limit": n}``: the agents and skills whose input schemas accept it."""

    permission_classes: list[Any] = []

    @extend_schema(request=OpenApiTypes.OBJECT, responses={200: OpenApiTypes.OBJECT})
    def post(self, request: Request) -> Response:
        body = _body(request)
        if "payload" not in body:
            raise _invalid("The body needs a payload (any JSON value).", "/payload")
        size = _int_param(body.get("limit"), "limit", "/limit", default=20, query=False)
        result = match_payload(body["payload"], limit=size, agents=_visible(request))
        for agent in result.agents:
            agent["link"] = _abs(request, reverse("agent-detail", args=[agent["id"]]))
            for match in agent["matches"]:
                match["link"] = _document_link(request, match["sha256"])
        return Response(
            {
                "results": result.agents,
                "next": None,
                "truncated": result.truncated,
                "candidates": result.candidates,
                "accepting_schemas": result.accepted,
            }
        )

    @extend_schema(exclude=True)
    def get(self, request: Request) -> Response:
        # A schema literally named "match" is still reachable by GET.
        return SchemaDetailView().get(request, "match")


# --- /agents/{id}/... ------------------------------------------------------------------------


class CheckMessageView(APIView):
    """Seed 000 sections 2-3: what the agent must do with this A2A Message."""

    permission_classes: list[Any] = []

    @extend_schema(request=OpenApiTypes.OBJECT, responses={200: OpenApiTypes.OBJECT})
    def post(self, request: Request, pk: Any) -> Response:
        body = _body(request)
        message = body
        if "parts" not in body and isinstance(body.get("message"), dict):
            message = body["message"]  # the JSON-RPC params shape {"message": {...}}
        if not isinstance(message.get("parts"), list):
            pointer = "/parts" if message is body else "/message/parts"
            raise _invalid("An A2A Message needs a parts array.", pointer)
        agent = _agent_with_card(request, pk)
        result = check_message(message, DeclaredSchemas.of(agent))
        data = result.as_dict()
        if data["schema"] is not None:
            data["schema"]["link"] = _document_link(request, data["schema"]["sha256"])
        data["agent"] = _agent_ref(request, agent)
        return Response(data)


class ValidatePayloadView(APIView):
    """Seed 003: ``{"schema": name, "payload": ...}`` against one of the agent's schemas."""

    permission_classes: list[Any] = []

    @extend_schema(request=OpenApiTypes.OBJECT, responses={200: OpenApiTypes.OBJECT})
    def post(self, request: Request, pk: Any) -> Response:
        body = _body(request)
        errors = []
        if not isinstance(body.get("schema"), str) or not body["schema"]:
            errors.append({"pointer": "/schema", "message": "a schema name (string) is required"})
        if "payload" not in body:
            errors.append({"pointer": "/payload", "message": "required (any JSON value)"})
        if errors:
            raise ProblemError(
                status=400,
                slug="invalid-request",
                title="Invalid request",
                detail="The body needs a schema name and a payload.",
                errors=errors,
            )
        agent = _agent_with_card(request, pk)
        data = check_payload(body["schema"], body["payload"], DeclaredSchemas.of(agent))
        if data.get("schema"):
            data["schema"]["link"] = _document_link(request, data["schema"]["sha256"])
        data["agent"] = _agent_ref(request, agent)
        return Response(data)


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
