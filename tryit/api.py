"""``POST /api/v1/agents/{id}/try``: the owner (or staff) of an opted-in agent sends one
"Try it" message. Session (with its CSRF token) or token authentication; 404 for an agent the
caller cannot see (the one gate), 403 for everyone else."""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from cards import moderation
from cards.api.views import forbidden
from cards.reads import gate
from cards.reads.gate import Viewer
from live import proofs
from registry import openapi
from registry.errors import ProblemError, only_members
from tryit.blocks import interface_of
from tryit.sending import Refusal, try_send


class AgentTryView(APIView):
    # A token or a session first (401, as on every owner-only route); then the gate (404 for
    # an agent the caller cannot see), then ownership and the opt-in (403).
    permission_classes = [IsAuthenticated]

    @extend_schema(
        request=OpenApiTypes.OBJECT,
        extensions=openapi.body(
            {
                "type": "object",
                "required": ["skill", "payload"],
                "properties": {
                    "skill": {"type": "string", "description": "The skill's id."},
                    "payload": {"description": "The data part's value (any JSON value)."},
                },
                "additionalProperties": False,
            }
        ),
        responses={200: OpenApiTypes.OBJECT},
    )
    def post(self, request: Request, pk: Any) -> Response:
        agent = gate.agent(Viewer.of(request.user), pk)
        if not moderation.can_manage(request.user, agent):
            raise forbidden("Only the agent's owner or staff may send it a message.")
        if not agent.probe_messages:
            raise ProblemError(
                status=403,
                slug="not-opted-in",
                title="Messages not enabled",
                detail="The owner has not opted in to messages (probe_messages).",
            )
        reached = interface_of(agent)
        proofs.require(agent, "Try it's Send", also=(reached.url,) if reached else ())
        body = request.data if isinstance(request.data, dict) else {}
        only_members(body, {"skill", "payload"})
        skill = body.get("skill")
        if not isinstance(skill, str) or "payload" not in body:
            raise ProblemError(
                status=400,
                slug="invalid-request",
                title="Invalid request",
                detail='The body needs "skill" (a skill id) and "payload" (a JSON value).',
            )
        try:
            result = try_send(agent=agent, skill_id=skill, payload=body["payload"])
        except Refusal as refusal:
            raise ProblemError(
                status=refusal.status,
                slug=refusal.slug,
                title="Not sent",
                detail=refusal.detail,
                errors=refusal.errors,
            ) from None
        return Response(result)
