"""``POST /api/v1/agents/{id}/probe``: the owner (or staff) asks for the live checks now."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.conf import settings
from django.shortcuts import get_object_or_404
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from cards import moderation
from cards.api.views import forbidden
from cards.reads import gate
from cards.reads.gate import Viewer
from live import proofs, tasks
from registry.errors import ProblemError


class AgentProbeView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(request=None, responses={202: OpenApiTypes.OBJECT, 429: None, 503: None})
    def post(self, request: Request, pk: Any) -> Response:
        agent = get_object_or_404(gate.agents(Viewer.of(request.user)), pk=pk)
        if not moderation.can_manage(request.user, agent):
            raise forbidden("Only the agent's owner or staff may run its live checks.")
        proofs.require(agent, "A probe of the live checks")
        cooldown = settings.REGISTRY_LIVE_PROBE_COOLDOWN_SECONDS
        last = agent.live_checked_at
        if last is not None and timezone.now() - last < timedelta(seconds=cooldown):
            wait = cooldown - (timezone.now() - last).total_seconds()
            raise ProblemError(
                status=429,
                slug="probe-too-soon",
                title="Checked moments ago",
                detail=f"The agent was checked less than {cooldown} s ago; ask again later.",
                extra={"retry_after_seconds": max(1, int(wait) + 1)},
            )
        try:
            tasks.check_agent.delay(str(agent.pk), force=True)
        except Exception:
            raise ProblemError(
                status=503,
                slug="queue-unavailable",
                title="Queue unavailable",
                detail="The task queue is unreachable; the agent is checked after its next crawl.",
            ) from None
        return Response({"id": str(agent.pk), "queued": True}, status=status.HTTP_202_ACCEPTED)
