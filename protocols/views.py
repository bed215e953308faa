"""The registry's own agent card at /.well-known/agent-card.json."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.cache import get_conditional_response, set_response_etag

from protocols.own_card import signed_card


def base_url(request: HttpRequest) -> str:
    configured = getattr(settings, "REGISTRY_BASE_URL", None)
    return configured or request.build_absolute_uri("/").rstrip("/")


def agent_card_view(request: HttpRequest) -> HttpResponse:
    response = JsonResponse(signed_card(base_url(request)))
    response["Cache-Control"] = "public, max-age=300"
    # An ETag over the bytes lets a client revalidate with If-None-Match (a 304, no body): the
    # card changes only with the signing key or the base URL (and Ed25519 signs the same
    # bytes the same way).
    set_response_etag(response)
    conditional = get_conditional_response(request, etag=response["ETag"], response=response)
    return conditional or response
