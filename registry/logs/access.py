"""The access log: one line per answer the web tier gives (issue 46).

Written by :class:`registry.logs.middleware.RequestIdMiddleware`, which every request passes
first and every answer last, so the line covers what the views answer and what the middleware
after it answers on its own (the limiter's 429s, a 500 raised in a middleware, a redirect), at
INFO on the logger ``registry.access``. Its fields (``extra=``, so JSON has them as keys):

- ``method``: as the client sent it;
- ``route``: the URL pattern that matched (``api/v1/agents/<uuid:pk>``), never the raw path
  (the raw path has ids without end, and what a client typed); null when nothing matched;
- ``status``, ``duration_ms`` (until the response left the middleware, headers and a body that
  is not streamed);
- ``client``: the client as the limits count it (:func:`registry.limits.client_key` of its
  address, a proxy's ``X-Forwarded-For`` only from a trusted one); never a token nor any header.

The line carries the request id like every line of the request. The servers' own access logs
stay off or are filtered so that each answer has one line (:class:`ServerAccessFilter`).
"""

from __future__ import annotations

import logging
import time

from django.http import HttpRequest, HttpResponseBase
from django.urls import Resolver404, resolve

from registry.metrics_requests import UNCOUNTED

logger = logging.getLogger("registry.access")

# uvicorn's access line is kept only for what does not reach Django (the MCP server at /mcp,
# served before it by protocols/asgi_app.py); Django's answers have the line above.
_NOT_DJANGO = ("/mcp",)


def route_of(request: HttpRequest) -> str | None:
    """The URL pattern the request matched: the one resolved for the view, or, when a
    middleware answered before the view was resolved (a 429), the one it would have had."""
    match = getattr(request, "resolver_match", None)
    if match is None:
        try:
            match = resolve(request.path_info)
        except Resolver404:
            return None
        except Exception:  # a URLconf that cannot even be read: the line is still written
            return None
    route = getattr(match, "route", None)
    return str(route) if route is not None else None


def _client(request: HttpRequest) -> str:
    # lazy: registry.limits reads Django's cache, and logging loads this module before Django
    from registry.limits import client_address

    try:
        return client_address(request)
    except Exception:  # never lose the line over the client's spelling
        return str(request.META.get("REMOTE_ADDR", ""))


def started() -> float:
    """The clock the duration is measured on."""
    return time.perf_counter()


def log_answer(request: HttpRequest, response: HttpResponseBase | None, start: float) -> None:
    """Write the request's access line (``response`` None: no answer was made, a 500). A
    request the registry made to itself (a web worker's warm-up) has none."""
    if not logger.isEnabledFor(logging.INFO) or request.META.get(UNCOUNTED):
        return
    seconds = time.perf_counter() - start
    status = response.status_code if response is not None else 500
    write_line(request, str(request.method), route_of(request), status, seconds)


def write_line(
    request: HttpRequest, method: str, route: str | None, status: int, seconds: float
) -> None:
    """The access line itself (also written by registry/hot_reads.py for what it answers)."""
    if not logger.isEnabledFor(logging.INFO):
        return
    duration_ms = round(seconds * 1000, 1)
    client = _client(request)
    logger.info(
        "%s %s %d %.1f ms %s",
        method,
        route if route is not None else "(no route)",
        status,
        duration_ms,
        client,
        extra={
            "method": method,
            "route": route,
            "status": status,
            "duration_ms": duration_ms,
            "client": client,
        },
    )


class ServerAccessFilter(logging.Filter):
    """On uvicorn's access logger: drops the line of a request Django answered (it has its own,
    above), keeps the others (``/mcp``). uvicorn's record args are (client, method, path,
    http version, status)."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and len(args) >= 3 and isinstance(args[2], str):
            path = args[2]
            return any(
                path == p or path.startswith(p + "/") or path.startswith(p + "?")
                for p in _NOT_DJANGO
            )
        return True
