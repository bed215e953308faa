"""HTTP views of the schema API: parse the request, call a selector or a check, render.

Every error is problem+json (``registry.errors.ProblemError``); nothing here stores anything.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from typing import Any
from urllib.parse import quote, unquote, urlencode

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics, serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from cards.api.serializers import AgentSummarySerializer
from cards.models import Agent, Extension
from cards.selectors import visible_agents
from registry.errors import ProblemError
from registry.pagination import RegistryCursorPagination
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


def _query_limit(request: Request, default: int = 20) -> int:
    return _int_param(
        request.query_params.get("limit"), "limit", "#/limit", default=default, query=True
    )


def _direction(request: Request) -> str | None:
    direction = request.query_params.get("direction")
    if direction not in (None, "input", "output"):
        raise _invalid("direction must be input or output", "#/direction", "invalid-parameter")
    return direction


def _visible(request: Request) -> QuerySet[Agent]:
    """The agents this reader may see (moderation and deletion apply here as in /agents)."""
    return visible_agents(request.user)


def _agent_with_card(request: Request, pk: Any) -> Agent:
    agent = get_object_or_404(_visible(request), pk=pk)
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


def _encode_cursor(value: str) -> str:
    return base64.urlsafe_b64encode(json.dumps({"after": value}).encode()).decode().rstrip("=")


def _decode_cursor(text: str | None) -> str | None:
    if text is None:
        return None
    try:
        padded = text + "=" * (-len(text) % 4)
        value = json.loads(base64.urlsafe_b64decode(padded.encode("ascii")))["after"]
    except (ValueError, KeyError, TypeError, binascii.Error, UnicodeEncodeError):
        value = None
    if not isinstance(value, str):
        raise _invalid("Invalid cursor.", "#/cursor", "invalid-parameter")
    return value


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
            OpenApiParameter("limit", int, description="1-100, default 20."),
            OpenApiParameter("cursor", str, description="From the previous page's next URL."),
        ],
        responses={200: OpenApiTypes.OBJECT},
        operation_id="v1_schemas_list",
    )
    def get(self, request: Request) -> Response:
        size = _query_limit(request)
        after = _decode_cursor(request.query_params.get("cursor"))
        names = selectors.schema_names(
            _visible(request),
            prefix=request.query_params.get("prefix", ""),
            after=after,
            limit=size,
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
        next_url = None
        if more and names:
            params = request.query_params.copy()
            params["cursor"] = _encode_cursor(names[-1])
            next_url = _abs(request, request.path + "?" + params.urlencode())
        return Response({"results": results, "next": next_url})


class SchemaDetailView(APIView):
    """One schema name: its variants (one per content hash), agents and compatibility history."""

    @extend_schema(responses={200: OpenApiTypes.OBJECT})
    def get(self, request: Request, name: str) -> Response:
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


class SchemaAgentsView(generics.ListAPIView):
    """Agents accepting (input) or producing (output) ``application/json;schema={name}``."""

    serializer_class = AgentSummarySerializer

    def get_queryset(self) -> QuerySet[Agent]:
        if getattr(self, "swagger_fake_view", False):
            return Agent.objects.none()
        return selectors.agents_with_schema(
            _visible(self.request), self.kwargs["name"], _direction(self.request)
        )

    @extend_schema(
        parameters=[
            OpenApiParameter("direction", str, enum=["input", "output"]),
            OpenApiParameter("limit", int, description="1-100, default 20."),
        ]
    )
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        _query_limit(request)
        queryset = self.filter_queryset(self.get_queryset())
        page = self.paginate_queryset(queryset)
        rows = list(page) if page is not None else list(queryset)
        data = self.get_serializer(rows, many=True).data
        uses = selectors.uses_by_agent([a.pk for a in rows], kwargs["name"])
        for row, agent in zip(data, rows, strict=True):
            use = uses.get(agent.pk) or {"sha256": None, "input_skills": [], "output_skills": []}
            row["schema_use"] = {**use, "link": _document_link(request, use["sha256"])}
        return self.get_paginated_response(data)


class SchemaByHashView(APIView):
    """One schema by content hash, with every current use of it."""

    @extend_schema(responses={200: OpenApiTypes.OBJECT})
    def get(self, request: Request, hex: str) -> Response:
        if not _HEX.fullmatch(hex):
            raise _invalid("the hash must be 64 hexadecimal digits", "#/hex", "invalid-parameter")
        document = get_object_or_404(SchemaDocument, sha256=hex.lower())
        uses = selectors.document_uses(_visible(request), document)
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
        agent = get_object_or_404(_visible(request), pk=pk)
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


class ChangePagination(RegistryCursorPagination):
    ordering = ("-created_at", "-id")


class AgentSchemaChangesView(generics.ListAPIView):
    """The agent's schema compatibility history: one row per named schema that changed."""

    serializer_class = SchemaChangeSerializer
    pagination_class = ChangePagination

    def get_queryset(self) -> QuerySet[SchemaChange]:
        if getattr(self, "swagger_fake_view", False):
            return SchemaChange.objects.none()
        agents = _visible(self.request)
        agent = get_object_or_404(agents, pk=self.kwargs["pk"])
        return selectors.schema_changes(agents, agent=agent)


# --- /extensions/{uri} -----------------------------------------------------------------------

_COLLAPSED_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):/(?!/)")


class ExtensionPagination(RegistryCursorPagination):
    ordering = ("-id",)


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


class ExtensionDetailView(generics.ListAPIView):
    """The agents declaring one extension URI (URL-encode it, or give it as is)."""

    serializer_class = ExtensionUseSerializer
    pagination_class = ExtensionPagination

    def _uri(self) -> str:
        uri = _COLLAPSED_SCHEME.sub(r"\1://", self.kwargs["uri"])
        if "%" in uri and not Extension.objects.filter(uri=uri).exists():
            decoded = unquote(uri)  # encoded twice on the way (some clients and proxies do)
            if Extension.objects.filter(uri=decoded).exists() or known_extension(decoded):
                return decoded
        return uri

    def get_queryset(self) -> QuerySet[Extension]:
        if getattr(self, "swagger_fake_view", False):
            return Extension.objects.none()
        return selectors.extension_rows(_visible(self.request), self._uri())

    @extend_schema(parameters=[OpenApiParameter("limit", int, description="1-100, default 20.")])
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        _query_limit(request)
        uri = self._uri()
        known = known_extension(uri)
        queryset = self.get_queryset()
        if known is None and not queryset.exists():
            raise ProblemError(
                status=404,
                slug="not-found",
                title="Not found",
                detail=f"No agent declares the extension {uri!r}, and the registry does not "
                "know it.",
            )
        response = self.list(request, *args, **kwargs)
        response.data = {
            "uri": uri,
            "known": known.as_dict() if known else None,
            "agent_count": queryset.values("agent").distinct().count(),
            "required_by": queryset.filter(required=True).values("agent").distinct().count(),
            **response.data,
        }
        return response
