"""HTTP views of the agents API: parse the request, call a service or selector, render."""

from __future__ import annotations

import json
from typing import Any

from django.db.models import Prefetch, QuerySet
from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import (
    OpenApiParameter,
    extend_schema,
    extend_schema_field,
    inline_serializer,
)
from rest_framework import generics, serializers, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from cards import moderation, selectors, services, trust
from cards.api.filters import AgentFilter, SkillFilter
from cards.api.serializers import (
    AgentDetailSerializer,
    AgentSummarySerializer,
    SkillWithAgentSerializer,
)
from cards.models import Agent, Skill, Snapshot
from registry.errors import ProblemError
from registry.pagination import RegistryCursorPagination
from registry.throttling import SubmissionRateThrottle
from schemas_app.selectors import changes_by_snapshot


def _json_object(request: Request) -> dict[str, Any]:
    data = request.data
    if not isinstance(data, dict):
        raise ProblemError(
            status=400,
            slug="invalid-request",
            title="Invalid request",
            detail="The request body must be a JSON object.",
            errors=[{"pointer": "", "message": "expected a JSON object"}],
        )
    return data


def _limit(request: Request, default: int = 50) -> int:
    raw = request.query_params.get("limit")
    if raw is None:
        return default
    if not raw.isdigit() or not 1 <= int(raw) <= 100:
        raise ProblemError(
            status=400,
            slug="invalid-parameter",
            title="Invalid query parameter",
            detail="limit must be an integer from 1 to 100",
            errors=[{"pointer": "#/limit", "message": "must be an integer from 1 to 100"}],
        )
    return int(raw)


class AgentListCreateView(generics.ListAPIView):
    """Search agents (GET) and submit one by URL (POST, token)."""

    serializer_class = AgentSummarySerializer
    filterset_class = AgentFilter

    def get_queryset(self) -> QuerySet[Agent]:
        skills = Prefetch(
            "skills", queryset=Skill.objects.only("agent_id", "skill_id", "name", "tags")
        )
        # A result row needs the summary only: the big JSON columns stay in the database.
        agents = (
            visible(self.request)
            .prefetch_related(skills)
            .defer("findings", "search_text", "signature", "interfaces", "last_error")
        )
        if "health" not in self.request.query_params:
            # Agents whose card has answered 404/410 for a week are hidden unless asked for.
            agents = agents.exclude(health=Agent.Health.GONE)
        return agents

    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        _limit(request, 20)
        return super().list(request, *args, **kwargs)

    @extend_schema(
        request=inline_serializer("AgentSubmission", {"url": serializers.URLField()}),
        responses={202: AgentDetailSerializer, 200: AgentDetailSerializer},
    )
    def post(self, request: Request) -> Response:
        body = _json_object(request)
        if "url" not in body:
            raise ProblemError(
                status=400,
                slug="invalid-request",
                title="Invalid request",
                detail="The body needs a url.",
                errors=[{"pointer": "/url", "message": "required"}],
            )
        agent, created = services.agent_submit(url=body["url"], user=request.user)
        agent = (
            Agent.objects.prefetch_related("skills", "extensions", "keys").get(pk=agent.pk)
            if not created
            else agent
        )
        data = AgentDetailSerializer(agent, context={"request": request}).data
        return Response(data, status=status.HTTP_202_ACCEPTED if created else status.HTTP_200_OK)

    def get_throttles(self):  # type: ignore[no-untyped-def]
        if self.request.method == "POST":
            return [SubmissionRateThrottle()]
        return super().get_throttles()

    def get_permissions(self):  # type: ignore[no-untyped-def]
        if self.request.method == "POST":
            return [IsAuthenticated()]
        return super().get_permissions()


def visible(request: Request) -> QuerySet[Agent]:
    return selectors.visible_agents(request.user)


def forbidden(detail: str) -> ProblemError:
    return ProblemError(status=403, slug="forbidden", title="Forbidden", detail=detail)


class AgentDetailView(generics.RetrieveDestroyAPIView):
    """One agent; its owner (or staff) may delete it (soft: kept for history, gone from search)."""

    serializer_class = AgentDetailSerializer

    def get_queryset(self) -> QuerySet[Agent]:
        return visible(self.request).prefetch_related("skills", "extensions", "keys")

    def perform_destroy(self, instance: Agent) -> None:
        if not moderation.can_manage(self.request.user, instance):
            raise forbidden("Only the agent's owner or staff may delete it.")
        moderation.agent_delete(agent=instance, actor=self.request.user)


class AgentCardView(APIView):
    """The latest card exactly as fetched, with a strong ETag."""

    @extend_schema(responses={(200, "application/json"): dict, 304: None})
    def get(self, request: Request, pk: Any) -> HttpResponse:
        agent = get_object_or_404(visible(request).select_related("latest_snapshot"), pk=pk)
        snapshot = agent.latest_snapshot
        if snapshot is None:
            raise ProblemError(
                status=404,
                slug="no-card",
                title="No card yet",
                detail="This agent has not been fetched successfully yet.",
            )
        etag = f'"{snapshot.sha256}"'
        candidates = [t.strip() for t in request.headers.get("If-None-Match", "").split(",")]
        if etag in candidates or "*" in candidates:
            response = HttpResponse(status=304)
        else:
            # Served as JSON whatever the origin said, never as HTML: these bytes are untrusted.
            content_type = (
                "application/json" if snapshot.data is not None else "application/octet-stream"
            )
            response = HttpResponse(bytes(snapshot.raw), content_type=content_type)
        response["ETag"] = etag
        response["X-Content-Type-Options"] = "nosniff"
        response["Content-Security-Policy"] = "default-src 'none'; sandbox"
        response["Cache-Control"] = "no-cache"
        return response


class SnapshotPagination(RegistryCursorPagination):
    ordering = ("-fetched_at", "-id")


class SnapshotSerializer(serializers.ModelSerializer):
    counts = serializers.SerializerMethodField()
    schema_changes = serializers.SerializerMethodField()
    signature = serializers.SerializerMethodField()
    events = serializers.SerializerMethodField()

    class Meta:
        model = Snapshot
        fields = [
            "sha256",
            "fetched_at",
            "card_url",
            "content_type",
            "shape",
            "counts",
            "changes",
            "schema_changes",
            "signature",
            "events",
        ]

    def get_counts(self, snapshot: Snapshot) -> dict[str, int]:
        tally = {"error": 0, "warning": 0, "info": 0}
        for finding in snapshot.findings:
            severity = finding.get("severity") if isinstance(finding, dict) else None
            if severity in tally:
                tally[severity] += 1
        return tally

    @extend_schema_field({"type": "array", "items": {"type": "object"}})
    def get_schema_changes(self, snapshot: Snapshot) -> list[dict[str, Any]]:
        """Compatibility verdicts of the named schemas this snapshot changed (schemas_app)."""
        return self.context.get("schema_changes", {}).get(snapshot.pk, [])

    @extend_schema_field({"type": "object", "additionalProperties": True})
    def get_signature(self, snapshot: Snapshot) -> dict[str, Any]:
        report = snapshot.signature or {}
        return {"status": report.get("status"), "thumbprints": report.get("thumbprints", [])}

    @extend_schema_field({"type": "array", "items": {"type": "object"}})
    def get_events(self, snapshot: Snapshot) -> list[dict[str, Any]]:
        return [
            {"kind": event.kind, "detail": event.detail, "at": event.created_at.isoformat()}
            for event in snapshot.events.all()
        ]


class AgentHistoryView(generics.ListAPIView):
    serializer_class = SnapshotSerializer
    pagination_class = SnapshotPagination

    def get_queryset(self) -> QuerySet[Snapshot]:
        if getattr(self, "swagger_fake_view", False):  # schema generation has no pk
            return Snapshot.objects.none()
        agent = get_object_or_404(visible(self.request), pk=self.kwargs["pk"])
        return (
            Snapshot.objects.filter(agent=agent)
            .defer("raw", "data", "card")
            .prefetch_related("events")
        )

    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        page = self.paginate_queryset(self.get_queryset()) or []
        context = self.get_serializer_context()
        context["schema_changes"] = changes_by_snapshot([snapshot.pk for snapshot in page])
        data = SnapshotSerializer(page, many=True, context=context).data
        return self.get_paginated_response(data)


class AgentRecrawlView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(request=None, responses={202: dict})
    def post(self, request: Request, pk: Any) -> Response:
        agent = get_object_or_404(visible(request), pk=pk)
        if not moderation.can_manage(request.user, agent):
            raise forbidden("Only the agent's owner or staff may ask for a re-crawl.")
        queued = services.enqueue_crawl(agent.pk)
        if not queued:
            raise ProblemError(
                status=503,
                slug="queue-unavailable",
                title="Queue unavailable",
                detail="The task queue is unreachable; the agent stays due and is crawled later.",
            )
        return Response({"id": str(agent.pk), "queued": True}, status=status.HTTP_202_ACCEPTED)


class ValidateView(APIView):
    """Validate a card given inline, or fetched by ``{"url": ...}``; nothing is stored."""

    permission_classes: list[Any] = []

    @extend_schema(request=dict, responses={200: dict})
    def post(self, request: Request) -> Response:
        raw = request.body
        source: dict[str, Any] = {"kind": "inline"}
        card_url = ""
        try:
            body = json.loads(raw)
        except (ValueError, RecursionError):
            body = None
        if isinstance(body, dict) and set(body) == {"url"}:
            report, fetched = services.card_check_url(body["url"])
            card_url = fetched.url
            source = {
                "kind": "url",
                "url": body["url"],
                "fetched_url": fetched.url,
                "status": fetched.status,
                "content_type": fetched.content_type,
            }
        else:
            wrapped = (
                isinstance(body, dict) and "card" in body and set(body) <= {"card", "card_url"}
            )
            if wrapped and isinstance(body["card"], dict):
                raw = json.dumps(body["card"], ensure_ascii=False).encode("utf-8")
                if "card_url" in body:
                    # Keys are bound to the origin the card is said to be served from.
                    card_url = services.submitted_url_check(body["card_url"])
                    source["card_url"] = card_url
            report = services.card_check(raw=raw)
        signature = trust.signature_check(report.parsed, card_url=card_url)
        return Response(
            {
                "source": source,
                "shape": report.parsed.shape,
                "validation": report.validation(),
                "signature": signature.as_dict() if signature else None,
                "card": report.card,
            }
        )


class SkillListView(generics.ListAPIView):
    """Skill-level search."""

    serializer_class = SkillWithAgentSerializer
    filterset_class = SkillFilter

    class pagination_class(RegistryCursorPagination):  # noqa: N801 - DRF attribute name
        ordering = ("-id",)

    def get_queryset(self) -> QuerySet[Skill]:
        return Skill.objects.select_related("agent").only(
            "skill_id",
            "name",
            "description",
            "tags",
            "examples",
            "input_modes",
            "output_modes",
            "agent__id",
            "agent__name",
        )


def _facet_params() -> list[OpenApiParameter]:
    return [
        OpenApiParameter("prefix", str, description="Only values starting with this."),
        OpenApiParameter("limit", int, description="At most this many (1-100, default 50)."),
    ]


class TagFacetView(APIView):
    @extend_schema(parameters=_facet_params(), responses={200: dict})
    def get(self, request: Request) -> Response:
        rows = selectors.tag_counts(
            prefix=request.query_params.get("prefix", ""), limit=_limit(request)
        )
        return Response({"results": rows, "next": None})


class ModeFacetView(APIView):
    @extend_schema(
        parameters=[*_facet_params(), OpenApiParameter("direction", str, enum=["input", "output"])],
        responses={200: dict},
    )
    def get(self, request: Request) -> Response:
        direction = request.query_params.get("direction")
        if direction not in (None, "input", "output"):
            raise ProblemError(
                status=400,
                slug="invalid-parameter",
                title="Invalid query parameter",
                detail="direction must be input or output",
                errors=[{"pointer": "#/direction", "message": "must be input or output"}],
            )
        rows = selectors.mode_counts(
            direction=direction,
            prefix=request.query_params.get("prefix", ""),
            limit=_limit(request),
        )
        return Response({"results": rows, "next": None})


class ExtensionFacetView(APIView):
    @extend_schema(parameters=_facet_params(), responses={200: dict})
    def get(self, request: Request) -> Response:
        rows = selectors.extension_counts(
            prefix=request.query_params.get("prefix", ""), limit=_limit(request)
        )
        return Response({"results": rows, "next": None})
