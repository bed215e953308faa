"""Per-client rate limits: who the client is, how often it may come, and the 429 it gets.

One middleware (:class:`ClientRateLimitMiddleware`) limits every anonymous request by client
address, whatever the endpoint, so an endpoint added later (ARD, MCP, A2A) is covered without
anyone remembering; :func:`check` is the same limit for code that wants a scope of its own
(``POST /api/v1/validate`` by URL). Settings and defaults: docs/configuration.md.

The client is the connection's address, or, only when that address is a proxy listed in
``REGISTRY_TRUSTED_PROXIES``, the nearest address in ``X-Forwarded-For`` that is not one of
those proxies, in one canonical form (:func:`client_key`): an IPv4 address in its dotted form
(``::ffff:192.0.2.1`` is ``192.0.2.1``), an IPv6 one as its ``/64`` network
(``REGISTRY_THROTTLE_IPV6_PREFIX``), since a host usually holds a whole /64 and could take a
fresh address, and a fresh budget, for every request (issue 35.4).

Counters live in the cache (Redis), in fixed windows. Each process counts
locally and sends its hits to Redis in batches (:class:`_Counter`): a batch is at most a
twentieth of the rate (16 at most), and it is sent at once when it is full, when it is older
than :data:`SYNC_SECONDS`, or when the client nears its limit, so a busy client costs one
round trip per batch rather than one per request, and a client over its rate is stopped within
one batch per process (exactly, for rates under 40 a window). When the cache is down the limits
fail open and the log says so: a read must not fail because a counter could not be kept. A
request waits for a Redis that is away at most once per few seconds per process
(registry/redis_breaker.py); the requests after it go on at once, uncounted.
"""

from __future__ import annotations

import functools
import ipaddress
import logging
import math
import threading
import time
from collections.abc import Callable
from importlib import import_module
from typing import Any, cast

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.module_loading import import_string

from registry import metrics
from registry.errors import PROBLEM_CONTENT_TYPE, problem_type
from registry.rates import Rate
from registry.redis_breaker import Unavailable

logger = logging.getLogger(__name__)

# In the environ of a request already counted against the anonymous limit, with the seconds
# the client must wait (0.0: allowed): registry/hot_reads.py counts its requests and hands the
# ones it does not answer to Django with it. Only the server sets keys without ``HTTP_``.
ANON_COUNTED = "registry.anon_counted"

# Never limited: liveness and readiness probes, static files, the monitoring's scrapes.
EXEMPT_PREFIXES = ("/healthz", "/readyz", "/static/", "/metrics")


def client_address(request: HttpRequest) -> str:
    """The client as every per-client limit counts it (:func:`client_key` of its address):
    ``X-Forwarded-For`` is believed only from trusted proxies."""
    return client_key(client_ip(request))


def client_ip(request: HttpRequest) -> str:
    """The client's own address, before :func:`client_key` folds it into what limits count:
    the connection's, or from a trusted proxy the nearest untrusted ``X-Forwarded-For`` one
    (the metrics door checks it against its allowed networks: registry/metrics_view.py)."""
    peer = request.META.get("REMOTE_ADDR", "") or ""
    trusted = settings.REGISTRY_TRUSTED_PROXIES
    if not trusted or not address_in(peer, trusted):
        return peer
    forwarded = [part.strip() for part in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")]
    for address in reversed([part for part in forwarded if part]):
        if not address_in(address, trusted):
            return address if _is_ip(address) else peer
    return peer


def client_key(address: str) -> str:
    """One spelling per client: IPv4 as ``a.b.c.d`` (an IPv4-mapped IPv6 address folded to
    it), IPv6 as its network of ``REGISTRY_THROTTLE_IPV6_PREFIX`` bits (``2001:db8::/64``,
    whatever zeros and case it was written with); text that is no address as it is."""
    return _canonical(address, settings.REGISTRY_THROTTLE_IPV6_PREFIX)


@functools.lru_cache(maxsize=4096)  # the same few clients come again and again
def _canonical(address: str, prefix: int) -> str:
    ip = _ip(address)
    if ip is None:
        return address
    if isinstance(ip, ipaddress.IPv6Address):
        return str(ipaddress.IPv6Network((ip.packed, prefix), strict=False))
    return str(ip)


def _ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The address in ``text``, an IPv4-mapped IPv6 one as the IPv4 address it carries."""
    try:
        ip = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


def limited() -> bool:
    """Whether anonymous requests are limited at all (``REGISTRY_ANON_RATE`` is not off)."""
    rate = settings.REGISTRY_ANON_RATE
    return bool(rate) and Rate.parse(rate) is not None


def asgi_wait(scope: dict[str, Any]) -> float:
    """The anonymous per-client limit for a request that never reaches Django (``/mcp``): the
    seconds to wait, 0 to go on. The same budget as the REST API's (scope ``anon``)."""
    rate = settings.REGISTRY_ANON_RATE
    if not rate:
        return 0.0
    request = HttpRequest()
    request.META["REMOTE_ADDR"] = (scope.get("client") or ("", 0))[0] or ""
    for name, value in scope.get("headers") or []:
        if name == b"x-forwarded-for":
            request.META["HTTP_X_FORWARDED_FOR"] = value.decode("latin-1")
    return hit("anon", client_address(request), Rate.parse(rate))


def _is_ip(text: str) -> bool:
    return _ip(text) is not None


def address_in(address: str, networks: Any) -> bool:
    """Whether ``address`` is in one of ``networks`` (a proxy on a dual-stack socket is seen as
    ``::ffff:10.0.0.2``: it is 10.0.0.2)."""
    ip = _ip(address)
    return ip is not None and any(ip in network for network in networks)


clock = time.time  # the limiter's clock; tests start it at a window's edge

SYNC_SECONDS = 0.5  # local hits older than this are sent to Redis with the next request
BATCH_MAX = 16  # local hits sent together at most
_TABLE_MAX = 4096  # clients tracked per process before windows that ended are dropped


class _Counter:
    """One client's window in this process: what Redis said last, and hits not sent yet."""

    __slots__ = ("window", "known", "pending", "synced_at", "created")

    def __init__(self, window: int) -> None:
        self.window = window
        self.known = 0  # the window's count across processes, as of the last sync
        self.pending = 0  # this process's hits since then
        self.synced_at = 0.0
        self.created = False  # whether this process has seen the key in Redis this window


_counters: dict[tuple[str, str, int, int], _Counter] = {}
_counters_lock = threading.Lock()


def reset() -> None:
    """Forget the local counts (tests clear the cache between cases)."""
    with _counters_lock:
        _counters.clear()


def _batch(rate: Rate) -> int:
    return max(1, min(BATCH_MAX, rate.requests // 20))


def _send(key: str, counter: _Counter, timeout: int) -> None:
    """Add the pending hits to the shared count and learn the total (one round trip, two the
    first time a window's key is made)."""
    hits, counter.pending = counter.pending, 0
    if counter.created:
        try:
            counter.known = cache.incr(key, hits)
            return
        except ValueError:  # the key expired or was cleared
            pass
    if cache.add(key, hits, timeout=timeout):
        counter.known = hits
    else:
        counter.known = cache.incr(key, hits)
    counter.created = True


def hit(scope: str, client: str, rate: Rate | None) -> float:
    """Count one request of ``client`` in ``scope``; the seconds to wait if it is over the
    rate (0 when allowed, and when the cache cannot be reached)."""
    if rate is None:
        return 0.0
    now = clock()
    window = int(now // rate.seconds)
    slot = (scope, client, rate.requests, rate.seconds)
    with _counters_lock:
        counter = _counters.get(slot)
        if counter is None or counter.window != window:
            if len(_counters) >= _TABLE_MAX:
                for stale in [k for k, c in _counters.items() if c.window != window]:
                    del _counters[stale]
            counter = _counters[slot] = _Counter(window)
        counter.pending += 1
        batch = _batch(rate)
        due = counter.known <= rate.requests and (  # once over, no need to ask again
            counter.pending >= batch
            or now - counter.synced_at >= SYNC_SECONDS
            or counter.known + counter.pending + batch > rate.requests
        )
        if due:
            try:
                _send(f"limit:{scope}:{client}:{window}", counter, rate.seconds + 1)
            except Exception as exc:
                counter.pending = 0
                if not isinstance(exc, Unavailable):  # the breaker has said so once already
                    logger.warning(
                        "rate limit %s not applied: the cache is unreachable", scope, exc_info=True
                    )
                return 0.0
            counter.synced_at = now
        count = counter.known + counter.pending
    if count <= rate.requests:
        return 0.0
    metrics.refused(scope)
    return max(1.0, (window + 1) * rate.seconds - now)


# Paths whose protocol has its own error shape (ARD, Appendix B).
ARD_PREFIX = "/ard/"


def _page_for_people(request: HttpRequest, wait: float, detail: str) -> HttpResponse | None:
    """The URLconf's ``handler429`` (a dotted path, as Django's ``handler404``): the page a
    person gets over the limit, or None (a program: JSON). This layer renders no pages itself."""
    urlconf = getattr(request, "urlconf", None) or settings.ROOT_URLCONF
    handler = getattr(import_module(urlconf), "handler429", None)
    if handler is None:
        return None
    view = import_string(handler) if isinstance(handler, str) else handler
    page: HttpResponse | None = view(request, wait=wait, detail=detail)
    return page


def too_many(
    wait: float, detail: str, *, path: str = "", request: HttpRequest | None = None
) -> HttpResponse:
    """The 429: a page for a person (``request`` given: :func:`_page_for_people`), ARD's
    envelope under /ard/, problem+json everywhere else; ``Retry-After`` on each."""
    if request is not None:
        page = _page_for_people(request, wait, detail)
        if page is not None:
            return page
    if path.startswith(ARD_PREFIX):
        response = JsonResponse({"errorCode": "RATE_LIMIT_EXCEEDED", "message": detail}, status=429)
        response["Retry-After"] = str(math.ceil(wait))
        return response
    response = JsonResponse(
        {
            "type": problem_type("rate-limited"),
            "title": "Too many requests",
            "status": 429,
            "detail": detail,
        },
        status=429,
        content_type=PROBLEM_CONTENT_TYPE,
    )
    response["Retry-After"] = str(math.ceil(wait))
    return response


def check(request: HttpRequest, scope: str, rate_text: str) -> HttpResponse | None:
    """A 429 answer if this client is over ``rate_text`` in ``scope`` (None to go on)."""
    wait = hit(scope, client_address(request), Rate.parse(rate_text))
    if wait:
        return too_many(wait, _over(rate_text), path=request.path, request=request)
    return None


def _over(rate_text: str) -> str:
    return f"Too many requests from this client ({rate_text}); retry later."


def _user(request: HttpRequest) -> Any:
    """The signed-in user (session), or the owner of a valid key in ``Authorization``."""
    # Only with a session cookie: touching request.user reads the session, which makes every
    # answer vary on Cookie and spoils caching of public pages and badges.
    if settings.SESSION_COOKIE_NAME in request.COOKIES:
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated:
            return user
    if request.META.get("HTTP_AUTHORIZATION"):
        return _key_user(request)
    return None


def _key_user(request: HttpRequest) -> Any:
    """The active account whose key the request carries, as the API would find it: asked of
    the API's authentication classes (``REST_FRAMEWORK["DEFAULT_AUTHENTICATION_CLASSES"]``,
    by their dotted paths: an operator's key, a token an owner made), but the session's, read
    above. A key they refuse (unknown, expired, revoked) is no account: the request is counted."""
    # Lazy: DRF's settings and the apps' models load after this module.
    from rest_framework.authentication import BaseAuthentication, SessionAuthentication
    from rest_framework.exceptions import APIException
    from rest_framework.request import Request
    from rest_framework.settings import api_settings

    classes = cast(list[type[BaseAuthentication]], api_settings.DEFAULT_AUTHENTICATION_CLASSES)
    wrapped = Request(request)
    for authentication in classes:
        if issubclass(authentication, SessionAuthentication):
            continue
        try:
            found = authentication().authenticate(wrapped)
        except APIException:
            return None
        if found is not None:
            user = found[0]
            return user if user is not None and user.is_active else None
    return None


class ClientRateLimitMiddleware:
    """Anonymous requests per client address (``REGISTRY_ANON_RATE``); an account's requests
    are not limited here (submissions and imports have their own limit), nor staff."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        rate = settings.REGISTRY_ANON_RATE
        if rate and not request.path.startswith(EXEMPT_PREFIXES) and _user(request) is None:
            counted = request.META.get(ANON_COUNTED)
            if counted is None:
                limited = check(request, "anon", rate)
            elif counted:  # counted by registry/hot_reads.py, which left the answer to Django
                limited = too_many(counted, _over(rate), path=request.path, request=request)
            else:
                limited = None
            if limited is not None:
                return limited
        return self.get_response(request)
