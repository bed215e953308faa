"""A queryset compiled to SQL once per thread, then run again with other values.

Django builds and compiles a queryset's SQL on every evaluation; on a hot path that runs the
same read thousands of times (a crawl's reads of one agent) the compilation costs as much
Python as the query's round trip. :class:`OneRow` builds the queryset once with a sentinel
value for each parameter, keeps the SQL, the converters and the field names, and then runs that
SQL through Django's cursor (query logging, execute wrappers and error translation included)
with the real values put where the sentinels were. The rows come back as model instances built
the way Django builds them (``Model.from_db`` after the field converters), annotations set as
attributes.

Each parameter names the model field whose database preparation it shares (a primary key, a
datetime column), so a value reaches the driver in the form the ORM would have given it. A
parameter whose sentinel does not appear in the compiled SQL is an error at compile time.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any, Generic, TypeVar

from django.db import connections
from django.db.models import Field, Model, QuerySet

M = TypeVar("M", bound=Model)

_EPOCH = datetime(1901, 2, 3, tzinfo=UTC)


def _sentinel(field: Field[Any, Any], index: int) -> Any:
    """A value no real row or query uses, distinct per parameter."""
    kind = field.get_internal_type()
    if kind == "UUIDField":
        return uuid.UUID(int=0xC0FFEE00 + index)
    if kind == "DateTimeField":
        return _EPOCH + timedelta(microseconds=7919 + index)
    raise TypeError(f"no sentinel for a {kind} parameter")


class _Plan:
    def __init__(self, sql: str, template: list[Any], slots: dict[int, str], compiler: Any):
        self.sql = sql
        self.template = template
        self.slots = slots  # position in the parameters -> parameter name
        self.compiler = compiler
        select = compiler.select
        fields = [column for column, _, _ in select[: compiler.col_count]]
        self.converters = compiler.get_converters(fields)
        info = compiler.klass_info
        start, end = info["select_fields"][0], info["select_fields"][-1] + 1
        self.model_slice = slice(start, end)
        self.names = [column[0].target.attname for column in select[start:end]]
        self.annotations = dict(compiler.annotation_col_map)


class OneRow(Generic[M]):
    """``build(**params)[:1]`` as one instance (or None), compiled once per thread.

    ``params`` maps each parameter name to the model field it is compared with."""

    def __init__(
        self, build: Callable[..., QuerySet[M]], *, using: str = "default", **params: Field
    ) -> None:
        self._build = build
        self._using = using
        self._params = params
        self._local = threading.local()

    def _plan(self) -> _Plan:
        plan: _Plan | None = getattr(self._local, "plan", None)
        if plan is not None:
            return plan
        connection = connections[self._using]
        sentinels = {name: _sentinel(f, i) for i, (name, f) in enumerate(self._params.items())}
        queryset = self._build(**sentinels)[:1]
        compiler = queryset.query.get_compiler(using=self._using)
        sql, template = compiler.as_sql()
        prepared = {
            name: self._params[name].get_db_prep_value(value, connection, prepared=False)
            for name, value in sentinels.items()
        }
        slots: dict[int, str] = {}
        for position, value in enumerate(template):
            for name, sentinel in prepared.items():
                if value == sentinel:
                    slots[position] = name
        missing = set(self._params) - set(slots.values())
        if missing:
            raise ValueError(f"parameters not found in the compiled query: {sorted(missing)}")
        plan = self._local.plan = _Plan(sql, list(template), slots, compiler)
        return plan

    def get(self, **values: Any) -> M | None:
        plan = self._plan()
        connection = connections[self._using]
        params = list(plan.template)
        for position, name in plan.slots.items():
            params[position] = self._params[name].get_db_prep_value(
                values[name], connection, prepared=False
            )
        with connection.cursor() as cursor:
            cursor.execute(plan.sql, params)
            row = cursor.fetchone()
        if row is None:
            return None
        if plan.converters:
            row = next(iter(plan.compiler.apply_converters([row], plan.converters)))
        model: type[M] = plan.compiler.klass_info["model"]
        instance = model.from_db(self._using, plan.names, row[plan.model_slice])
        for name, position in plan.annotations.items():
            setattr(instance, name, row[position])
        return instance
