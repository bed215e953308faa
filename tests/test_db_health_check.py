"""The per-request database health check costs no round trip, and still sees a dead connection.

Django checks a reused connection at the start of each request (``CONN_HEALTH_CHECKS``);
registry.postgresql polls the socket instead of sending ``SELECT 1``. What goes over the wire is
read from libpq's own trace of the connection; the connection is ended from the database side
with ``pg_terminate_backend`` (what a PostgreSQL restart does to it), never by restarting the
machine's PostgreSQL.
"""

from __future__ import annotations

import io
import json
import select
import sys
import tempfile
import time
from collections.abc import Iterator
from typing import Any

import pytest
from django.core.handlers.wsgi import WSGIHandler
from django.db import connection

from tests.factories import agent_from_card, minimal_card
from tests.support import other_connection

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _fresh_connection_after() -> Iterator[None]:
    """A connection a test had the server end is replaced before the database is flushed."""
    yield
    connection.close()


def _traced(call: Any) -> tuple[Any, str]:
    """Run ``call`` with libpq tracing what the connection sends and receives."""
    pgconn = connection.connection.pgconn
    with tempfile.TemporaryFile("w+") as trace:
        pgconn.trace(trace.fileno())
        try:
            result = call()
        finally:
            pgconn.untrace()
        trace.seek(0)
        return result, trace.read()


def _terminate(pid: int) -> None:
    """End the backend ``pid`` from another connection and wait until its end has reached this
    side: the backend gone from ``pg_stat_activity`` (its FATAL message is flushed before it
    leaves) and Django's connection's socket readable. On a loaded machine a backend can take a
    while to act on the signal; a check made before then would (rightly) find the connection
    usable, which is not what these tests are about."""
    with other_connection() as other:
        other.execute("SELECT pg_terminate_backend(%s)", [pid])
        deadline = time.monotonic() + 60
        while True:
            gone = other.execute("SELECT count(*) FROM pg_stat_activity WHERE pid = %s", [pid])
            if gone.fetchone() == (0,):
                break
            assert time.monotonic() < deadline, f"backend {pid} still there after 60 s"
            time.sleep(0.05)
    poller = select.poll()
    poller.register(connection.connection.pgconn.socket, select.POLLIN | select.POLLHUP)
    assert poller.poll(60_000), "the server's end of the connection never reached its socket"


def test_the_engine_is_the_registry_backend() -> None:
    assert connection.settings_dict["ENGINE"] == "registry.postgresql"
    assert connection.settings_dict["CONN_HEALTH_CHECKS"] is True


def test_a_live_idle_connection_is_usable_without_a_round_trip() -> None:
    connection.ensure_connection()
    usable, wire = _traced(connection.is_usable)
    assert usable is True
    assert wire == ""  # Django's own check sends `SELECT 1` here


def test_a_connection_the_server_ended_is_not_usable() -> None:
    connection.ensure_connection()
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    _terminate(pid)
    assert connection.is_usable() is False


def _get(path: str) -> tuple[str, bytes]:
    """One request through the WSGI handler, with Django's request signals (the test client
    turns off the one that checks connections)."""
    environ = {
        "REQUEST_METHOD": "GET",
        "PATH_INFO": path,
        "QUERY_STRING": "",
        "SERVER_NAME": "testserver",
        "SERVER_PORT": "80",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "REMOTE_ADDR": "127.0.0.1",
        "HTTP_HOST": "testserver",
        "wsgi.url_scheme": "http",
        "wsgi.input": io.BytesIO(b""),
        "wsgi.errors": sys.stderr,
        "wsgi.multithread": True,
        "wsgi.multiprocess": False,
        "wsgi.run_once": False,
        "wsgi.version": (1, 0),
    }
    status: list[str] = []

    def start_response(line: str, headers: list[tuple[str, str]], exc: Any = None) -> Any:
        status.append(line)
        return None

    result = WSGIHandler()(environ, start_response)
    body = b"".join(result)
    result.close()
    return status[0], body


def test_a_request_after_the_server_ended_the_connection_is_answered() -> None:
    agent = agent_from_card(minimal_card(name="Health checked"))
    assert _get(f"/api/v1/agents/{agent.pk}")[0] == "200 OK"
    assert connection.connection is not None  # kept for the next request (CONN_MAX_AGE)
    # The pid as libpq knows it, with no query: a query here, between two requests, would count
    # as the connection's check (Django marks it done on a cursor's first use), and with the
    # request-start receiver trimmed (registry/request_cycle.py, done by any test that loaded a
    # web entry point in this process) nothing would ask for another before the next request.
    pid = connection.connection.info.backend_pid
    _terminate(pid)
    status, body = _get(f"/api/v1/agents/{agent.pk}")
    assert status == "200 OK"
    assert json.loads(body)["id"] == str(agent.pk)


def test_a_reused_connection_costs_the_request_no_extra_round_trip() -> None:
    agent = agent_from_card(minimal_card(name="One round trip"))
    assert _get(f"/api/v1/agents/{agent.pk}")[0] == "200 OK"
    (status, _), wire = _traced(lambda: _get(f"/api/v1/agents/{agent.pk}"))
    assert status == "200 OK"
    sent = [line for line in wire.splitlines() if "\tF\t" in line and "\tQuery\t" in line]
    assert not any("SELECT 1" in line for line in sent), sent
