"""What the current log lines are about: a request id, a task name, an agent id.

They are contextvars, so each asyncio task (an ASGI request) and each thread (a WSGI request,
a worker's task) sees its own values and concurrent requests never mix their ids. The web
middleware (``registry.logs.middleware``) and the Celery signals (``registry.logs.task_signals``)
set them; :class:`ContextFilter` copies them onto every record a handler writes.
"""

from __future__ import annotations

import logging
import re
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

request_id: ContextVar[str | None] = ContextVar("registry_request_id", default=None)
task_name: ContextVar[str | None] = ContextVar("registry_task_name", default=None)
agent_id: ContextVar[str | None] = ContextVar("registry_agent_id", default=None)

# An id a client or a proxy sends is kept only when it cannot forge or break a log line: short,
# and nothing but letters, digits, dots, underscores and hyphens (no spaces, quotes, newlines).
_SAFE_ID = re.compile(r"[A-Za-z0-9._-]{1,64}")


def new_request_id() -> str:
    """A fresh id: 16 hex digits (64 random bits), short enough to read in a text line."""
    return secrets.token_hex(8)


def accepted_request_id(value: str | None) -> str | None:
    """``value`` when it is safe to log and echo back as it is, else None."""
    if value is not None and _SAFE_ID.fullmatch(value):
        return value
    return None


@contextmanager
def bound(
    *, request: str | None = None, task: str | None = None, agent: str | None = None
) -> Iterator[None]:
    """Set the given values for the duration of the block, then restore the previous ones."""
    tokens = [
        (var, var.set(value))
        for var, value in ((request_id, request), (task_name, task), (agent_id, agent))
        if value is not None
    ]
    try:
        yield
    finally:
        for var, token in reversed(tokens):
            var.reset(token)


class ContextFilter(logging.Filter):
    """Writes the request id, task name and agent id that are known onto each record (a value
    given with the record, ``extra=``, is kept; an unknown one is left unset, so Celery's task
    format still shows its own ``???``), and ``request_tag``, the text format's ``[id] `` prefix
    (empty without an id). A filter, not a formatter: every format, ours or Celery's, reads the
    same attributes; the JSON one writes null for those left unset. Passes every record."""

    def filter(self, record: logging.LogRecord) -> bool:
        fields = record.__dict__
        for name, var in (
            ("request_id", request_id),
            ("task_name", task_name),
            ("agent_id", agent_id),
        ):
            value = var.get()
            if value is not None and fields.get(name) is None:
                fields[name] = value
        rid = fields.get("request_id")
        record.request_tag = f"[{rid}] " if rid else ""
        return True
