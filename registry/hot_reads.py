"""Hot reads: the anonymous GETs asked most often, answered without walking the middleware.

A fetch by id (``GET /api/v1/agents/{id}``) serves a document rendered at write time: one
prepared statement and a byte copy. Walking Django's handler for it (fifteen middleware, the
URL resolver trying the patterns before it, the WSGI request's lazy parts) cost more CPU than
the read itself (docs/benchmarks.md, "Issue 49: the hot reads"). :class:`HotReads` wraps the
WSGI application (registry/wsgi.py, registry/rsgi.py) and, for the URL names in
``REGISTRY_HOT_READS`` (by default ``healthz`` and ``agent-detail``), answers a *plain* request
itself by calling the view the URLconf resolves that path to, with what the middleware do for
such a request done here, in the same order:

- a plain request is a GET with no query string, no body, no ``Authorization`` header, no
  session cookie and an ``Accept`` of nothing, ``*/*`` or ``application/json``: an anonymous
  reader, whom the one visibility gate's anonymous rule serves (the view applies it), and whom
  no middleware treats apart (no session, CSRF, messages or account state is read or written);
- ``SecurityMiddleware`` and ``CommonMiddleware`` run as they are (their own methods: the
  HTTPS redirect, ``ALLOWED_HOSTS``, ``PREPEND_WWW``; on the way out their headers and
  ``Content-Length``), and ``XFrameOptionsMiddleware``'s header;
- the anonymous limiter counts the request (``registry.limits.hit``, the same budget);
- the request id, its context and the access line (registry/logs/);
- the request series, every one that the two django-prometheus middleware write for such a
  request, with the same labels (registry/metrics_requests.py :class:`AnswerSeries`);
- Django's ``request_started`` and ``request_finished`` signals (the database connections'
  upkeep).

Anything else goes to Django as before: another method, a query string, a signed-in reader, a
request a middleware would answer itself (a redirect, a bad ``Host``: those are answered by
Django), the limiter's refusal and a view that raises. When a request that was counted by the
limiter goes on to Django, the count travels with it (``registry.limits.ANON_COUNTED``) and
the limiter middleware uses it instead of counting again.

The middleware list this module reproduces is :data:`REPRODUCED`; with any other
``MIDDLEWARE`` the hot reads are off, and the log says why, rather than skipping a middleware
nobody looked at. tests/test_hot_reads.py compares every hot answer with Django's own for the
same request: status, headers, body, the request series and the access line.
"""

from __future__ import annotations

import logging
import re
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, cast

from django.conf import settings
from django.core import signals
from django.core.exceptions import ImproperlyConfigured
from django.core.handlers.wsgi import WSGIRequest
from django.http import HttpResponse, parse_cookie
from django.middleware.clickjacking import XFrameOptionsMiddleware
from django.middleware.common import CommonMiddleware
from django.middleware.security import SecurityMiddleware
from django.urls import converters, get_resolver, resolve

from registry import limits
from registry.logs import access, context, follow_ups
from registry.metrics_requests import UNCOUNTED, AnswerSeries
from registry.rates import Rate

logger = logging.getLogger(__name__)

# The middleware whose effect on a plain request is reproduced here (the module's docstring).
REPRODUCED = (
    "registry.metrics_requests.PrometheusBeforeMiddleware",
    "registry.logs.middleware.RequestIdMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",  # static files only: none is a hot path
    "registry.sessions.LazySessionMiddleware",  # no session cookie: nothing read or written
    "django.middleware.common.CommonMiddleware",
    "registry.errors.ApiErrorsMiddleware",  # a hot path has no query and a valid path
    "django.middleware.csrf.CsrfViewMiddleware",  # a GET whose view uses no token
    "django.contrib.auth.middleware.AuthenticationMiddleware",  # anonymous, never read
    "allauth.account.middleware.AccountMiddleware",  # redirects /accounts/ only
    "publishers.account_pages.AccountPagePolicyMiddleware",  # /accounts/ pages only
    "registry.limits.ClientRateLimitMiddleware",
    "registry.messages.LazyMessageMiddleware",  # no message is read or added
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "registry.metrics_requests.PrometheusAfterMiddleware",
)

_PLAIN_ACCEPT = frozenset({None, "*/*", "application/json"})  # None: no Accept at all


def anonymous_json_read(meta: dict[str, Any]) -> bool:
    """Whether a request (its environ, ``request.META``) reads as an anonymous reader asking for
    JSON with nothing to check: no query string, no ``Authorization``, no session cookie, an
    ``Accept`` of nothing, ``*/*`` or ``application/json``. The one rule of the hot reads and of
    the by-id view's own short cut (cards/api/by_id.py); the method is each one's to check."""
    if (
        meta.get("QUERY_STRING")
        or "HTTP_AUTHORIZATION" in meta
        or meta.get("HTTP_ACCEPT") not in _PLAIN_ACCEPT
    ):
        return False
    cookies = meta.get("HTTP_COOKIE")
    return not (cookies and settings.SESSION_COOKIE_NAME in parse_cookie(cookies))


# A route's parameters the hot path can check and convert, with a value to try the route with.
_SAMPLES: dict[type[Any], Any] = {converters.UUIDConverter: uuid.UUID(int=0)}

WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]
Answer = tuple[str, list[tuple[str, str]], bytes]


@dataclass(frozen=True)
class HotRoute:
    """One URL name served here: its pattern, the view the URLconf resolves it to, and the
    labels Django's path gives it (``view`` for the request series, ``route`` for the log)."""

    name: str
    regex: re.Pattern[str]
    converters: dict[str, Any]
    view: Callable[..., HttpResponse]
    view_name: str
    route: str

    def arguments(self, path: str) -> dict[str, Any] | None:
        found = self.regex.fullmatch(path)
        if found is None:
            return None
        return {
            key: self.converters[key].to_python(value) for key, value in found.groupdict().items()
        }


def hot_route(name: str) -> HotRoute:
    """The route of URL name ``name``, checked against the URLconf: a path made from it must
    resolve to that name (no earlier pattern takes it)."""
    entries = get_resolver().reverse_dict.getlist(name)
    if len(entries) != 1:
        raise ImproperlyConfigured(f"REGISTRY_HOT_READS: {name!r} is not one URL pattern")
    possibilities, pattern, defaults, found_converters = entries[0]
    if defaults or len(possibilities) != 1:
        raise ImproperlyConfigured(f"REGISTRY_HOT_READS: {name!r} has defaults or variants")
    template, _params = possibilities[0]
    samples: dict[str, str] = {}
    for key, converter in found_converters.items():
        if type(converter) not in _SAMPLES:
            raise ImproperlyConfigured(
                f"REGISTRY_HOT_READS: {name!r} takes a {type(converter).__name__}"
            )
        samples[key] = converter.to_url(_SAMPLES[type(converter)])
    sample = "/" + template % samples
    match = resolve(sample)
    if match.url_name != name:
        raise ImproperlyConfigured(f"REGISTRY_HOT_READS: {sample} resolves to {match.url_name!r}")
    return HotRoute(
        name=name,
        regex=re.compile("/" + pattern),
        converters=dict(found_converters),
        view=match.func,
        view_name=match.view_name,
        route=str(match.route),
    )


def _no_response(request: Any) -> HttpResponse:  # the middleware below never call onwards
    raise AssertionError("not called")


class HotReads:
    """A WSGI application: ``app`` with the hot reads answered first (the module's docstring)."""

    def __init__(self, app: WSGIApp) -> None:
        self.app = app
        self.routes: tuple[HotRoute, ...] = ()
        self.security = SecurityMiddleware(_no_response)
        self.common = CommonMiddleware(_no_response)
        self.frames = XFrameOptionsMiddleware(_no_response)
        self.series = AnswerSeries()
        names = list(settings.REGISTRY_HOT_READS)
        if not names:
            return
        if tuple(settings.MIDDLEWARE) != REPRODUCED:
            logger.warning("hot reads off: MIDDLEWARE is not the list registry/hot_reads.py knows")
            return
        self.routes = tuple(hot_route(name) for name in names)

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        if self.routes:
            found = self.match(environ)
            if found is not None:
                answer = self.serve(environ, *found)
                if answer is not None:
                    status, headers, body = answer
                    start_response(status, headers)
                    return [body]
        return self.app(environ, start_response)

    def match(self, environ: dict[str, Any]) -> tuple[HotRoute, dict[str, Any]] | None:
        """The route and its arguments when ``environ`` is a plain request for a hot path."""
        if (
            environ.get("REQUEST_METHOD") != "GET"
            or environ.get("SCRIPT_NAME")
            or environ.get("CONTENT_LENGTH", "0") not in ("", "0")
            or "HTTP_TRANSFER_ENCODING" in environ
            or environ.get(UNCOUNTED)
            or not anonymous_json_read(environ)
        ):
            return None
        path = environ.get("PATH_INFO", "")
        for route in self.routes:
            arguments = route.arguments(path)
            if arguments is not None:
                return route, arguments
        return None

    def serve(
        self, environ: dict[str, Any], route: HotRoute, arguments: dict[str, Any]
    ) -> Answer | None:
        """The answer to a plain request for ``route``, or None for Django to answer it."""
        signals.request_started.send(sender=HotReads, environ=environ)
        rid = (
            context.accepted_request_id(environ.get("HTTP_X_REQUEST_ID"))
            or context.new_request_id()
        )
        token = context.request_id.set(rid)
        web = follow_ups.from_web.set(True)
        try:
            return self._serve(WSGIRequest(environ), route, arguments, rid)
        finally:
            follow_ups.from_web.reset(web)
            context.request_id.reset(token)
            signals.request_finished.send(sender=HotReads)

    def _serve(
        self, request: WSGIRequest, route: HotRoute, arguments: dict[str, Any], rid: str
    ) -> Answer | None:
        started = time.perf_counter()
        if self.security.process_request(request) is not None:
            return None  # the HTTPS redirect: Django's
        try:
            if self.common.process_request(request) is not None:
                return None  # PREPEND_WWW's redirect
        except Exception:  # DisallowedHost, a refused User-Agent: Django's 400 or 403, logged
            return None
        rate = settings.REGISTRY_ANON_RATE
        if rate and not request.path.startswith(limits.EXEMPT_PREFIXES):
            wait = limits.hit("anon", limits.client_address(request), Rate.parse(rate))
            request.META[limits.ANON_COUNTED] = wait
            if wait:
                return None  # the 429 as the limiter middleware makes it, with the count made
        try:
            response = route.view(request, **arguments)
        except Exception as exc:  # Django runs the view again, and answers and logs as it does
            logger.debug("hot read of %s left to Django: %r", route.name, exc)
            return None
        # On the way out, innermost first, as Django runs them (a redirect is an HttpResponse).
        response = self.frames.process_response(request, response)
        response = cast(HttpResponse, self.common.process_response(request, response))
        response = self.security.process_response(request, response)
        response["X-Request-ID"] = rid
        seconds = time.perf_counter() - started
        self.series.answered(
            view=route.view_name,
            transport="https" if request.is_secure() else "http",
            status=response.status_code,
            body_bytes=len(response.content),
            charset=str(response.charset),
            seconds=seconds,
        )
        access.write_line(request, "GET", route.route, response.status_code, seconds)
        headers = list(response.items())
        headers.extend(("Set-Cookie", c.output(header="")) for c in response.cookies.values())
        return f"{response.status_code} {response.reason_phrase}", headers, response.content


def wrap(app: WSGIApp) -> WSGIApp:
    """``app`` with the hot reads in front (itself when ``REGISTRY_HOT_READS`` is empty)."""
    hot = HotReads(app)
    return hot if hot.routes else app
