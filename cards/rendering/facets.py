"""The facet counts (tags, modes, schemas, extensions) and the search keys of an agent's modes.

Each rendering stores what the agent adds to each count (``facet_keys``) and applies the
difference; :func:`facets_rebuild` recounts them all from those contributions.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db import connection, transaction

from cards.models import Agent, FacetCount, Mode

FacetKey = tuple[str, str, str]  # kind, direction, key


def mode_keys(modes: Iterable[Mode]) -> list[str]:
    """The search keys of an agent's modes, as ``search.filters.ModeQuery.key`` asks for
    them: ``i:``/``o:`` the full canonical type, ``i~``/``o~`` type/subtype, ``i*``/``o*`` the
    type followed by a slash, ``s:`` a schema name in either direction."""
    keys: set[str] = set()
    for mode in modes:
        way = "i" if mode.direction == Mode.Direction.INPUT else "o"
        keys.add(f"{way}:{mode.media_type}")
        keys.add(f"{way}~{mode.essence}")
        keys.add(f"{way}*{mode.essence.split('/', 1)[0]}/")
        if mode.schema:
            keys.add(f"s:{mode.schema}")
    return sorted(keys)


def counted(agent: Agent) -> bool:
    """Facets count what an anonymous default search finds: public agents that are not gone."""
    return (
        agent.deleted_at is None
        and agent.moderation in Agent.PUBLIC_STATES
        and agent.health != Agent.Health.GONE
    )


def facet_contribution(agent: Agent) -> dict[FacetKey, tuple[int, int]]:
    """What one agent adds to each facet count: (agents, extra) per key (prefetched rows)."""
    out: dict[FacetKey, tuple[int, int]] = {}
    skills_per_tag: dict[str, set[Any]] = {}
    for row in agent.tag_rows.all():
        skills_per_tag.setdefault(row.tag, set()).add(row.skill_id)
    for tag, skills in skills_per_tag.items():
        out[(FacetCount.Kind.TAG, "", tag)] = (1, len(skills))
    for mode in agent.mode_rows.all():
        out[(FacetCount.Kind.MODE, mode.direction, mode.media_type)] = (1, 0)
        if mode.schema:
            out[(FacetCount.Kind.SCHEMA, "", mode.schema)] = (1, 0)
    required: dict[str, bool] = {}
    for extension in agent.extensions.all():
        required[extension.uri] = required.get(extension.uri, False) or extension.required
    for uri, is_required in required.items():
        out[(FacetCount.Kind.EXTENSION, "", uri)] = (1, int(is_required))
    return out


def upsert_counts(rows: Iterable[tuple[FacetKey, tuple[int, int]]]) -> None:
    """Add to the counts, creating rows as needed, in one statement per 500 keys; keys in
    sorted order so that concurrent renders lock facet rows in the same order (no deadlock)."""
    table = FacetCount._meta.db_table
    items = [(*key, *value) for key, value in rows]
    with connection.cursor() as cursor:
        for start in range(0, len(items), 500):
            chunk = items[start : start + 500]
            values = ", ".join(["(%s, %s, %s, %s, %s)"] * len(chunk))
            cursor.execute(
                f"INSERT INTO {table} (kind, direction, key, agents, extra) VALUES {values} "
                f"ON CONFLICT (kind, direction, key) DO UPDATE SET "
                f"agents = {table}.agents + excluded.agents, "
                f"extra = {table}.extra + excluded.extra",
                [field for item in chunk for field in item],
            )


def facets_rebuild() -> None:
    """Recount every facet from the stored contributions (after a bulk load or a repair)."""
    with transaction.atomic():
        FacetCount.objects.all().delete()
        totals: dict[FacetKey, list[int]] = {}
        for keys in Agent.objects.exclude(facet_keys=[]).values_list("facet_keys", flat=True):
            for kind, direction, key, agents, extra in keys:
                entry = totals.setdefault((kind, direction, key), [0, 0])
                entry[0] += agents
                entry[1] += extra
        FacetCount.objects.bulk_create(
            FacetCount(kind=k, direction=d, key=key, agents=a, extra=e)
            for (k, d, key), (a, e) in totals.items()
        )
