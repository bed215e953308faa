"""Django's per-request signal receivers, less the two that have nothing to do in this process.

Every request sends ``request_started`` (``reset_queries``, ``close_old_connections``) and
``request_finished`` (``close_old_connections``, ``close_caches``). Two of them do nothing in a
production web process, at a cost of about 10% of the instructions of a health check and 8% of
a fetch by id (docs/benchmarks.md, "The request cycle"):

- ``reset_queries`` empties each connection's query log, which is only written with ``DEBUG``
  on (or while a test captures queries, and that capture resets the log itself);
- ``close_caches`` calls ``close()`` on each cache in use; Django's Redis and local-memory
  backends inherit ``BaseCache.close``, which does nothing. A backend with a ``close`` of its
  own (memcached's) keeps the receiver.

``close_old_connections`` stays on both: it closes a connection after an error or past
``CONN_MAX_AGE``, which is how a process recovers from a PostgreSQL restart
(tests/faults/). The web entry points (registry.wsgi, registry.rsgi, registry.asgi) call
:func:`trim` once, after Django is set up.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core import signals
from django.core.cache import close_caches
from django.core.cache.backends.base import BaseCache
from django.db import reset_queries
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
    return removed
