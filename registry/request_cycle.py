"""Django's per-request signal receivers, less those that have nothing to do in this process.

Every request sends ``request_started`` (``reset_queries``, ``close_old_connections``) and
``request_finished`` (``close_old_connections``, ``close_caches``, ``reset_urlconf``). Four of
them do nothing in a production web process (docs/benchmarks.md, "The request cycle"):

- ``reset_queries`` empties each connection's query log, which is only written with ``DEBUG``
  on (or while a test captures queries, and that capture resets the log itself);
- ``close_caches`` calls ``close()`` on each cache in use; Django's Redis and local-memory
  backends inherit ``BaseCache.close``, which does nothing. A backend with a ``close`` of its
  own (memcached's) keeps the receiver;
- ``close_old_connections`` at the start of a request repeats what it did at the end of the
  thread's previous one: it closes a connection after an error or past ``CONN_MAX_AGE`` and
  asks for a health check on its next use. Run once, at each request's end, it still closes a
  connection broken by a PostgreSQL restart and checks a reused one before its first query
  (tests/faults/); a connection past its age while idle is checked, used and closed at the end
  of that request, instead of being closed before it;
- ``reset_urlconf`` clears this thread's URLconf, which every request sets again before it is
  resolved (``BaseHandler.get_response``); no middleware here sets ``request.urlconf``.

The web entry points (registry.wsgi, registry.rsgi, registry.asgi) call :func:`trim` once,
after Django is set up.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core import signals
from django.core.cache import close_caches
from django.core.cache.backends.base import BaseCache
from django.core.handlers.base import reset_urlconf
from django.db import close_old_connections, reset_queries
from django.utils.module_loading import import_string


def caches_close_nothing() -> bool:
    """Whether every configured cache backend's ``close`` is :class:`BaseCache`'s (a no-op)."""
    backends: dict[str, Any] = settings.CACHES
    return all(
        getattr(import_string(conf["BACKEND"]), "close", None) is BaseCache.close
        for conf in backends.values()
    )


def trim() -> list[str]:
    """Disconnect the receivers that do nothing here; returns their names."""
    removed = []
    if not settings.DEBUG and signals.request_started.disconnect(reset_queries):
        removed.append("reset_queries")
    if caches_close_nothing() and signals.request_finished.disconnect(close_caches):
        removed.append("close_caches")
    if signals.request_started.disconnect(close_old_connections):
        removed.append("close_old_connections at the start")
    if signals.request_finished.disconnect(reset_urlconf):
        removed.append("reset_urlconf")
    return removed
