"""``GET /ard/``: what this ARD registry is and where its operations are (issue 39).

Every ARD search result's ``source`` is this URL, and the registry's own manifest lists it as
its ``application/ai-registry+json`` entry, so it must answer. ARD defines no document for a
registry's base URL; the answer is in ARD's own shape: that same catalog entry (the registry
described as an entry of its ``/.well-known/ard.json``), with the URLs of the operations, the
manifest and this API's OpenAPI document in its scalar ``metadata`` (ARD 4.2). Other methods
and errors use ARD's envelope like every operation under ``/ard/``.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse, JsonResponse

from protocols.ard.openapi import document
from protocols.ard.own_manifest import manifest
from protocols.ard.views import ard_view
from protocols.views import base_url

REGISTRY_TYPE = "application/ai-registry+json"


def index_document(base: str) -> dict[str, Any]:
    entry = next(e for e in manifest(base)["entries"] if e["type"] == REGISTRY_TYPE)
    return {
        **entry,
        "metadata": {
            "search": f"{base}/ard/search",
            "explore": f"{base}/ard/explore",
            "agents": f"{base}/ard/agents",
            "agent": f"{base}/ard/agents/{{identifier}}",
            "manifest": f"{base}/.well-known/ard.json",
            "openapi": f"{base}/ard/openapi.json",
            "documentation": f"{base}/api/docs/ard",
        },
    }


@ard_view("GET")
def ard_index(request: HttpRequest) -> HttpResponse:
    response = JsonResponse(index_document(base_url(request)))
    response["Cache-Control"] = "public, max-age=300"
    return response


@ard_view("GET")
def ard_openapi(request: HttpRequest) -> HttpResponse:
    """``GET /ard/openapi.json``: this API's OpenAPI document (protocols/ard/openapi.py)."""
    response = JsonResponse(document(base_url(request)))
    response["Cache-Control"] = "public, max-age=300"
    return response
