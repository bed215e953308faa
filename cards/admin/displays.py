"""Read-only HTML tables for the agent page. Everything from a card is escaped."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from cards import badges
from cards.models import Agent, CrawlAttempt, Snapshot


def table(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> SafeString | str:
    rows = list(rows)
    if not rows:
        return "none"
    head = format_html_join("", "<th>{}</th>", ((h,) for h in headers))
    cells = "".join(
        format_html("<tr>{}</tr>", format_html_join("", "<td>{}</td>", ((c,) for c in row)))
        for row in rows
    )
    return format_html("<table><tr>{}</tr>{}</table>", head, SafeString(cells))


def signatures(agent: Agent) -> SafeString | str:
    outcomes = [o for o in (agent.signature or {}).get("signatures") or [] if isinstance(o, dict)]
    return table(
        ["kid", "alg", "key source", "key URL", "result", "thumbprint", "reason"],
        (
            (
                o.get("kid"),
                o.get("alg"),
                o.get("key_source"),
                o.get("key_url") or "",
                o.get("result"),
                o.get("thumbprint") or "",
                o.get("reason") or "",
            )
            for o in outcomes
        ),
    )


def findings(agent: Agent) -> SafeString | str:
    return table(
        ["severity", "code", "pointer", "message"],
        (
            (f.get("severity"), f.get("code"), f.get("pointer"), f.get("message"))
            for f in agent.findings
            if isinstance(f, dict)
        ),
    )


def attempts(agent: Agent, limit: int = 20) -> SafeString | str:
    latest = CrawlAttempt.objects.filter(agent=agent).order_by("-started_at")[:limit]
    return table(
        ["started", "ms", "HTTP", "bytes", "outcome", "error"],
        (
            (a.started_at, round(a.duration_ms), a.http_status or "", a.bytes, a.outcome, a.error)
            for a in latest
        ),
    )


def pretty_card(snapshot: Snapshot | None) -> SafeString | str:
    if snapshot is None:
        return "not fetched yet"
    text = (
        json.dumps(snapshot.data, indent=2, ensure_ascii=False)
        if snapshot.data is not None
        else bytes(snapshot.raw).decode("utf-8", "replace")
    )
    return format_html(
        "<pre style='white-space:pre-wrap;max-height:40em;overflow:auto'>{}</pre>", text
    )


def schema_names(agent: Agent) -> SafeString | str:
    names = sorted(
        {
            (row.schema, row.direction)
            for row in agent.mode_rows.exclude(schema__isnull=True).only("schema", "direction")
        }
    )
    return table(["schema", "direction"], names)


def embed_snippets(agent: Agent, base_url: str) -> SafeString | str:
    return table(
        ["format", "snippet"],
        (
            (kind, format_html("<code>{}</code>", text))
            for kind, text in badges.embed_snippets(agent, base_url).items()
        ),
    )


def live_checks(agent: Agent) -> SafeString | str:
    """The last live run's checks (the excerpts are on the catalogue page and in the API)."""
    report = agent.live if isinstance(agent.live, dict) else {}
    rows = [c for c in report.get("checks") or [] if isinstance(c, dict)]
    return table(
        ["id", "level", "outcome", "since", "interface / skill", "detail"],
        (
            (
                c.get("id"),
                c.get("level"),
                c.get("outcome"),
                c.get("since") or "",
                " · ".join(str(part) for part in (c.get("interface"), c.get("skill")) if part),
                c.get("detail") or "",
            )
            for c in rows
        ),
    )
