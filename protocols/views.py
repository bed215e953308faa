"""The registry's own agent card at /.well-known/agent-card.json."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, JsonResponse

from protocols.own_card import signed_card


def base_url(request: HttpRequest) -> str:
    configured = getattr(settings, "REGISTRY_BASE_URL", None)
    return configured or request.build_absolute_uri("/").rstrip("/")


def agent_card_view(request: HttpRequest) -> JsonResponse:
    response = JsonResponse(signed_card(base_url(request)))
    response["Cache-Control"] = "public, max-age=300"
    return response
