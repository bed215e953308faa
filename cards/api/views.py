"""HTTP views of the agents API: parse the request, call a service or selector, render."""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings
from django.db.models import QuerySet
from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    extend_schema,
)
from rest_framework import status
from rest_framework.exceptions import NotAuthenticated
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from cards import hooks, moderation, pipeline, services
from cards.api import common, reads
from cards.models import Agent
from cards.reads import documents, gate
from cards.reads.gate import Viewer
from cards.rendering.shapes import (
    AgentDetailDocumentSerializer,
)
from registry import limits, openapi
from registry.errors import ProblemError, only_members
from registry.parsers import unpaired_surrogate
from registry.throttling import SubmissionRateThrottle


def _invalid(detail: str, pointer: str, message: str) -> ProblemError:
    return ProblemError(
        status=400,
        slug="invalid-request",
        title="Invalid request",
        detail=detail,
        errors=[{"pointer": pointer, "message": message}],
    )


def _json_object(request: Request) -> dict[str, Any]:
    data = request.data
    if not isinstance(data, dict):
        raise _invalid("The request body must be a JSON object.", "", "expected a JSON object")
    return data


class AgentListCreateView(APIView):
    """Search agents (GET) and submit one by URL (POST, token)."""

    @extend_schema(
        operation_id="agents_search",
        parameters=reads.SEARCH_PARAMETERS,
        responses={200: common.page_of("AgentPage", reads.AGENT_OR_TOMBSTONE)},
    )
    def get(self, request: Request) -> HttpResponse:
        return reads.agent_list(request)

    @extend_schema(
        request=OpenApiTypes.OBJECT,
        extensions={
            **openapi.body(openapi.SUBMISSION),
            **openapi.links_to_agent("v1_agents_retrieve"),
            **openapi.problems(
                {
                    "409": "The URL is another account's non-public agent (`url-registered`), "
                    "or a deleted agent this account may not bring back (`agent-deleted`); "
                    "see docs/api.md, Ownership."
                }
            ),
        },
        responses={202: AgentDetailDocumentSerializer, 200: AgentDetailDocumentSerializer},
    )
    def post(self, request: Request) -> HttpResponse:
        body = _json_object(request)
        only_members(body, {"url"})
        if "url" not in body:
            raise _invalid("The body needs a url.", "/url", "required")
        agent, created = services.agent_submit(url=body["url"], user=request.user)
        # The same document as GET /agents/{id}, as the submitter sees it.
        text = documents.detail(Viewer.of(request.user), agent.pk, base=documents.base_of(request))
        return common.json_response(text, status=202 if created else 200)

    def get_throttles(self):  # type: ignore[no-untyped-def]
        if self.request.method == "POST":
            return [SubmissionRateThrottle()]
        return super().get_throttles()

    def get_permissions(self):  # type: ignore[no-untyped-def]
        if self.request.method == "POST":
            return [IsAuthenticated()]
        return super().get_permissions()


def visible(request: Request) -> QuerySet[Agent]:
    return gate.agents(Viewer.of(request.user))


def forbidden(detail: str) -> ProblemError:
    return ProblemError(status=403, slug="forbidden", title="Forbidden", detail=detail)


class AgentDetailView(APIView):
    """One agent; its owner (or staff) may delete it (soft: kept for history, gone from search)."""

    @extend_schema(responses={200: AgentDetailDocumentSerializer})
    def get(self, request: Request, pk: Any) -> HttpResponse:
        return reads.agent_detail(request, pk)

    @extend_schema(
        request=OpenApiTypes.OBJECT,
        extensions={
            **openapi.body(
                {
                    "type": "object",
                    "required": ["probe_messages"],
                    "properties": {
                        "probe_messages": {
                            "type": "boolean",
                            "description": "Let the live checks send this agent real messages "
                            "(docs/live-checks.md); owner or staff.",
                        }
                    },
                    "additionalProperties": False,
                }
            ),
        },
        responses={200: AgentDetailDocumentSerializer},
    )
    def patch(self, request: Request, pk: Any) -> HttpResponse:
        if not request.user or not request.user.is_authenticated:
            raise NotAuthenticated()
        instance = gate.agent(Viewer.of(request.user), pk)
        if not moderation.can_manage(request.user, instance):
            raise forbidden("Only the agent's owner or staff may change its settings.")
        body = _json_object(request)
        only_members(body, {"probe_messages"})
        value = body.get("probe_messages")
        if not isinstance(value, bool):
            raise _invalid(
                "probe_messages must be true or false.", "/probe_messages", "expected a boolean"
            )
        if value != instance.probe_messages:
            if value:  # messages reach its endpoints: their origins need a proof (issue 44)
                hooks.guard(request.user, instance, "probe_messages-on")
            moderation.agent_probe_messages(agent=instance, enabled=value, actor=request.user)
        text = documents.detail(
            Viewer.of(request.user), instance.pk, base=documents.base_of(request)
        )
        return common.json_response(text)

    @extend_schema(responses={204: None})
    def delete(self, request: Request, pk: Any) -> Response:
        instance = gate.agent(Viewer.of(request.user), pk)
        self.perform_destroy(instance)
        return Response(status=status.HTTP_204_NO_CONTENT)

    def perform_destroy(self, instance: Agent) -> None:
        if not moderation.can_manage(self.request.user, instance):
            raise forbidden("Only the agent's owner or staff may delete it.")
        moderation.agent_delete(agent=instance, actor=self.request.user)


class AgentRecrawlView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(request=None, responses={202: OpenApiTypes.OBJECT, 503: None})
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

    @extend_schema(
        request=OpenApiTypes.OBJECT,
        extensions=openapi.body(openapi.ANY_JSON, anonymous=True),
        responses={200: OpenApiTypes.OBJECT, 422: None},
        description="The body is the card itself (any JSON: what is not a card is reported as "
        'findings), or {"card": {...}, "card_url": "..."}, or {"url": "..."} to fetch it.',
    )
    def post(self, request: Request) -> HttpResponse:
        raw = request.body
        if not raw.strip():
            raise ProblemError(
                status=400,
                slug="invalid-request",
                title="Invalid request",
                detail='The body is empty: send a card, {"card": ...} or {"url": ...}.',
                errors=[{"pointer": "", "message": "required"}],
            )
        source: dict[str, Any] = {"kind": "inline"}
        card_url = ""
        try:
            body = json.loads(raw)
        except (ValueError, RecursionError):
            body = None
        where = None if body is None else unpaired_surrogate(body)
        if where is not None:
            raise ProblemError(
                status=400,
                slug="malformed-request",
                title="Malformed request",
                detail=f"JSON parse error - the string at {where or '/'} has an unpaired "
                "surrogate (\\ud800-\\udfff escape): it is not Unicode text.",
                errors=[{"pointer": where, "message": "not Unicode text"}],
            )
        if isinstance(body, dict) and set(body) == {"url"}:
            if not request.user or not request.user.is_authenticated:
                # Each one makes the registry fetch: anonymous clients get a tight limit.
                limited = limits.check(
                    request, "validate-url", settings.REGISTRY_VALIDATE_URL_ANON_RATE
                )
                if limited is not None:
                    return limited
            report, fetched = services.card_check_url(body["url"])
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
            report = pipeline.run(raw, card_url=card_url)
        return Response(report.as_dict(source))
