"""Django's PostgreSQL backend, with a health check that needs no round trip when it can.

With ``CONN_HEALTH_CHECKS`` (on: ``REGISTRY_DB_HEALTH_CHECKS``) Django checks a reused connection
at the start of every request with a ``SELECT 1``: a round trip to PostgreSQL before the
request's own query, about 0.5 ms of latency and 0.1 ms of CPU on each side for a fetch by id
(docs/benchmarks.md). A connection that PostgreSQL has ended (a restart, ``pg_terminate_backend``,
an idle timeout) has something to read on its socket: the server's FATAL message and the end of
the stream. So the socket is polled first, without waiting: nothing to read on an idle
connection means it is as usable as a ``SELECT 1`` would find it; anything to read (or a
connection not idle) falls back to Django's ``SELECT 1``.
"""

from __future__ import annotations

import select

import psycopg
from django.db.backends.postgresql import base
from psycopg import pq

_READABLE = select.POLLIN | select.POLLPRI | select.POLLERR | select.POLLHUP


class DatabaseWrapper(base.DatabaseWrapper):
    def is_usable(self) -> bool:
        conn = self.connection
        if conn is None or conn.closed or conn.broken:
            return False
        pgconn = conn.pgconn
        if pgconn.status != pq.ConnStatus.OK:
            return False
        if pgconn.transaction_status == pq.TransactionStatus.IDLE:
            poller = select.poll()
            try:
                poller.register(pgconn.socket, _READABLE)
                pending = poller.poll(0)
            except (OSError, ValueError, psycopg.Error):
                pending = [(-1, 0)]  # unknown: ask the server
            if not pending:
                return True
        return bool(super().is_usable())
