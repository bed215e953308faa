"""SQL compiled once per shape of query, run with the request's values.

Building and compiling a Django queryset costs a few hundred microseconds, more than running
the query it makes. A search page has few shapes (which filters are present, who reads, the
page size) and many values, so each shape is built once with *sentinel* values, compiled, and
kept; a request swaps its own values in for the sentinels and runs the SQL. The query still
comes from the same code (the gate and the search filters): only its compilation is cached.

PostgreSQL only: there the values reach the driver unchanged (on SQLite some are re-encoded),
so on SQLite the queryset runs as usual.
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

from django.db import connection
from django.db.models import QuerySet

_CACHE: OrderedDict[Hashable, tuple[str, tuple[Any, ...]]] = OrderedDict()
_CACHE_SIZE = 1024


class Sentinels:
    """Distinct placeholder values that survive the filters' own transformations (lower- and
    upper-casing, whitespace folding), one per request value."""

    def __init__(self) -> None:
        self.pairs: list[tuple[Any, Any]] = []

    def fresh(self) -> str:
        """A new sentinel string, registered later with :meth:`derived`."""
        self.count = getattr(self, "count", 0) + 1
        return f"\x00{9000 + self.count}"

    def text(self, real: Any) -> str:
        value = self.fresh()
        self.pairs.append((value, real))
        return value

    def number(self, real: int) -> int:
        value = -424200 - len(self.pairs)
        self.pairs.append((value, real))
        return value

    def when(self, real: dt.datetime) -> dt.datetime:
        value = dt.datetime(1901, 1, 1, tzinfo=dt.UTC) + dt.timedelta(microseconds=len(self.pairs))
        self.pairs.append((value, real))
        return value

    def ident(self, real: uuid.UUID) -> uuid.UUID:
        value = uuid.UUID(int=0xBEEF0000 + len(self.pairs))
        self.pairs.append((value, real))
        return value

    def derived(self, sentinel: Any, real: Any) -> None:
        """A value the query makes from a sentinel (``["s:" + name]``), and what it stands for."""
        self.pairs.append((sentinel, real))


def usable() -> bool:
    return connection.vendor == "postgresql"


def fetch(
    shape: Hashable, build: Callable[[], QuerySet[Any]], sentinels: Sentinels
) -> list[tuple[Any, ...]]:
    """Rows of the query ``build()`` makes, compiled once per ``shape``, with each sentinel in
    its parameters replaced by the real value it stands for."""
    compiled = _CACHE.get(shape)
    if compiled is None:
        sql, built = build().query.sql_with_params()
        compiled = (sql, tuple(built))
        _CACHE[shape] = compiled
        if len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    sql, template = compiled
    swaps = sentinels.pairs
    params: list[Any] = []
    for param in template:
        for sentinel, real in swaps:
            if type(param) is type(sentinel) and param == sentinel:
                param = real
                break
        params.append(param)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return list(cursor.fetchall())
