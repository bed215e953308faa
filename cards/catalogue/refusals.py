"""The catalogue's pages for a refused request (issue 47): a CSRF check that failed (403) and
the per-client rate limit (429), in the catalogue's look for people, with ``DEBUG`` on too.

Programs (no ``text/html`` in Accept, or a path under a program's door) keep JSON: a problem
document for the CSRF failure, the limiter's own answer for the rate limit.

- :func:`csrf_failure` is ``CSRF_FAILURE_VIEW`` (registry/settings/security.py): Django would
  answer a form sent without its token (a page open for too long, cookies blocked) with its
  own page, a technical one under ``DEBUG``.
- :func:`rate_limited_page` is the URLconf's ``handler429`` (registry/urls.py), asked by the
  limiter (registry/limits.py) before it answers JSON.
"""

from __future__ import annotations

import math

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render

from cards.catalogue.common import _secure
from cards.catalogue.not_found import for_programs, wants_a_page
from registry.errors import PROBLEM_CONTENT_TYPE, ProblemError

# Django's reasons (django.middleware.csrf), said for a person.
_CSRF_WORDS = {
    "CSRF cookie not set.": "your browser did not send the registry's cookie back (cookies "
    "may be blocked for this site)",
    "CSRF token missing.": "the form came without its security token",
    "CSRF token incorrect.": "the form's security token does not match this browser's session "
    "(the page may be older than your last sign-in)",
    "CSRF token from POST incorrect.": "the form's security token does not match this "
    "browser's session (the page may be older than your last sign-in)",
    "CSRF token from POST has incorrect length.": "the form's security token is damaged",
}


def _for_a_person(request: HttpRequest) -> bool:
    return not for_programs(request.path_info) and wants_a_page(request)


def _csrf_words(reason: str) -> str:
    if reason in _CSRF_WORDS:
        return _CSRF_WORDS[reason]
    if reason.startswith(("Origin checking failed", "Referer checking failed")):
        return "the form was sent from another site than the one that showed it"
    return "the form's security check failed"


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """``CSRF_FAILURE_VIEW``: 403, a page for people, a problem document for programs."""
    words = _csrf_words(reason)
    if not _for_a_person(request):
        problem = ProblemError(
            status=403,
            slug="forbidden",
            title="Forbidden",
            detail=f"The CSRF check failed: {words}. Send the session's CSRF token "
            "(X-CSRFToken) with a session, or use a token (Authorization: Token ...).",
        )
        return JsonResponse(problem.as_dict(), status=403, content_type=PROBLEM_CONTENT_TYPE)
    context = {"words": words, "reason": reason, "back": _same_site_referer(request)}
    return _secure(render(request, "catalogue/csrf_failure.html", context, status=403))


def _same_site_referer(request: HttpRequest) -> str | None:
    """The page the form was on, when it is one of ours (a path on this host)."""
    referer = request.headers.get("Referer", "")
    origin = request.build_absolute_uri("/")
    if referer.startswith(origin) and "\n" not in referer:
        return "/" + referer[len(origin) :].lstrip("/\\")  # never "//host": another site
    return None


def rate_limited_page(request: HttpRequest, *, wait: float, detail: str) -> HttpResponse | None:
    """``handler429``: the page for a person over the per-client limit; None for programs,
    who get the limiter's JSON."""
    if not _for_a_person(request):
        return None
    seconds = max(1, math.ceil(wait))
    context = {"seconds": seconds, "detail": detail}
    response = render(request, "catalogue/rate_limited.html", context, status=429)
    response["Retry-After"] = str(seconds)
    return _secure(response)
