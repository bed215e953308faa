"""Write side of the read model: render documents, store them, maintain the facet counts.

Every save of an :class:`~cards.models.Agent` calls :func:`agent_changed` (the signal is
connected in ``cards.apps``); code that changes agents with ``QuerySet.update()`` calls it
itself. The rendering runs in the same transaction as the change, under the agent's row lock,
so the stored documents, the tag array and the facet counts always describe the committed rows.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from django.db import connection, transaction
from django.db.models import Count, Prefetch
from rest_framework.renderers import JSONRenderer

from cards.models import Agent, Extension, FacetCount, Mode, Skill, SkillTag
from cards.rendering.shapes import AgentDetailSerializer, AgentSummarySerializer

log = logging.getLogger(__name__)

# Bump when a document's shape changes; `manage.py render_documents` (and a data migration)
# re-render every agent whose documents are older.
DOC_FORMAT = 1

_renderer = JSONRenderer()

FacetKey = tuple[str, str, str]  # kind, direction, key


def agent_changed(agent_id: Any) -> None:
    """Re-render ``agent_id`` now, inside the caller's transaction: the documents commit (or roll
    back) with the change they describe. Index rows are written before the agent row is saved,
    so the rendering sees them."""
    agent_render(agent_id)


def _agents_for_render() -> Any:
    return Agent.objects.prefetch_related(
        Prefetch("skills", queryset=Skill.objects.order_by("position")),
        Prefetch("extensions", queryset=Extension.objects.order_by("position")),
        "keys",
    )


def agent_render(agent_id: Any) -> None:
    """Render and store one agent's documents, tag array and facet contribution."""
    with transaction.atomic():
        agent = _agents_for_render().select_for_update(of=("self",)).filter(pk=agent_id).first()
        if agent is None:
            return
        _store(agent)


def render_all(*, batch: int = 500, stale_only: bool = False, progress: Any = None) -> int:
    """Render every agent (or those with older documents), in batches. Returns the count."""
    rows = Agent.objects.order_by("pk")
    if stale_only:
        rows = rows.exclude(doc_format=DOC_FORMAT)
    ids = list(rows.values_list("pk", flat=True))
    for start in range(0, len(ids), batch):
        chunk = ids[start : start + batch]
        with transaction.atomic():
            for agent in _agents_for_render().select_for_update(of=("self",)).filter(pk__in=chunk):
                _store(agent)
        if progress is not None:
            progress(min(start + batch, len(ids)), len(ids))
    return len(ids)


def documents(agent: Agent) -> tuple[str, str]:
    """The summary and detail JSON of ``agent`` (prefetched skills, extensions and keys)."""
    summary = _renderer.render(AgentSummarySerializer(agent, context={}).data)
    detail = _renderer.render(AgentDetailSerializer(agent, context={}).data)
    return summary.decode("utf-8"), detail.decode("utf-8")


def _store(agent: Agent) -> None:
    summary, detail = documents(agent)
    tags = sorted(
        set(SkillTag.objects.filter(agent=agent).values_list("tag", flat=True).distinct())
    )
    contribution = facet_contribution(agent) if counted(agent) else {}
    previous = {(k, d, key): (a, e) for k, d, key, a, e in agent.facet_keys or []}
    _apply_facet_delta(previous, contribution)
    Agent.objects.filter(pk=agent.pk).update(
        summary_doc=summary,
        detail_doc=detail,
        doc_format=DOC_FORMAT,
        tags=tags,
        facet_keys=[[*key, *value] for key, value in sorted(contribution.items())],
    )


def counted(agent: Agent) -> bool:
    """Facets count what an anonymous default search finds: public agents that are not gone."""
    return (
        agent.deleted_at is None
        and agent.moderation in Agent.PUBLIC_STATES
        and agent.health != Agent.Health.GONE
    )


def facet_contribution(agent: Agent) -> dict[FacetKey, tuple[int, int]]:
    """What one agent adds to each facet count: (agents, extra) per key."""
    out: dict[FacetKey, tuple[int, int]] = {}
    tag_rows = (
        SkillTag.objects.filter(agent=agent).values("tag").annotate(skills=Count("skill"))
    )
    for row in tag_rows:
        out[(FacetCount.Kind.TAG, "", row["tag"])] = (1, row["skills"])
    for media_type, direction, schema in (
        Mode.objects.filter(agent=agent).values_list("media_type", "direction", "schema").distinct()
    ):
        out[(FacetCount.Kind.MODE, direction, media_type)] = (1, 0)
        if schema:
            out[(FacetCount.Kind.SCHEMA, "", schema)] = (1, 0)
    required: dict[str, bool] = {}
    for uri, is_required in Extension.objects.filter(agent=agent).values_list("uri", "required"):
        required[uri] = required.get(uri, False) or is_required
    for uri, is_required in required.items():
        out[(FacetCount.Kind.EXTENSION, "", uri)] = (1, int(is_required))
    return out


def _apply_facet_delta(
    before: dict[FacetKey, tuple[int, int]], after: dict[FacetKey, tuple[int, int]]
) -> None:
    deltas: dict[FacetKey, tuple[int, int]] = {}
    for key in before.keys() | after.keys():
        old, new = before.get(key, (0, 0)), after.get(key, (0, 0))
        change = (new[0] - old[0], new[1] - old[1])
        if change != (0, 0):
            deltas[key] = change
    if deltas:
        _upsert_counts(sorted(deltas.items()))


def _upsert_counts(rows: Iterable[tuple[FacetKey, tuple[int, int]]]) -> None:
    """Add to the counts, creating rows as needed; keys in sorted order so that concurrent
    renders lock facet rows in the same order and cannot deadlock."""
    table = FacetCount._meta.db_table
    sql = (
        f"INSERT INTO {table} (kind, direction, key, agents, extra) VALUES (%s, %s, %s, %s, %s) "
        f"ON CONFLICT (kind, direction, key) DO UPDATE SET "
        f"agents = {table}.agents + excluded.agents, extra = {table}.extra + excluded.extra"
    )
    with connection.cursor() as cursor:
        cursor.executemany(sql, [(*key, *value) for key, value in rows])


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
