"""The badge endpoint: ``GET /badges/{id}.svg``, a cacheable SVG for READMEs and pages."""

from __future__ import annotations

import hashlib
import uuid

from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_safe

from cards.badges import label_from_query, render_badge, shown_state
from cards.models import Agent
from cards.reads import gate

SVG_CONTENT_TYPE = "image/svg+xml; charset=utf-8"
MAX_AGE_SECONDS = 300
# The SVG may be opened directly, on our origin: it can style itself and nothing else.
BADGE_CSP = "default-src 'none'; style-src 'unsafe-inline'; sandbox"


def _public_agent(ident: str) -> Agent | None:
    """The agent if anonymous readers may see it. A badge is the same for every viewer, so
    it never depends on who asks: hidden, rejected, pending and deleted agents are unknown."""
    try:
        pk = uuid.UUID(ident)
    except ValueError:
        return None
    return (
        gate.agents(gate.ANONYMOUS)
        .only(
            "pk",
            "health",
            "valid",
            "signature_status",
            "latest_snapshot",
            "live_outcome",
            "publisher_origin",
        )
        .filter(pk=pk)
        .first()
    )


def _etag_matches(header: str, etag: str) -> bool:
    # If-None-Match uses the weak comparison (RFC 9110 section 13.1.2).
    candidates = {tag.strip().removeprefix("W/") for tag in header.split(",")}
    return "*" in candidates or etag in candidates


@require_safe
def badge_view(request: HttpRequest, ident: str) -> HttpResponse:
    state = shown_state(_public_agent(ident), request.GET.get("show"))
    svg = render_badge(label_from_query(request.GET.get("label")), state).encode("utf-8")
    etag = f'"{hashlib.sha256(svg).hexdigest()[:32]}"'
    # A 404 ignores preconditions (RFC 9110 section 13.2.1: they apply to 2xx answers only).
    if state.status == 200 and _etag_matches(request.headers.get("If-None-Match", ""), etag):
        response = HttpResponse(status=304)
    else:
        response = HttpResponse(svg, status=state.status, content_type=SVG_CONTENT_TYPE)
    response["ETag"] = etag
    response["Cache-Control"] = f"max-age={MAX_AGE_SECONDS}, s-maxage={MAX_AGE_SECONDS}"
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Security-Policy"] = BADGE_CSP
    response["Access-Control-Allow-Origin"] = "*"
    return response
