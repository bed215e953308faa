"""The one pagination: keyset cursors, opaque and tamper-evident, stable under inserts.

A cursor holds the sort key of the last row of a page, signed with the secret key and bound to
the list it came from, so a cursor cannot be forged or replayed on another list. Rows inserted
before or after the cursor's position never shift a page.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import hashlib
import hmac
import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.db.models import F, Q, QuerySet
from django.db.models.fields.tuple_lookups import Tuple, TupleGreaterThan, TupleLessThan

from cards.reads.params import invalid

CURSOR_PATTERN = r"^[A-Za-z0-9_-]{0,600}$"  # empty: the first page
_TAG_BYTES = 12


def _tag(scope: str, payload: bytes) -> bytes:
    key = hashlib.sha256(b"cursor:" + settings.SECRET_KEY.encode()).digest()
    return hmac.new(key, scope.encode() + b"\x00" + payload, hashlib.sha256).digest()[:_TAG_BYTES]


def _plain(value: Any) -> Any:
    if isinstance(value, dt.datetime):
        return ["t", value.isoformat()]
    if isinstance(value, uuid.UUID):
        return ["u", str(value)]
    return value


def _typed(value: Any) -> Any:
    if isinstance(value, list) and len(value) == 2 and value[0] in ("t", "u"):
        return dt.datetime.fromisoformat(value[1]) if value[0] == "t" else uuid.UUID(value[1])
    return value


def encode(scope: str, values: Sequence[Any]) -> str:
    payload = json.dumps([_plain(v) for v in values], separators=(",", ":")).encode()
    raw = _tag(scope, payload) + payload
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode(scope: str, text: str) -> list[Any]:
    """The sort key in a cursor this registry issued for ``scope``; a 400 otherwise."""
    problem = invalid("cursor", "is not a cursor this list issued; start again from the first page")
    if len(text) > 600:
        raise problem
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        raise problem from None
    tag, payload = raw[:_TAG_BYTES], raw[_TAG_BYTES:]
    if len(tag) != _TAG_BYTES or not hmac.compare_digest(tag, _tag(scope, payload)):
        raise problem
    try:
        values = json.loads(payload)
        return [_typed(v) for v in values]
    except (ValueError, TypeError):
        raise problem from None


def offset_cursor(scope: str, offset: int) -> str:
    """A cursor for ranked lists, which page by position (relevance has no stable keyset)."""
    return encode(scope, [offset])


def cursor_offset(scope: str, text: str) -> int:
    """The position in an :func:`offset_cursor` (0 for no cursor); a 400 for anything else."""
    if not text:
        return 0
    values = decode(scope, text)
    if len(values) != 1 or not isinstance(values[0], int) or values[0] < 0:
        raise invalid("cursor", "is not a cursor this list issued; start again from the first page")
    return values[0]


@dataclass(frozen=True)
class Keyset:
    """A sort order, such as ``("-created_at", "-id")``, named for the list it pages."""

    scope: str
    order: tuple[str, ...]

    @property
    def fields(self) -> list[str]:
        return [name.lstrip("-") for name in self.order]

    def after(self, values: Sequence[Any]) -> Q:
        """Rows strictly after ``values`` in this order: one row comparison such as
        ``(created_at, id) < (X, Y)`` when every key sorts the same way, which PostgreSQL
        applies as a bound of the matching index (a deep page costs what the first does)."""
        fields = self.fields
        if len(fields) == 1:
            name = self.order[0]
            return Q(**{f"{fields[0]}__{'lt' if name.startswith('-') else 'gt'}": values[0]})
        descending = {name.startswith("-") for name in self.order}
        if len(descending) == 1:
            lookup = TupleLessThan if descending == {True} else TupleGreaterThan
            return Q(lookup(Tuple(*(F(field) for field in fields)), tuple(values)))
        # Mixed directions have no row comparison; lists keep their keys one-way (facets.py).
        condition = Q()
        equal = Q()
        for name, value in zip(self.order, values, strict=True):
            field = name.lstrip("-")
            step = Q(**{f"{field}__{'lt' if name.startswith('-') else 'gt'}": value})
            condition |= equal & step
            equal &= Q(**{field: value})
        return condition

    def values(self, cursor: str) -> list[Any] | None:
        """The sort key a cursor holds (None without one); a 400 problem if it is not ours."""
        if not cursor:
            return None
        values = decode(self.scope, cursor)
        if len(values) != len(self.order):
            raise invalid("cursor", "is not a cursor this list issued")
        return values

    def apply(self, queryset: QuerySet[Any], cursor: str) -> QuerySet[Any]:
        return self.ordered(queryset, self.values(cursor))

    def ordered(self, queryset: QuerySet[Any], values: list[Any] | None) -> QuerySet[Any]:
        queryset = queryset.order_by(*self.order)
        return queryset if values is None else queryset.filter(self.after(values))

    def next_cursor(self, last: Sequence[Any]) -> str:
        return encode(self.scope, last)


def next_link(request: Any, cursor: str | None) -> str | None:
    """The URL of the next page: this request's URL with ``cursor`` replaced."""
    if cursor is None:
        return None
    params = [(k, v) for k, values in request.GET.lists() if k != "cursor" for v in values]
    params.append(("cursor", cursor))
    return request.build_absolute_uri(request.path) + "?" + urlencode(params)
