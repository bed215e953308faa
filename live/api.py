"""``POST /api/v1/agents/{id}/probe``: the owner (or staff) asks for the live checks now."""

from __future__ import annotations

import logging
import math
import time
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.shortcuts import get_object_or_404
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

logger = logging.getLogger(__name__)


def _probe_wait(agent_id: Any) -> float | None:
    """Seconds until this agent may be probed again, or None (and the probe counted now).

    The cooldown (``REGISTRY_LIVE_PROBE_COOLDOWN_SECONDS``) counts from the last probe asked
    for, not from the last run: the automatic check that follows a submission does not make
    the owner's first probe wait. One key a probe in the cache, added only where absent, so
    two probes at once do not both pass; without the cache the probe is not held back (the
    queue it needs is on the same Redis)."""
    cooldown = settings.REGISTRY_LIVE_PROBE_COOLDOWN_SECONDS
    if cooldown <= 0:
        return None
    key = f"live:probe:{agent_id}"
    now = time.time()
    try:
        if cache.add(key, now, timeout=cooldown):
            return None
        since = cache.get(key)
    except Exception:  # the cache is away: the queue answers for itself below
        logger.warning("live: the probe cooldown could not be read (cache unavailable)")
        return None
    if not isinstance(since, (int, float)):
        return float(cooldown)
    return max(0.0, cooldown - (now - since)) or None


class AgentProbeView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(request=None, responses={202: OpenApiTypes.OBJECT, 429: None, 503: None})
    def post(self, request: Request, pk: Any) -> Response:
        agent = get_object_or_404(gate.agents(Viewer.of(request.user)), pk=pk)
        if not moderation.can_manage(request.user, agent):
            raise forbidden("Only the agent's owner or staff may run its live checks.")
        proofs.require(agent, "A probe of the live checks")
        wait = _probe_wait(agent.pk)
        if wait is not None:
            cooldown = settings.REGISTRY_LIVE_PROBE_COOLDOWN_SECONDS
            raise ProblemError(
                status=429,
                slug="probe-too-soon",
                title="Probed moments ago",
                detail=f"A probe of this agent was asked for less than {cooldown} s ago; "
                "ask again later.",
                extra={"retry_after_seconds": max(1, math.ceil(wait))},
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
