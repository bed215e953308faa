"""One slice of an agent's long lists, read without loading the whole list.

An agent's interfaces (the card's ``supportedInterfaces``) and its live checks' rows are JSON
arrays on the agent row; a card may declare 11,000 interfaces and a live run may store tens of
thousands of rows. The documents show their first items (cards.rendering.bounds); the rest is
read here a page at a time: on PostgreSQL the slice and the length are computed by the database
(``jsonb_path_query_array``, ``jsonb_array_length``), so a page costs its own items, not the
list's. The agents are the caller's, from the one visibility gate (:mod:`cards.reads.gate`).
"""

from __future__ import annotations

import json
from typing import Any

from django.db import connection
from django.db.models import QuerySet
from django.db.models.expressions import RawSQL

from cards.models import Agent

# The arrays this module reads: name -> (SQL over the agent's table, Python over the row).
INTERFACES = "interfaces"
LIVE_CHECKS = "live_checks"


def _sql(which: str) -> str:
    table = connection.ops.quote_name(Agent._meta.db_table)
    if which == INTERFACES:
        return f"{table}.{connection.ops.quote_name('interfaces')}"
    return f"({table}.{connection.ops.quote_name('live')} -> 'checks')"


def _python(agent: Agent, which: str) -> list[Any]:
    if which == INTERFACES:
        items = agent.interfaces
    else:
        items = (agent.live or {}).get("checks") if isinstance(agent.live, dict) else None
    return items if isinstance(items, list) else []


def array_slice(
    agents: QuerySet[Agent], pk: Any, which: str, offset: int, count: int
) -> tuple[int, list[Any]] | None:
    """(the list's length, its items ``offset`` to ``offset + count - 1``) of the agent ``pk``
    among ``agents`` (a gated queryset); None when it is not there."""
    rows = agents.filter(pk=pk)
    if connection.vendor != "postgresql":
        agent = rows.only("id", "interfaces", "live").first()
        if agent is None:
            return None
        items = _python(agent, which)
        return len(items), items[offset : offset + count]
    total, page = slice_columns(which, offset, offset + count - 1)
    found = rows.annotate(part_total=total, part_items=page).values_list("part_total", "part_items")
    row = found.first()
    if row is None:
        return None
    total_count, items = row
    return int(total_count or 0), items_of(items)


def slice_columns(which: str, first: Any, last: Any) -> tuple[RawSQL, RawSQL]:
    """The SQL of the list's length and of its items ``first`` to ``last`` (PostgreSQL), for
    annotating a gated query of agents (the catalogue page reads both with its agent row)."""
    target = _sql(which)
    total = RawSQL(
        f"CASE jsonb_typeof({target}) WHEN 'array' THEN jsonb_array_length({target}) ELSE 0 END",
        [],
    )
    page = RawSQL(
        f"CASE jsonb_typeof({target}) WHEN 'array' THEN jsonb_path_query_array({target}, "
        "'$[$first to $last]', jsonb_build_object('first', %s, 'last', %s)) "
        "ELSE '[]'::jsonb END",
        [first, last],
    )
    return total, page


def items_of(value: Any) -> list[Any]:
    """A slice read by :func:`slice_columns`, as a list (a driver may leave jsonb as text)."""
    if isinstance(value, str):
        value = json.loads(value)
    return list(value or [])


def live_head(agents: QuerySet[Agent]) -> QuerySet[Agent]:
    """``agents`` with the live report's rows left in the database: the report without its
    ``checks`` as ``live_head`` (on PostgreSQL; elsewhere the whole report is read)."""
    if connection.vendor != "postgresql":
        return agents.annotate(live_head=RawSQL("NULL", []))
    quote = connection.ops.quote_name
    column = f"{quote(Agent._meta.db_table)}.{quote('live')}"
    head = RawSQL(
        f"CASE jsonb_typeof({column}) WHEN 'object' THEN {column} - 'checks' ELSE NULL END", []
    )
    return agents.defer("live").annotate(live_head=head)


def report_head(agent: Agent) -> dict[str, Any]:
    """The live report of an agent read through :func:`live_head`, without its rows."""
    head = getattr(agent, "live_head", None)
    if isinstance(head, str):
        head = json.loads(head)
    if isinstance(head, dict):
        return head
    if "live" in agent.get_deferred_fields():
        return {}
    report = agent.live if isinstance(agent.live, dict) else {}
    return {key: value for key, value in report.items() if key != "checks"}
