"""PostgreSQL's statements counted, and a unique conflict told apart from a database error.

django-prometheus counts every statement a cursor runs (``django_db_execute_total``, its
duration) and every exception one raises, by type (``django_db_errors_total``). A crawl of an
agent whose derived ARD identifier another agent already holds tries the next one inside a
savepoint and catches PostgreSQL's unique violation (cards/ard/identifiers.py), as do a
submission racing another for the same URL and Django's ``get_or_create``: the constraint
answering "taken", which the code asks on purpose. Counted as errors, ordinary crawls added
``UniqueViolation`` to ``django_db_errors_total``, and an alert on database errors fired on a
healthy registry (issue 46, section 3).

So a unique violation (SQLSTATE 23505) is counted in ``registry_db_unique_conflicts_total``
instead, and ``django_db_errors_total`` keeps what went wrong: a connection lost, a statement
cancelled, a deadlock, a syntax error. A conflict the code did not expect still fails its
request (a 500, counted by status) or its task (``registry_tasks_total{outcome="failed"}``).

:func:`counted_cursor` is used by registry/postgresql/base.py for Django's cursors and the
prepared ones (the same series, the same labels).
"""

from __future__ import annotations

from typing import Any

from django_prometheus.db import (
    errors_total,
    execute_many_total,
    execute_total,
    query_duration_seconds,
)
from prometheus_client import Counter

UNIQUE_VIOLATION = "23505"  # PostgreSQL's SQLSTATE for a unique or exclusion key taken

UNIQUE_CONFLICTS = Counter(
    "registry_db_unique_conflicts_total",
    "Statements refused by a unique constraint (a key already taken: an identifier, a URL "
    "submitted twice at once), which the registry handles; not in django_db_errors_total.",
    ["alias", "vendor"],
)


def is_unique_conflict(exc: BaseException) -> bool:
    """Whether ``exc`` is PostgreSQL's unique violation (psycopg's ``UniqueViolation``)."""
    return getattr(exc, "sqlstate", None) == UNIQUE_VIOLATION


class _Counting:
    """Counts one statement's error (by type), or its unique conflict, as it leaves."""

    __slots__ = ("alias", "vendor")

    def __init__(self, alias: str, vendor: str) -> None:
        self.alias = alias
        self.vendor = vendor

    def __enter__(self) -> None:
        return None

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: Any
    ) -> None:
        if kind is None or exc is None:
            return
        if is_unique_conflict(exc):
            UNIQUE_CONFLICTS.labels(self.alias, self.vendor).inc()
        else:
            errors_total.labels(self.alias, self.vendor, kind.__name__).inc()


def counted_cursor(cursor_class: type[Any], alias: str, vendor: str) -> type[Any]:
    """``cursor_class`` with its statements counted (see the module's docstring)."""
    counting = _Counting(alias, vendor)
    # The labelled series, looked up once: labels() checks and converts on every call.
    executed = execute_total.labels(alias, vendor)
    executed_many = execute_many_total.labels(alias, vendor)
    duration = query_duration_seconds.labels(alias=alias, vendor=vendor)

    class CountedCursor(cursor_class):
        def execute(self, *args: Any, **kwargs: Any) -> Any:
            executed.inc()
            with duration.time(), counting:
                return super().execute(*args, **kwargs)

        def executemany(self, query: Any, param_list: Any, *args: Any, **kwargs: Any) -> Any:
            params = list(param_list)  # counted first: it may be a generator
            executed.inc(len(params))
            executed_many.inc(len(params))
            with duration.time(), counting:
                return super().executemany(query, params, *args, **kwargs)

    CountedCursor.__name__ = CountedCursor.__qualname__ = f"Counted{cursor_class.__name__}"
    return CountedCursor


def init_series(alias: str, vendor: str) -> None:
    """The conflicts' series at 0 for a connection's alias (a process starts counting)."""
    UNIQUE_CONFLICTS.labels(alias, vendor).inc(0)
