"""ARD explore: facet buckets over the matched set (5.3.3), one aggregate query per facet."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from django.core.exceptions import EmptyResultSet
from django.db import connection
from django.db.models import Count, QuerySet

from cards.models import Agent, Extension, Mode
from protocols.ard.errors import invalid
from protocols.ard.filters import A2A_TYPE
from protocols.ard.requests import integer, only

Counts = list[tuple[str, int]]


def _grouped(rows: QuerySet[Any], column: str, agent: str = "agent") -> Counts:
    found = (
        rows.exclude(**{column: ""})
        .values(column)
        .annotate(n=Count(agent, distinct=True))
        .values_list(column, "n")
    )
    return [(str(value), n) for value, n in found if value is not None]


def _subquery(agents: QuerySet[Agent]) -> tuple[str, tuple[Any, ...]] | None:
    """The SQL of the matched set's ids, or None when it is empty by construction."""
    try:
        return agents.values("pk").query.sql_with_params()
    except EmptyResultSet:
        return None


def _sql_counts(agents: QuerySet[Agent], value: str, source: str) -> Counts:
    """``SELECT value, count(*) FROM source`` over the matched agents (PostgreSQL), grouped."""
    built = _subquery(agents)
    if built is None:
        return []
    sql, params = built
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {value}, count(*) FROM {source} WHERE a.id IN ({sql}) GROUP BY 1",  # noqa: S608
            params,
        )
        return [(v, n) for v, n in cursor.fetchall()]


def _array(column: str) -> Callable[[QuerySet[Agent]], Counts]:
    def counts(agents: QuerySet[Agent]) -> Counts:
        if connection.vendor == "postgresql":
            return _sql_counts(agents, "v", f"cards_agent a, unnest(a.{column}) v")
        tally: Counter[str] = Counter()
        for values in agents.values_list(column, flat=True):
            tally.update(set(values or []))
        return list(tally.items())

    return counts


def _publisher(agents: QuerySet[Agent]) -> Counts:
    if connection.vendor == "postgresql":
        return _sql_counts(agents, "split_part(a.ard_identifier, ':', 3)", "cards_agent a")
    tally: Counter[str] = Counter()
    for identifier in agents.values_list("ard_identifier", flat=True):
        tally[(identifier or "::").split(":")[2]] += 1
    return list(tally.items())


def _modes(direction: str) -> Callable[[QuerySet[Agent]], Counts]:
    def counts(agents: QuerySet[Agent]) -> Counts:
        rows = Mode.objects.filter(agent__in=agents.values("pk"), direction=direction)
        return _grouped(rows, "media_type")

    return counts


FACETS: dict[str, Callable[[QuerySet[Agent]], Counts]] = {
    "type": lambda agents: [(A2A_TYPE, agents.count())],
    "tags": _array("tags"),
    "capabilities": _array("capabilities"),
    "publisher": _publisher,
    "version": lambda agents: _grouped(agents, "version", "pk"),
    "inputModes": _modes(Mode.Direction.INPUT),
    "outputModes": _modes(Mode.Direction.OUTPUT),
    "schema": lambda agents: _grouped(Mode.objects.filter(agent__in=agents.values("pk")), "schema"),
    "signature": lambda agents: _grouped(agents, "signature_status", "pk"),
    "health": lambda agents: _grouped(agents, "health", "pk"),
    "extensions": lambda agents: _grouped(
        Extension.objects.filter(agent__in=agents.values("pk")), "uri"
    ),
}
MAX_FACETS = 10


def requested(result_type: Any) -> list[tuple[str, int, int]]:
    """``resultType.facets`` checked: (field, limit, minCount) for each."""
    if not isinstance(result_type, dict):
        raise invalid("resultType is required: an object with facets", field="resultType")
    only(result_type, {"facets"}, "resultType")
    facets = result_type.get("facets")
    if not isinstance(facets, list) or not 1 <= len(facets) <= MAX_FACETS:
        raise invalid(
            f"resultType.facets must be an array of 1 to {MAX_FACETS} facets",
            field="resultType.facets",
        )
    out = []
    for facet in facets:
        if not isinstance(facet, dict):
            raise invalid("each facet is an object with a field", field="resultType.facets")
        only(facet, {"field", "limit", "minCount"}, "resultType.facets[]")
        name = facet.get("field")
        if name not in FACETS:
            raise invalid(
                f"facet field not indexed by this registry: {name!r}. "
                f"Supported: {', '.join(FACETS)}",
                field="resultType.facets[].field",
            )
        limit = integer(facet, "limit", default=20, low=1, high=100)
        min_count = integer(facet, "minCount", default=1, low=1, high=10**9)
        out.append((name, limit, min_count))
    return out


def buckets(agents: QuerySet[Agent], name: str, limit: int, min_count: int) -> dict[str, Any]:
    counts = sorted(
        ((value, n) for value, n in FACETS[name](agents) if n >= min_count),
        key=lambda pair: (-pair[1], pair[0]),
    )
    shown, rest = counts[:limit], counts[limit:]
    return {
        "buckets": [{"value": value, "count": n} for value, n in shown],
        "otherCount": sum(n for _, n in rest),
    }
