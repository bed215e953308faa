"""``GET /metrics``: the node's Prometheus exposition, for the monitoring only.

Not public: a client whose address is not in ``REGISTRY_METRICS_ALLOW`` (CIDRs, loopback by
default) and that does not carry ``Authorization: Bearer <REGISTRY_METRICS_TOKEN>`` gets the
same 404 problem as any path that does not exist, so the door is not even seen. The address is
the one every per-client limit uses (registry/limits.py: ``X-Forwarded-For`` is believed only
from ``REGISTRY_TRUSTED_PROXIES``), so a forged header does not open it; the token is compared
in constant time. The route is left out of the OpenAPI document (a plain Django view) and of
the anonymous rate limit (registry/limits.py ``EXEMPT_PREFIXES``). Configuration:
docs/configuration.md; the series: docs/operations.md.
"""

from __future__ import annotations

import hmac

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseNotAllowed
from django.views.decorators.csrf import csrf_exempt
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4

from registry import limits
from registry.metrics_exposition import exposition


def _bearer_matches(request: HttpRequest) -> bool:
    token = settings.REGISTRY_METRICS_TOKEN
    if not token:
        return False
    words = request.META.get("HTTP_AUTHORIZATION", "").split()
    if len(words) != 2 or words[0].lower() != "bearer":
        return False
    return hmac.compare_digest(words[1].encode(), token.encode())


def allowed(request: HttpRequest) -> bool:
    """Whether this request may read the metrics (its address, or the token)."""
    if limits.address_in(limits.client_ip(request), settings.REGISTRY_METRICS_ALLOW):
        return True
    return _bearer_matches(request)


# Exempt from CSRF so that a POST, too, is answered by the access rule below (CSRF's 403 would
# tell a stranger the route exists); nothing here changes state.
@csrf_exempt
def metrics_view(request: HttpRequest) -> HttpResponse:
    # Who asks is decided first: a refused client learns nothing, not even the allowed methods.
    if not allowed(request):
        # handler404 answers, as for any path that does not exist (a page for a browser, the
        # door's JSON for a program): the refusal looks the same to every client.
        raise Http404
    if request.method not in ("GET", "HEAD"):
        return HttpResponseNotAllowed(["GET", "HEAD"])
    response = HttpResponse(exposition(), content_type=CONTENT_TYPE_PLAIN_0_0_4)
    response["Cache-Control"] = "no-store"
    return response
