"""Live check reports for the tests of the pages that show them: built by the live package's
own code (``live.report``, ``live.exchange``), stored through ``live.store.record`` as a run
stores its report."""

from __future__ import annotations

import datetime as dt
from typing import Any

from cards.models import Agent
from cards.rendering.documents import when
from live import store
from live.exchange import Exchange
from live.report import FAIL, MUST, PASS, Check, Run, counts, since_of

INTERFACE = "https://agent.example.com/a2a"


def exchange(
    sent: str, body: bytes | None, *, status: int | None = 200, error: str = ""
) -> Exchange:
    """One request and its answer (``body`` None: no answer, ``error`` says why)."""
    out = Exchange(method="POST", url=INTERFACE, sent=sent, elapsed_ms=12.5)
    if body is None:
        out.error, out.error_code = error or "connection refused", "connect"
    else:
        out.status, out.body, out.content_type = status, body, "application/json"
    return out


def passing_get() -> Check:
    return Check(
        id="CORE-GET-002",
        title="GetTask returns TaskNotFoundError for an unknown task id",
        level=MUST,
        outcome=PASS,
        detail="error -32001 (TaskNotFoundError)",
        interface=INTERFACE,
        exchange=exchange(
            '{"jsonrpc": "2.0", "id": 1, "method": "GetTask"}',
            b'{"jsonrpc": "2.0", "id": 1, "error": {"code": -32001, "message": "Task not found"}}',
        ),
    )


def failing_method(answer: bytes = b'{"jsonrpc": "2.0", "id": 2, "result": {}}') -> Check:
    return Check(
        id="REG-JSONRPC-METHOD",
        title="An unknown JSON-RPC method returns -32601",
        level=MUST,
        outcome=FAIL,
        detail="expected error -32601 (Method not found), got a result",
        interface=INTERFACE,
        exchange=exchange('{"jsonrpc": "2.0", "id": 2, "method": "registry/noSuchMethod"}', answer),
    )


def record(
    agent: Agent,
    checks: list[Check],
    *,
    at: dt.datetime,
    endpoint: str = "answers",
    messages: bool = False,
) -> dict[str, Any]:
    """Store a run of ``checks`` made at ``at`` as ``live.runner.check_agent`` stores one: each
    check's ``since`` carried over from the report before while its outcome stays the same."""
    stamp = when(at) or ""
    rows = since_of([c.as_dict() for c in checks], store.previous(agent.pk), stamp)
    failing = [row["since"] for row in rows if row["outcome"] == FAIL]
    report = {
        "checked_at": stamp,
        "outcome": Run(checks=list(checks), endpoint=endpoint).outcome(),
        "endpoint": endpoint,
        "counts": counts(rows),
        "checks": rows,
        "messages": {"enabled": messages},
        "failing_since": min(failing) if failing else None,
    }
    store.record(agent.pk, report, at)
    agent.refresh_from_db()
    return report
