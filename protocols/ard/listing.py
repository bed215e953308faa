"""GET /agents: the deterministic list (5.3.4), its filter expression (Appendix A) and the
change feed mirrors use (``updatedSince``)."""

from __future__ import annotations

import datetime as dt
import re
import uuid
from typing import Any

from django.db.models import F, Q, QuerySet
from django.db.models.fields.tuple_lookups import Tuple, TupleGreaterThan, TupleLessThan
from django.utils.dateparse import parse_date

from cards.models import Agent
from cards.reads import params
from protocols.ard import filters
from protocols.ard.errors import invalid

# field op value: op is = (or :) for terms, > or >= for dates; values are comma-separated
# (OR), optionally quoted; clauses are joined by AND.
_CLAUSE = re.compile(r"^\s*([A-Za-z][A-Za-z0-9_.]*)\s*(>=|=|:|>)\s*(.+?)\s*$", re.S)
_AND = re.compile(r"\s+AND\s+", re.I)
ORDERS = {
    "identifier": "ard_identifier",
    "displayName": "name",
    "createdAt": "created_at",
    "updatedAt": "updated_at",
}


def _when(text: str) -> dt.datetime:
    """A date or a date-time (UTC without a zone); impossible ones (February 30th, an offset of
    a day) are a 400 like any other unreadable value."""
    found = params.moment(text, assume_utc=True)
    if found is None and len(text) <= 10:
        try:
            day = parse_date(text)
        except ValueError:
            day = None
        if day is not None:
            found = dt.datetime(day.year, day.month, day.day, tzinfo=dt.UTC)
    if found is None:
        raise invalid(f"filter: {text!r} is not an ISO 8601 date or time", field="filter")
    return found


def _unquote(text: str) -> str:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    return text


def parse_filter(expression: str) -> tuple[dict[str, list[str]], Q]:
    """The filter expression as ARD terms (shared with search) and the list-only conditions."""
    terms: dict[str, list[str]] = {}
    extra = Q()
    if not expression.strip():
        return terms, extra
    if "\x00" in expression:
        raise invalid("filter contains a NUL character", field="filter")
    for clause in _AND.split(expression.strip()):
        match = _CLAUSE.match(clause)
        if match is None:
            raise invalid(
                f"filter: cannot read {clause.strip()!r}; write field = 'value' AND ...",
                field="filter",
            )
        name, op, raw = match.groups()
        values = [_unquote(v) for v in _unquote(raw).split(",") if v.strip()]
        if not values:
            raise invalid(f"filter: {name} has no value", field="filter")
        if name in ("createdAfter", "updatedAfter"):
            column = "created_at" if name == "createdAfter" else "updated_at"
            extra &= Q(**{f"{column}__gt": _when(values[0])})
            continue
        if op in (">", ">="):
            raise invalid(f"filter: {name} takes = (only dates take >)", field="filter")
        if name == "displayName":
            match_name = Q()
            for value in values:
                match_name |= Q(name__icontains=value)
            extra &= match_name
            continue
        term = "publisher" if name == "publisherId" else name
        if term not in filters.TERMS:
            raise invalid(
                f"filter term not indexed by this registry: {name}. Supported: displayName, "
                f"publisherId, createdAfter, updatedAfter, {', '.join(filters.TERMS)}",
                field="filter",
            )
        terms.setdefault(term, []).extend(values)
    return filters.check(terms), extra


def order(text: str) -> tuple[str, bool]:
    """``orderBy``: a field and ASC or DESC (default: identifier ascending)."""
    parts = text.split()
    if not parts:
        return "ard_identifier", False
    if (
        len(parts) > 2
        or parts[0] not in ORDERS
        or (len(parts) == 2 and parts[1].upper() not in ("ASC", "DESC"))
    ):
        raise invalid(
            f"orderBy takes one of {', '.join(ORDERS)}, optionally followed by ASC or DESC",
            field="orderBy",
        )
    return ORDERS[parts[0]], len(parts) == 2 and parts[1].upper() == "DESC"


def after(rows: QuerySet[Agent], column: str, desc: bool, last: list[Any]) -> QuerySet[Agent]:
    value, pk = last
    if column in ("created_at", "updated_at") and isinstance(value, str):
        value = dt.datetime.fromisoformat(value)
    # One row comparison, ``(column, id) > (value, pk)``: an index bound, not a filter.
    lookup = TupleLessThan if desc else TupleGreaterThan
    return rows.filter(lookup(Tuple(F(column), F("pk")), (value, uuid.UUID(str(pk)))))


def ordered(rows: QuerySet[Agent], column: str, desc: bool) -> QuerySet[Agent]:
    sign = "-" if desc else ""
    return rows.order_by(f"{sign}{column}", f"{sign}pk")
