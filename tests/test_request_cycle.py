"""The per-request signal receivers the web entry points keep (registry/request_cycle.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from django.core import signals
from django.core.cache import close_caches
from django.core.cache.backends.locmem import LocMemCache
from django.core.handlers.base import reset_urlconf
from django.db import close_old_connections, reset_queries
from django.test import Client

from registry import request_cycle


class ClosingCache(LocMemCache):
    """A backend with a ``close`` of its own (as memcached's has)."""

    closed = 0

    def close(self, **kwargs: Any) -> None:
        ClosingCache.closed += 1


def _receivers(signal: Any) -> list[Any]:
    return [ref() for _, ref, *_ in signal.receivers if ref() is not None]


@pytest.fixture
def django_receivers() -> Iterator[None]:
    """Django's default receivers before each test, and whatever was connected after it."""
    started = signals.request_started.receivers[:]
    finished = signals.request_finished.receivers[:]
    signals.request_started.connect(reset_queries)
    signals.request_started.connect(close_old_connections)
    signals.request_finished.connect(close_caches)
    signals.request_finished.connect(reset_urlconf)
    yield
    with signals.request_started.lock:
        signals.request_started.receivers[:] = started
        signals.request_started.sender_receivers_cache.clear()
    with signals.request_finished.lock:
        signals.request_finished.receivers[:] = finished
        signals.request_finished.sender_receivers_cache.clear()


@pytest.mark.usefixtures("django_receivers")
def test_the_receivers_that_do_nothing_go_and_connections_are_still_closed(
    settings: Any,
) -> None:
    settings.DEBUG = False
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache"}}
    assert request_cycle.trim() == [
        "reset_queries",
        "close_caches",
        "close_old_connections at the start",
        "reset_urlconf",
    ]
    assert reset_queries not in _receivers(signals.request_started)
    assert close_caches not in _receivers(signals.request_finished)
    assert reset_urlconf not in _receivers(signals.request_finished)
    # A connection that failed, or outlived CONN_MAX_AGE, is still closed after each request
    # (a PostgreSQL restart under the production server: tests/faults/).
    assert close_old_connections not in _receivers(signals.request_started)
    assert close_old_connections in _receivers(signals.request_finished)
    assert request_cycle.trim() == []  # once is enough; a second call changes nothing


@pytest.mark.usefixtures("django_receivers")
def test_debug_keeps_the_query_log_reset(settings: Any) -> None:
    settings.DEBUG = True
    assert "reset_queries" not in request_cycle.trim()
    assert reset_queries in _receivers(signals.request_started)


@pytest.mark.django_db
@pytest.mark.usefixtures("django_receivers")
def test_a_cache_that_closes_is_still_closed_after_each_request(settings: Any) -> None:
    settings.CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
        "closing": {"BACKEND": f"{__name__}.ClosingCache"},
    }
    assert not request_cycle.caches_close_nothing()
    assert "close_caches" not in request_cycle.trim()
    from django.core.cache import caches

    caches["closing"].get("warm")  # in use: close_caches closes the caches in use
    before = ClosingCache.closed
    assert Client().get("/healthz").status_code == 200
    assert ClosingCache.closed == before + 1


@pytest.mark.parametrize("entry", ["registry.wsgi", "registry.rsgi", "registry.asgi"])
def test_each_web_entry_point_trims_the_cycle(entry: str) -> None:
    """Imported as a server imports it (a process of its own, DEBUG off): only
    ``close_old_connections`` stays, at the end of each request."""
    code = (
        f"import {entry}\n"
        "from django.core import signals\n"
        "names = lambda s: sorted(r().__name__ for _, r, *_ in s.receivers if r() is not None)\n"
        "print(names(signals.request_started), names(signals.request_finished))\n"
    )
    env = {**os.environ, "DJANGO_DEBUG": "false", "REGISTRY_LOG_LEVEL": "WARNING"}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[-2] == "[] ['close_old_connections']"
