"""The one way query parameters are read: strict, with a problem+json 400 naming the parameter.

An unknown parameter is an error too, so a typo (``?tga=x``) does not silently return
everything. Every list uses the same ``limit`` rule: an integer from 1 to 100, default 20.
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Iterable, Sequence
from typing import Any

from django.utils.dateparse import parse_datetime

from registry.errors import ProblemError

LIMIT_DEFAULT = 20
LIMIT_MAX = 100
MAX_LENGTH = 1000


def invalid(name: str, message: str) -> ProblemError:
    """A 400 problem for one parameter; ``message`` completes a sentence that starts with its
    name ("limit must be ...")."""
    detail = f"{name} {message}"
    return ProblemError(
        status=400,
        slug="invalid-parameter",
        title="Invalid query parameter",
        detail=detail,
        errors=[{"pointer": f"#/{name}", "message": message}],
    )


class Query:
    """The query string of one request, checked against the parameters an endpoint knows."""

    def __init__(self, data: Any, known: Iterable[str]) -> None:
        self.data = data
        self.known = frozenset(known)
        unknown = sorted(set(data.keys()) - self.known)
        if unknown:
            names = ", ".join(unknown)
            raise ProblemError(
                status=400,
                slug="invalid-parameter",
                title="Unknown query parameter",
                detail=f"Unknown query parameter: {names}. Known: {', '.join(sorted(self.known))}.",
                errors=[
                    {"pointer": f"#/{name}", "message": "unknown parameter"} for name in unknown
                ],
            )
        for name in data.keys():
            for value in data.getlist(name):
                if "\x00" in value:
                    raise invalid(name, "contains a NUL character")
                if len(value) > MAX_LENGTH:
                    raise invalid(name, f"is longer than {MAX_LENGTH} characters")

    def all(self, name: str) -> list[str]:
        """Every value of a repeatable parameter, blank ones dropped."""
        return [v.strip() for v in self.data.getlist(name) if v.strip()]

    def one(self, name: str, default: str = "") -> str:
        values = self.data.getlist(name)
        if len(values) > 1:
            raise invalid(name, "is given more than once")
        return values[0].strip() if values else default

    def present(self, name: str) -> bool:
        return name in self.data

    def boolean(self, name: str) -> bool | None:
        """True, False, or None when absent; given with no value (``?streaming=``) it is the
        client's error, as for ``direction`` and ``mode``: an empty value is not a boolean."""
        if not self.present(name):
            return None
        text = self.one(name).lower()
        if text in ("true", "1", "yes"):
            return True
        if text in ("false", "0", "no"):
            return False
        raise invalid(name, "must be true or false")

    def choice(
        self, name: str, choices: Sequence[str], default: str = "", *, blank: bool = True
    ) -> str:
        """One of ``choices``, or ``default`` when absent; ``blank=False`` refuses a parameter
        given with an empty value (``?direction=``) instead of reading it as absent."""
        text = self.one(name, default)
        if (text and text not in choices) or (not blank and self.present(name) and not text):
            raise invalid(name, f"must be one of {', '.join(choices)}")
        return text

    def choices(self, name: str, choices: Sequence[str], *, blank: bool = True) -> list[str]:
        """Every value, each one of ``choices``; ``blank=False`` refuses an empty value
        (``?live=``) instead of dropping it."""
        if not blank and any(not v.strip() for v in self.data.getlist(name)):
            raise invalid(name, f"must be one of {', '.join(choices)}")
        values = self.all(name)
        for value in values:
            if value not in choices:
                raise invalid(name, f"must be one of {', '.join(choices)}")
        return values

    def limit(self, default: int = LIMIT_DEFAULT) -> int:
        if not self.present("limit"):
            return default
        text = self.one("limit")
        if not text.isdigit() or not 1 <= int(text) <= LIMIT_MAX:
            raise invalid("limit", f"must be an integer from 1 to {LIMIT_MAX}")
        return int(text)

    def uuid(self, name: str) -> uuid.UUID | None:
        text = self.one(name)
        if not text:
            return None
        try:
            return uuid.UUID(text)
        except ValueError:
            raise invalid(name, "must be a UUID") from None

    def timestamp(self, name: str) -> dt.datetime | None:
        text = self.one(name)
        if not text:
            return None
        found = moment(text)
        if found is None:
            raise invalid(name, "must be an RFC 3339 date-time with a time zone")
        return found


def moment(text: str, *, assume_utc: bool = False) -> dt.datetime | None:
    """An ISO 8601 / RFC 3339 date-time as an aware datetime in UTC, or None when it is not one
    (February 30th, an offset of 24 hours or more). Without a zone it is None, or UTC with
    ``assume_utc``. Moved to UTC here, never handed to the database with its offset: PostgreSQL
    refuses offsets beyond 15:59 that RFC 3339 allows. A time that leaves years 1-9999 once in
    UTC (``0001-01-01T00:00:00+01:00``) is the first or last instant there is."""
    if len(text) > 64 or "\x00" in text:
        return None
    try:
        found = parse_datetime(text.strip())
    except ValueError:
        return None
    if found is None:
        return None
    if found.tzinfo is None:
        if not assume_utc:
            return None
        found = found.replace(tzinfo=dt.UTC)
    try:
        return found.astimezone(dt.UTC)
    except (OverflowError, ValueError):
        offset = found.utcoffset() or dt.timedelta()
        edge = dt.datetime.min if offset > dt.timedelta() else dt.datetime.max
        return edge.replace(tzinfo=dt.UTC)
