"""Liveness and readiness probes, and the ``registry_dependency_up`` gauge.

* ``/healthz``: the process answers (liveness); nothing else is checked.
* ``/readyz``: whether this node can serve. Only what a node cannot serve without decides it:
  the database. PostgreSQL unreachable: 503 problem+json (``"status": 503``), and the load
  balancer takes the node out. Redis (broker and cache) unreachable: 200 with
  ``"status": "degraded"`` and ``"broker": "unreachable: <error>"``; the node still answers
  every door (the limits fail open, submissions are stored and the sweep queues them once Redis
  is back), so taking every node out would turn a Redis outage into a site outage (issue 46).
  Both up: 200 ``"status": "ready"``. The Redis check is one ``PING`` on its own connection,
  waiting at most 1 s to connect and 1 s for the answer, tried once. The database check is a
  ``SELECT 1`` on the request's connection; with a connection pool (``REGISTRY_DB_POOL``), on a
  connection of its own made with a 2 s connect timeout, not one from the pool, whose
  ``getconn`` waits for its 30 s timeout while PostgreSQL is away.

Each probe and each ``/metrics`` scrape checks both again and reports
``registry_dependency_up{dependency="database"|"redis"}`` (1 up, 0 down; no ``redis`` sample
when no Redis is configured). A probe logs a warning when a dependency goes down or comes back
in this process, never a line per probe, and its 503 is not logged by ``django.request`` as an
error each time.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from django.conf import settings
from django.db import connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from prometheus_client.core import GaugeMetricFamily, Metric

import registry.metrics as metrics

logger = logging.getLogger(__name__)

_ALIVE = b'{"status": "ok"}'  # what JsonResponse({"status": "ok"}) says, encoded once

PROBE_TIMEOUT = 1.0  # seconds to connect to Redis, and again for its answer (a probe)
CONNECT_TIMEOUT = 2  # seconds to connect to PostgreSQL with a pool (libpq's shortest: 2)
SCRAPE_TIMEOUT = 0.25  # the same in a /metrics scrape, which must answer within a second


def healthz(request: HttpRequest) -> HttpResponse:
    return HttpResponse(_ALIVE, content_type="application/json")


def database_problem() -> str | None:
    """Why the database cannot be used (``unreachable: <error>``), or None."""
    if _pooled():
        return _direct_problem()
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except Exception as exc:  # any driver error means not ready
        return f"unreachable: {exc.__class__.__name__}"
    return None


def _pooled() -> bool:
    """Whether the node's connections come from a pool (``REGISTRY_DB_POOL``)."""
    options = connection.settings_dict.get("OPTIONS") or {}
    return connection.vendor == "postgresql" and bool(options.get("pool"))


def _direct_problem() -> str | None:
    """The database checked on a connection of the probe's own, made with the pool's
    parameters and a bounded connect (:data:`CONNECT_TIMEOUT`), then closed. Through the pool,
    a probe during an outage waited for the pool's timeout (30 s) before it answered, and so
    did every scrape's check."""
    import psycopg  # lazy: a pooled PostgreSQL only; SQLite nodes never need it

    params = dict(connection.get_connection_params())
    params.pop("cursor_factory", None)  # the registry's counting cursor: a probe is not a query
    params["connect_timeout"] = CONNECT_TIMEOUT
    params["autocommit"] = True
    try:
        with psycopg.connect(**params) as conn:
            conn.execute("SELECT 1")
    except Exception as exc:  # any driver error means not ready
        return f"unreachable: {exc.__class__.__name__}"
    return None


def redis_url() -> str | None:
    """The Redis the node uses as broker (and cache), or None when none is configured."""
    url = settings.CELERY_BROKER_URL or settings.REDIS_URL
    return str(url) if url else None


_clients: dict[tuple[str, float], Any] = {}
_clients_lock = threading.Lock()


def _client(url: str, timeout: float) -> Any:
    """A Redis client of its own for the checks (not the cache's pool, whose breaker would
    answer for Redis without asking it): bounded waits, no retries."""
    # lazy: redis-py only where a Redis URL is set (45 ms of start-up otherwise)
    import redis
    from redis.backoff import NoBackoff
    from redis.retry import Retry

    key = (url, timeout)
    with _clients_lock:
        found = _clients.get(key)
        if found is None:
            found = _clients[key] = redis.Redis.from_url(
                url,
                socket_connect_timeout=timeout,
                socket_timeout=timeout,
                retry=Retry(NoBackoff(), 0),
                health_check_interval=0,
            )
        return found


def redis_problem(timeout: float = PROBE_TIMEOUT) -> str | None:
    """Why Redis does not answer a ``PING`` (``unreachable: <error>``), or None (also when no
    Redis is configured: see :func:`redis_url`)."""
    url = redis_url()
    if url is None:
        return None
    if not url.startswith(("redis://", "rediss://", "unix://")):  # another broker: kombu's way
        return _broker_problem(timeout)
    try:
        _client(url, timeout).ping()
    except Exception as exc:  # redis-py raises ConnectionError, TimeoutError, OSError...
        return f"unreachable: {exc.__class__.__name__}"
    return None


def _broker_problem(timeout: float) -> str | None:
    from celery import current_app as app  # lazy: configured by registry.celery, needed here only

    try:
        with app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1, timeout=timeout)
    except Exception as exc:  # kombu raises many types
        return f"unreachable: {exc.__class__.__name__}"
    return None


class _Transitions:
    """What this process saw of each dependency last time, to log changes only."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._down: dict[str, bool] = {}

    def note(self, name: str, problem: str | None, consequence: str) -> None:
        down = problem is not None
        with self._lock:
            before = self._down.get(name, False)
            self._down[name] = down
        if down and not before:
            logger.warning("readiness: %s %s (%s)", name, problem, consequence)
        elif before and not down:
            logger.warning("readiness: %s reachable again", name)


_transitions = _Transitions()


def readyz(request: HttpRequest) -> JsonResponse:
    database = database_problem()
    broker = redis_problem()
    _transitions.note("database", database, "not ready: 503")
    _transitions.note("redis", broker, "degraded: still ready")
    body: dict[str, object] = {
        "database": "ok" if database is None else database,
        "broker": "ok" if broker is None else broker,
    }
    if redis_url() is None:
        body["broker"] = "not configured"
    if database is not None:
        body.update(
            {
                "type": "/problems/not-ready",
                "title": "Not ready",
                "status": 503,
                "detail": f"database {database}",
            }
        )
        response = JsonResponse(body, status=503, content_type="application/problem+json")
        # The outage is logged once, above; django.request would log an ERROR per probe.
        response._has_been_logged = True  # type: ignore[attr-defined]
        return response
    return JsonResponse({"status": "ready" if broker is None else "degraded", **body})


SCRAPE_DEADLINE = 0.6  # seconds a scrape waits for a check; later, the dependency counts as down
_checks = ThreadPoolExecutor(max_workers=2, thread_name_prefix="dependency-check")
_in_flight: dict[str, Future[bool]] = {}
_in_flight_lock = threading.Lock()


def _database_up_in_thread() -> bool:
    try:
        return database_problem() is None
    finally:
        connection.close()  # this thread's own connection: not kept between scrapes


def _started(name: str, check: Callable[[], bool]) -> Future[bool]:
    """``check`` running in the pool (the one still running from an earlier scrape, if any: a
    dependency that hangs is not asked again and again)."""
    with _in_flight_lock:
        future = _in_flight.get(name)
        if future is None or future.done():
            future = _in_flight[name] = _checks.submit(check)
    return future


def _up_by(future: Future[bool], deadline: float) -> bool:
    """Whether the check said up by ``deadline`` (monotonic): a dependency that hangs (a
    database that accepts and never answers) counts as down for this scrape."""
    try:
        return future.result(timeout=max(0.0, deadline - time.monotonic()))
    except Exception:  # late, or failed
        return False


class DependencyGauge:
    """``registry_dependency_up``, checked again at each scrape (a scrape-time collector). Both
    checks run at once and keep their own deadline (``bounded``): the scrape never answers an
    earlier reading, which could say "up" during an outage."""

    bounded = True

    def collect(self) -> Iterator[Metric]:
        family = GaugeMetricFamily(
            "registry_dependency_up",
            "Whether this node reaches a dependency now (1) or not (0), by dependency "
            "(database, redis). The database down makes /readyz answer 503; Redis down only "
            "degrades it (200).",
            labels=["dependency"],
        )
        deadline = time.monotonic() + SCRAPE_DEADLINE
        checks = {"database": _started("database", _database_up_in_thread)}
        if redis_url() is not None:
            checks["redis"] = _started("redis", lambda: redis_problem(SCRAPE_TIMEOUT) is None)
        for name, future in checks.items():
            family.add_metric([name], float(_up_by(future, deadline)))
        yield family


# The /metrics view resolves its route through registry.urls, which imports this module.
metrics.register_scrape_collector(DependencyGauge())
