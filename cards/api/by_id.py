"""Fetch by id without DRF for the common case: an anonymous GET of ``/api/v1/agents/{id}``.

A client that knows its agent asks for it by id; that request needs one row and the stored
detail document, but DRF's dispatch (wrapping the request, authentication, permissions, content
negotiation, finalising the response) cost about a quarter of its CPU (docs/benchmarks.md,
"Fetch by id: where the CPU goes"). :func:`detail_view` answers the plain case itself with
exactly what the DRF view answers (the same bytes and headers, the 404 problem included):

- a GET or HEAD with no query string, no ``Authorization`` header and no session cookie
  (anonymous for DRF's authentication classes, so the one gate's anonymous rule applies);
- ``Accept`` absent, ``*/*`` or ``application/json`` (the answers registry.negotiation gives
  without parsing the header).

Anything else (a signed-in reader, a token, a query string DRF must refuse, another ``Accept``
that DRF answers or refuses with 406, DELETE, OPTIONS) goes to the DRF view unchanged. The
middleware (the anonymous limiter, problem+json for malformed paths, security headers) runs
either way: only the view differs.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.utils.cache import patch_vary_headers
from rest_framework.renderers import JSONRenderer

from cards.api.common import JSON, json_response
from cards.reads import documents
from cards.reads.gate import ANONYMOUS
from registry.errors import PROBLEM_CONTENT_TYPE, ProblemError
from registry.hot_reads import anonymous_json_read

_SAFE = ("GET", "HEAD")
# Set by DRF's test client (APIClient.force_authenticate) on the Django request.
_FORCED = ("_force_auth_user", "_force_auth_token")

View = Callable[..., HttpResponse]


def is_plain(request: HttpRequest) -> bool:
    """Whether DRF would treat ``request`` as an anonymous JSON read with nothing to check."""
    if request.method not in _SAFE or not anonymous_json_read(request.META):
        return False
    return not any(getattr(request, name, None) is not None for name in _FORCED)


def detail_view(drf_view: View) -> View:
    """``drf_view`` (``AgentDetailView.as_view()``) with the plain case answered first.

    The result keeps the DRF view's attributes (``cls``, ``initkwargs``, ``csrf_exempt``), so
    the OpenAPI document and the URLconf see the same endpoint as before."""
    view_class: Any = drf_view.cls  # type: ignore[attr-defined]
    if view_class.renderer_classes[0].media_type != JSON:
        return drf_view  # the short cut serves JSON only
    # What DRF's finalize_response adds to every answer of this view (Allow; Vary: Accept when
    # more than one renderer, as in DEBUG); then SessionMiddleware adds Vary: Cookie, because
    # DRF's authentication reads the session.
    instance = view_class(**drf_view.initkwargs)  # type: ignore[attr-defined]
    instance.setup(HttpRequest())  # as on a request: HEAD is answered by get()
    headers = instance.default_response_headers
    renderer = JSONRenderer()

    def finish(response: HttpResponse) -> HttpResponse:
        for name, value in headers.items():
            response[name] = value
        patch_vary_headers(response, ("Cookie",))
        return response

    @functools.wraps(drf_view)
    def view(request: HttpRequest, pk: Any) -> HttpResponse:
        if not is_plain(request):
            return drf_view(request, pk=pk)
        try:
            text = documents.detail(ANONYMOUS, pk, base=documents.base_of(request))
        except ProblemError as problem:
            body = renderer.render(problem.as_dict())
            return finish(
                HttpResponse(body, status=problem.status, content_type=PROBLEM_CONTENT_TYPE)
            )
        return finish(json_response(text))

    return view
