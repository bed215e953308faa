"""The catalogue's own 404 page, for people, in every mode (issue 39).

Django answers an unmatched URL with its own pages: with ``DEBUG`` on (``make run``) a
technical page listing every URL pattern, otherwise whatever ``handler404`` says. Programs get
their door's error shape (``registry.errors.not_found_view``: problem+json, ARD's envelope,
JSON-RPC); a person (a browser) who mistypes a catalogue address gets this page, the same with
``DEBUG`` on or off. A path under ``/agents/`` that is not an id is routed here explicitly (a
catch-all after ``agents/<uuid:pk>``), since with ``DEBUG`` on ``handler404`` is never asked.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from cards.catalogue.common import _secure
from registry.errors import not_found_view

# Paths whose readers are programs: they keep their door's JSON error shape.
PROGRAM_PREFIXES = (
    "/api/", "/ard/", "/a2a", "/mcp", "/.well-known/", "/badges/", "/healthz", "/readyz",
)  # fmt: skip


def for_programs(path: str) -> bool:
    return path == "/api" or path == "/ard" or path.startswith(PROGRAM_PREFIXES)


def not_found_page(request: HttpRequest, *, pk: object = None) -> HttpResponse:
    """The page itself: 404, the catalogue's look, its Content-Security-Policy."""
    context = {"pk": pk, "path": request.path}
    return _secure(render(request, "catalogue/not_found.html", context, status=404))


def wants_a_page(request: HttpRequest) -> bool:
    """A browser names ``text/html`` in its Accept header; curl, scanners and SDKs do not (a
    bare ``*/*`` is not asking for a page), so they keep the JSON every unknown path answers
    (``/metrics`` answers the same to anyone it is not for: registry/metrics_view.py)."""
    return "text/html" in request.headers.get("Accept", "")


def page_not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """``handler404``: the catalogue's page for people, the door's JSON for programs."""
    if for_programs(request.path_info) or not wants_a_page(request):
        return not_found_view(request, exception)
    return not_found_page(request)


def no_such_agent_page(request: HttpRequest, rest: str = "") -> HttpResponse:
    """``/agents/<anything that is not an id>``: the catalogue's 404, never Django's own."""
    return not_found_page(request)
