"""Django's PostgreSQL backend, with a health check that needs no round trip when it can, and
prepared statements for the reads compiled once (registry/compiled.py).

With ``CONN_HEALTH_CHECKS`` (on: ``REGISTRY_DB_HEALTH_CHECKS``) Django checks a reused connection
at the start of every request with a ``SELECT 1``: a round trip to PostgreSQL before the
request's own query, about 0.5 ms of latency and 0.1 ms of CPU on each side for a fetch by id
(docs/benchmarks.md). A connection that PostgreSQL has ended (a restart, ``pg_terminate_backend``,
an idle timeout) has something to read on its socket: the server's FATAL message and the end of
the stream. So the socket is polled first, without waiting: nothing to read on an idle
connection means it is as usable as a ``SELECT 1`` would find it; anything to read (or a
connection not idle) falls back to Django's ``SELECT 1``.

**Prepared statements** (``REGISTRY_DB_PREPARED``, on by default). Django sends every query with
its values written into the SQL text, so PostgreSQL parses and plans it each time: for a fetch
by id that is about half of PostgreSQL's CPU (docs/benchmarks.md, "Prepared statements").
:meth:`DatabaseWrapper.prepared_cursor` gives a cursor that binds the values on the server and
prepares each statement on its first run on a connection (psycopg's cache of statements, at most
``prepared_max`` of them); registry.compiled runs its hot reads (a fetch by id, a page's rows by
their ids, a crawl's reads) through it, and everything else keeps Django's cursor. A statement
prepared before a migration changed the type of a column it returns fails once on PostgreSQL
("cached plan must not change result type"), as does one the server no longer has: outside a
transaction the connection's statements are then dropped (``DEALLOCATE ALL``) and the query is
run again; inside one it fails that transaction, whose rollback makes psycopg drop them, so the
next transaction prepares it again (a crawl's locked read always runs in one). A connection
pooler in transaction mode (PgBouncer before 1.21) does not keep a client's statements: set
``REGISTRY_DB_PREPARED=false`` behind one.

**Metrics.** The wrapper is django-prometheus's PostgreSQL one (connections, queries, their
duration and errors, by alias), and the prepared cursor is counted the same way
(docs/operations.md). Both cursors count through registry/metrics_db.py, which tells a unique
conflict the code handles (``registry_db_unique_conflicts_total``) from a database error.
"""

from __future__ import annotations

import select
from typing import Any, cast

import psycopg
from django.db.backends.postgresql import base, operations
from django.db.backends.postgresql.psycopg_any import register_tzloader
from django.db.backends.utils import CursorWrapper
from django_prometheus.db.backends.postgresql import base as counted
from psycopg import errors, pq

from registry import metrics_db

_READABLE = select.POLLIN | select.POLLPRI | select.POLLERR | select.POLLHUP
# PostgreSQL's answers when a prepared statement cannot run as prepared: its result's columns
# changed type (a migration), or the server does not have it (it was deallocated).
_STALE = (errors.FeatureNotSupported, errors.InvalidSqlStatementName)


class PreparedCursor(psycopg.Cursor[Any]):
    """A server-binding cursor (as Django's with ``server_side_binding``) whose statements are
    prepared on their first run.

    The connection keeps psycopg's preparation as configured (off by Django's default,
    ``prepare_threshold`` None: its own cursors interpolate values, nothing to prepare); it is
    turned on only while this cursor runs a statement."""

    def execute(self, query: Any, params: Any = None, **options: Any) -> Any:
        try:
            return self._prepared(query, params, options)
        except _STALE as error:
            idle = self.connection.info.transaction_status == pq.TransactionStatus.IDLE
            other = isinstance(error, errors.FeatureNotSupported) and "cached plan" not in str(
                error
            )
            if not idle or other:  # a failed transaction cannot run it again
                raise
            # psycopg forgets its statements when it sees this command succeed.
            self._prepared("DEALLOCATE ALL", None, {"prepare": False})
            return self._prepared(query, params, options)

    def _prepared(self, query: Any, params: Any, options: dict[str, Any]) -> Any:
        connection = self.connection
        threshold = connection.prepare_threshold
        connection.prepare_threshold = 0
        try:
            return super().execute(query, params, **options)
        finally:
            connection.prepare_threshold = threshold


class DatabaseOperations(operations.DatabaseOperations):
    def last_executed_query(  # type: ignore[override]  # Django returns None too
        self, cursor: Any, sql: str, params: Any
    ) -> str | None:
        """The query as Django logs it (tests count and read them): with the values written in,
        for a prepared statement too (whose text holds ``$1``, not the values)."""
        if isinstance(cursor, PreparedCursor):
            try:
                return str(self.compose_sql(sql, params))
            except errors.DataError:
                return None
        return cast("str | None", super().last_executed_query(cursor, sql, params))


class DatabaseWrapper(counted.DatabaseWrapper):
    ops_class = DatabaseOperations
    _prepared_class: type[PreparedCursor] | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        metrics_db.init_series(self.alias, self.vendor)

    def get_connection_params(self) -> dict[str, Any]:
        # django-prometheus's counting cursor, replaced by the registry's (metrics_db).
        params: dict[str, Any] = base.DatabaseWrapper.get_connection_params(self)
        params["cursor_factory"] = metrics_db.counted_cursor(
            params["cursor_factory"], self.alias, self.vendor
        )
        return params

    def _counted_prepared_cursor(self) -> type[PreparedCursor]:
        """:class:`PreparedCursor`, its queries counted like every other cursor's."""
        if self._prepared_class is None:
            self._prepared_class = metrics_db.counted_cursor(
                PreparedCursor, self.alias, self.vendor
            )
        return self._prepared_class

    def prepared_cursor(self) -> CursorWrapper:
        """A cursor whose statements are prepared on their first run on this connection (the
        module's docstring); Django's own cursor where ``REGISTRY_DB_PREPARED`` is off."""
        if not self.settings_dict.get("PREPARED", True):
            return self.cursor()
        self.close_if_health_check_failed()
        self.ensure_connection()
        with self.wrap_database_errors:
            cursor = self._counted_prepared_cursor()(self.connection)
            # As Django's create_cursor: the time zone, where the connection's differs.
            loader = self.connection.adapters.get_loader(base.TIMESTAMPTZ_OID, pq.Format.TEXT)
            if self.timezone != loader.timezone:
                register_tzloader(self.timezone, cursor)
            # As Django's _prepare_cursor: this thread's connection, wrapped for query logging
            # when queries are logged (the classes of the backend's make_debug_cursor and
            # make_cursor).
            self.validate_thread_sharing()
            wrapper = base.CursorDebugWrapper if self.queries_logged else CursorWrapper
            return wrapper(cursor, self)

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
