"""The catalogue's page of an account's origins: ``/account/origins`` (issue 44 §3).

Add an origin, read the exact values to publish for each of the three methods, check one now
("Check now": a POST with its CSRF token), remove a claim, and see each origin's state and
history. Sign-in required (``/accounts/login/?next=...``). Every change goes through
publishers/origins.py, as the API's do; the answer is a redirect back to the page with a
message saying what happened (post, redirect, get).
"""

from __future__ import annotations

import json
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_http_methods, require_POST

from cards.catalogue.common import _secure
from publishers import origins
from publishers.models import Origin
from publishers.origin_api import verify_limited

PAGE = "/account/origins"
RECENT_EVENTS = 10
METHOD_TITLES = {
    Origin.Method.HTTP: "A file at a well-known path",
    Origin.Method.DNS: "A DNS TXT record",
    Origin.Method.JWKS: "A signature by a key of the origin's JWKS",
}
STATE_CLASSES: dict[str, str] = {
    Origin.State.VERIFIED: "good",
    Origin.State.PENDING: "warn",
    Origin.State.LAPSED: "bad",
    Origin.State.SUPERSEDED: "bad",
}


def _back(origin: Origin | None = None) -> HttpResponseRedirect:
    return HttpResponseRedirect(PAGE + (f"#origin-{origin.pk}" if origin is not None else ""))


def _row(origin: Origin) -> dict[str, Any]:
    ways = origins.instructions(origin)
    return {
        "origin": origin,
        "state_class": STATE_CLASSES.get(origin.state, ""),
        "ways": ways,
        "jwks_payload": json.dumps(ways["jwks"]["payload"]),
        "titles": METHOD_TITLES,
        "events": list(origin.events.order_by("-created_at", "-id")[:RECENT_EVENTS]),
    }


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def origins_page(request: HttpRequest) -> HttpResponse:
    """The account's origins (GET); add one (POST ``origin``)."""
    if request.method == "POST":
        try:
            origin, created = origins.claimed(request.user, request.POST.get("origin", ""))
        except origins.OriginRefused as exc:
            messages.error(request, f"That origin cannot be added: {exc}")
            return _back()
        if created:
            messages.success(request, f"Added {origin.origin}: publish one of the values below.")
        else:
            messages.info(request, f"{origin.origin} was already on your list.")
        return _back(origin)
    rows = [
        _row(o) for o in Origin.objects.filter(account_id=request.user.pk).order_by("origin", "id")
    ]
    return _secure(render(request, "publishers/origins.html", {"rows": rows}))


@login_required
@require_POST
def verify_origin(request: HttpRequest, origin_id: int) -> HttpResponse:
    """Check now: ``method`` (and ``jws`` for the jwks method)."""
    origin = get_object_or_404(Origin, pk=origin_id, account_id=request.user.pk)
    method = request.POST.get("method", "")
    if method not in origins.METHODS:
        messages.error(request, "Choose a method: http, dns or jwks.")
        return _back(origin)
    limited = verify_limited(request)
    if limited is not None:
        messages.error(request, "Too many checks from this account for now; retry later.")
        return _back(origin)
    result = origins.verify(origin, method, jws=request.POST.get("jws", ""))
    if result.verified:
        messages.success(request, f"{origin.origin} is verified ({method}).")
    else:
        note = " This may pass by itself: try again later." if result.transient else ""
        messages.error(
            request, f"{origin.origin} is not verified ({method}): {result.error}.{note}"
        )
    return _back(origin)


@login_required
@require_POST
def remove_origin(request: HttpRequest, origin_id: int) -> HttpResponse:
    origin = get_object_or_404(Origin, pk=origin_id, account_id=request.user.pk)
    origins.remove(origin)
    messages.info(request, f"Removed {origin.origin} from your origins.")
    return _back()
