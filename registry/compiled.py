"""A queryset compiled to SQL once per thread, then run again with other values.

Django builds and compiles a queryset's SQL on every evaluation; on a hot path that runs the
same read thousands of times (a crawl's reads of one agent) the compilation costs as much
Python as the query's round trip. :class:`OneRow` builds the queryset once with a sentinel
value for each parameter, keeps the SQL, the converters and the field names, and then runs that
SQL through Django's cursor (query logging, execute wrappers and error translation included)
with the real values put where the sentinels were. :class:`Rows` does the same for a read of
many rows (a page's agents by their ids, given as one array parameter). The rows come back as
model instances built the way Django builds them (``Model.from_db`` after the field
converters), annotations set as attributes.

Each parameter names the model field whose database preparation it shares (a primary key, a
datetime column), so a value reaches the driver in the form the ORM would have given it. A
parameter whose sentinel does not appear in the compiled SQL is an error at compile time.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Iterable
from datetime import UTC, datetime, timedelta
from typing import Any, Generic, TypeVar

from django.db import connections
from django.db.models import Field, Model, QuerySet

M = TypeVar("M", bound=Model)

_EPOCH = datetime(1901, 2, 3, tzinfo=UTC)
_INTEGERS = ("AutoField", "BigAutoField", "IntegerField", "BigIntegerField")


def prepared_cursor(connection: Any) -> Any:
    """A cursor whose statements PostgreSQL prepares once per connection
    (registry/postgresql/base.py); Django's cursor on another database."""
    prepared = getattr(connection, "prepared_cursor", None)
    return prepared() if prepared is not None else connection.cursor()


def uuid_array(ids: Iterable[uuid.UUID]) -> str:
    """``ids`` as one PostgreSQL array literal (for ``%s::uuid[]``): hundreds of ids are one
    value for Django and the driver to pass, not one each (32 hex digits each: PostgreSQL reads
    a UUID without its hyphens too)."""
    return "{" + ",".join(pk.hex for pk in ids) + "}"


def among(rows: QuerySet[M], ids: Any) -> QuerySet[M]:
    """``rows`` whose primary key is one of ``ids``, given as one array parameter
    (:func:`uuid_array`; PostgreSQL): in a :class:`Compiled` query, ``ids`` is a
    :class:`UUIDArray` parameter."""
    meta = rows.model._meta
    column = f'"{meta.db_table}"."{meta.pk.column}"'
    return rows.extra(where=[f"{column} = ANY(%s::uuid[])"], params=[uuid_array(ids)])  # noqa: S610


class UUIDArray:
    """A parameter holding many UUIDs, passed as one array literal (:func:`uuid_array`): the
    queryset compares with ``uuid_array(value)``, as :func:`among` does."""

    is_relation = False

    def get_internal_type(self) -> str:
        return "UUIDArray"

    def get_db_prep_value(self, value: Any, connection: Any, prepared: bool = False) -> Any:
        return uuid_array(value)


Param = Field | UUIDArray  # what a parameter is compared with


def _sentinel(field: Param, index: int) -> Any:
    """A value no real row or query uses, distinct per parameter (a foreign key takes its
    target's kind)."""
    target = getattr(field, "target_field", field) if field.is_relation else field
    kind = target.get_internal_type()
    if kind == "UUIDArray":
        return [uuid.UUID(int=0xC0FFEE00 + index)]
    if kind == "UUIDField":
        return uuid.UUID(int=0xC0FFEE00 + index)
    if kind == "DateTimeField":
        return _EPOCH + timedelta(microseconds=7919 + index)
    if kind in _INTEGERS:
        return -424242 - index
    raise TypeError(f"no sentinel for a {kind} parameter")


class Compiled:
    """The SQL of ``build(**params)``, compiled once with sentinels, and where each parameter
    goes in it.

    ``params`` maps each parameter name to the model field it is compared with; every one must
    appear in the compiled SQL."""

    def __init__(
        self, build: Callable[..., QuerySet[Any]], *, using: str = "default", **params: Param
    ) -> None:
        self.using = using
        self._fields = params
        connection = connections[using]
        sentinels = {name: _sentinel(f, i) for i, (name, f) in enumerate(params.items())}
        self.compiler = build(**sentinels).query.get_compiler(using=using)
        self.sql, template = self.compiler.as_sql()
        self._template = list(template)
        prepared = {name: self._prep(name, value, connection) for name, value in sentinels.items()}
        self._slots: dict[int, str] = {}  # position in the parameters -> parameter name
        for position, value in enumerate(self._template):
            for name, sentinel in prepared.items():
                if value == sentinel:
                    self._slots[position] = name
        missing = set(params) - set(self._slots.values())
        if missing:
            raise ValueError(f"parameters not found in the compiled query: {sorted(missing)}")

    def _prep(self, name: str, value: Any, connection: Any) -> Any:
        return self._fields[name].get_db_prep_value(value, connection, prepared=False)

    def params(self, connection: Any, values: dict[str, Any]) -> list[Any]:
        """The query's parameters with ``values`` where the sentinels were, each in the form
        ``connection``'s driver gets (a UUID on PostgreSQL, hex on SQLite)."""
        params = self._template.copy()
        for position, name in self._slots.items():
            params[position] = self._prep(name, values[name], connection)
        return params

    def one(self, **values: Any) -> tuple[Any, ...] | None:
        """The first row of the query run with ``values``, as the driver gives it."""
        connection = connections[self.using]
        with prepared_cursor(connection) as cursor:
            cursor.execute(self.sql, self.params(connection, values))
            row = cursor.fetchone()
        return tuple(row) if row is not None else None

    def all(self, **values: Any) -> list[tuple[Any, ...]]:
        """Every row of the query run with ``values``, as the driver gives them."""
        connection = connections[self.using]
        with prepared_cursor(connection) as cursor:
            cursor.execute(self.sql, self.params(connection, values))
            return [tuple(row) for row in cursor.fetchall()]


class _Plan:
    """A :class:`Compiled` model query with what turns its row into an instance."""

    def __init__(self, compiled: Compiled):
        self.compiled = compiled
        compiler = compiled.compiler
        select = compiler.select
        fields = [column for column, _, _ in select[: compiler.col_count]]
        self.converters = compiler.get_converters(fields)
        info = compiler.klass_info
        start, end = info["select_fields"][0], info["select_fields"][-1] + 1
        self.model_slice = slice(start, end)
        self.names = [column[0].target.attname for column in select[start:end]]
        self.annotations = dict(compiler.annotation_col_map)

    def instances(self, rows: list[tuple[Any, ...]]) -> list[Any]:
        """Model instances of ``rows`` as the driver gave them, built as Django builds them."""
        compiler = self.compiled.compiler
        if self.converters:
            rows = list(compiler.apply_converters(rows, self.converters))
        model = compiler.klass_info["model"]
        using, names, part = self.compiled.using, self.names, self.model_slice
        out = []
        for row in rows:
            instance = model.from_db(using, names, row[part])
            for name, position in self.annotations.items():
                setattr(instance, name, row[position])
            out.append(instance)
        return out


class Rows(Generic[M]):
    """Every row of ``build(**params)`` as instances, compiled once per thread (the compiler's
    converters belong to the thread's connection). For a read of many rows by their ids, give
    the ids as one :class:`UUIDArray` parameter (PostgreSQL).

    ``params`` maps each parameter name to the model field (or :class:`UUIDArray`) it is
    compared with."""

    def __init__(
        self, build: Callable[..., QuerySet[M]], *, using: str = "default", **params: Param
    ) -> None:
        self._build = build
        self._using = using
        self._params = params
        self._local = threading.local()

    def _plan(self) -> _Plan:
        plan: _Plan | None = getattr(self._local, "plan", None)
        if plan is None:
            compiled = Compiled(self._build, using=self._using, **self._params)
            plan = self._local.plan = _Plan(compiled)
        return plan

    def all(self, **values: Any) -> list[M]:
        plan = self._plan()
        return plan.instances(plan.compiled.all(**values))


class OneRow(Rows[M]):
    """``build(**params)[:1]`` as one instance (or None), compiled once per thread."""

    def __init__(
        self, build: Callable[..., QuerySet[M]], *, using: str = "default", **params: Param
    ) -> None:
        super().__init__(lambda **sentinels: build(**sentinels)[:1], using=using, **params)

    def get(self, **values: Any) -> M | None:
        plan = self._plan()
        row = plan.compiled.one(**values)
        return None if row is None else plan.instances([row])[0]
