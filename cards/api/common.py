"""Pieces every read view of the API shares: JSON answers, the reader, OpenAPI parameters."""

from __future__ import annotations

from typing import Any

from django.http import HttpResponse
from drf_spectacular.utils import OpenApiParameter, inline_serializer
from rest_framework import serializers
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request

from cards.reads import paging
from cards.reads.gate import Viewer
from cards.reads.params import LIMIT_DEFAULT, LIMIT_MAX

_renderer = JSONRenderer()
JSON = "application/json"


def json_response(text: str, status: int = 200) -> HttpResponse:
    return HttpResponse(text.encode("utf-8"), status=status, content_type=JSON)


def viewer_of(request: Request) -> Viewer:
    return Viewer.of(request.user)


# --- OpenAPI pieces ---------------------------------------------------------------------------

CURSOR = OpenApiParameter(
    "cursor",
    str,
    description="Opaque: the `next` link of the previous page carries it.",
    pattern=paging.CURSOR_PATTERN,
)
LIMIT = OpenApiParameter(
    "limit",
    {"type": "integer", "minimum": 1, "maximum": LIMIT_MAX},
    description=f"Page size, 1 to {LIMIT_MAX} (default {LIMIT_DEFAULT}).",
)


def page_of(name: str, item: Any) -> Any:
    return inline_serializer(
        name,
        {
            "results": item(many=True)
            if isinstance(item, type)
            else serializers.ListField(child=item),
            "next": serializers.URLField(allow_null=True),
        },
    )


def page_response(data: dict[str, Any]) -> HttpResponse:
    return json_response(_renderer.render(data).decode("utf-8"))
