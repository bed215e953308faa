"""Write side of the read model: render documents, store them, maintain the facet counts.

Every save of an :class:`~cards.models.Agent` calls :func:`agent_changed` (the signal is
connected in ``cards.apps``); code that changes agents with ``QuerySet.update()`` calls it
itself. The rendering runs in the same transaction as the change, under the agent's row lock,
so the stored documents, the tag array and the facet counts always describe the committed rows.
The uptimes are counted in :mod:`cards.rendering.uptime`, the facet counts kept in
:mod:`cards.rendering.facets`; :mod:`cards.rendering.partial_updates` brings stored documents up
to date without rendering them again.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, NamedTuple

from django.db import DatabaseError, transaction
from django.db.models import Prefetch

from cards.indexing import IndexRows, normalise_tag
from cards.models import Agent, Extension, Mode, Skill, SkillTag
from cards.rendering import documents as rendered
from cards.rendering.documents import Uptime
from cards.rendering.facets import (
    FacetKey,
    counted,
    facet_contribution,
    facets_rebuild,
    mode_keys,
    upsert_counts,
)
from cards.rendering.uptime import uptimes

# Bump when a document's shape changes; `manage.py render_documents` (and a data migration)
# re-render every agent whose documents are older.
# 6: the publisher (issue 44); 5: long lists bounded, with totals (bounds.py); 4: live checks
# (live, health.endpoint); 3: list rows share the detail's shapes
DOC_FORMAT = 6


_collecting = threading.local()
_preloaded = threading.local()


def agent_changed(agent_id: Any) -> None:
    """Re-render ``agent_id`` now, inside the caller's transaction: the documents commit (or roll
    back) with the change they describe. Index rows are written before the agent row is saved,
    so the rendering sees them. Inside :func:`rendering_once` it waits for the block's end."""
    pending: set[Any] | None = getattr(_collecting, "ids", None)
    if pending is not None:
        pending.add(agent_id)
        return
    agent_render(agent_id)


def forget(agent_id: Any) -> None:
    """Drop a render collected by :func:`rendering_once` (the caller stored the documents)."""
    pending: set[Any] | None = getattr(_collecting, "ids", None)
    if pending is not None:
        pending.discard(agent_id)


@contextmanager
def rendering_once() -> Iterator[None]:
    """Collect the renders a block asks for and do each once when it ends (a crawl saves the
    agent and then adds its attempt row: one rendering after both)."""
    if getattr(_collecting, "ids", None) is not None:  # nested: the outer block renders
        yield
        return
    _collecting.ids = set()
    try:
        yield
        pending = _collecting.ids
        _collecting.ids = None
        for agent_id in sorted(pending, key=str):
            agent_render(agent_id)
    finally:
        _collecting.ids = None
        _preloaded.rows = {}


def _agents_for_render() -> Any:
    return Agent.objects.prefetch_related(
        Prefetch("skills", queryset=Skill.objects.order_by("position")),
        Prefetch("extensions", queryset=Extension.objects.order_by("position")),
        Prefetch("tag_rows", queryset=SkillTag.objects.only("agent_id", "skill_id", "tag")),
        Prefetch(
            "mode_rows",
            queryset=Mode.objects.only("agent_id", "media_type", "essence", "direction", "schema"),
        ),
        "keys",
    )


class _Preloaded(NamedTuple):
    """What a caller of :func:`preload` knows of an agent it holds locked."""

    agent: Agent
    rows: IndexRows
    uptime: Uptime | None
    keys: list[Any] | None


def preload(
    agent: Agent,
    rows: IndexRows,
    *,
    uptime: Uptime | None = None,
    keys: list[Any] | None = None,
) -> None:
    """An agent the caller holds locked and the index rows it has just written: its next
    rendering uses them instead of reading them back (a crawl that changed the card). The
    caller may also know the agent's ``uptime`` (7 days, 30 days) and its ``keys``: an agent
    crawled for the first time has one attempt, and no key unless its card was signed. Those
    are then not read either."""
    known = _Preloaded(agent, rows, uptime, keys)
    _preloaded.rows = {**getattr(_preloaded, "rows", {}), agent.pk: known}


def agent_render(agent_id: Any) -> None:
    """Render and store one agent's documents, tag array and facet contribution."""
    known: _Preloaded | None = getattr(_preloaded, "rows", {}).pop(agent_id, None)
    uptimes_known: dict[Any, Uptime] = {}
    # No savepoint: inside a crawl the whole transaction is the unit; alone, this opens one.
    with transaction.atomic(savepoint=False):
        if known is None:
            locked = Agent.objects.select_for_update(of=("self",)).filter(pk=agent_id)
            agents = list(_agents_for_render() & locked)
        else:
            agent, rows, uptime, keys = known
            cache = getattr(agent, "_prefetched_objects_cache", {})
            cache.update(
                {
                    "skills": rows.skills,
                    "extensions": rows.extensions,
                    "tag_rows": rows.tags,
                    "mode_rows": rows.modes,
                    "keys": list(agent.keys.all()) if keys is None else keys,
                }
            )
            agent._prefetched_objects_cache = cache  # type: ignore[attr-defined]
            agents = [agent]
            if uptime is not None:
                uptimes_known[agent.pk] = uptime
        _store_many(agents, uptimes_known)


def render_all(*, batch: int = 500, stale_only: bool = False, progress: Any = None) -> int:
    """Render every agent (or those with older documents), in batches. Returns the count."""
    rows = Agent.objects.order_by("pk")
    if stale_only:
        rows = rows.exclude(doc_format=DOC_FORMAT)
    ids = list(rows.values_list("pk", flat=True))
    for start in range(0, len(ids), batch):
        chunk = ids[start : start + batch]
        with transaction.atomic():
            query = _agents_for_render().select_for_update(of=("self",)).filter(pk__in=chunk)
            _store_many(list(query.order_by("pk")))
        if progress is not None:
            progress(min(start + batch, len(ids)), len(ids))
    return len(ids)


def render_stale_after_migrating(apps: Any, schema_editor: Any) -> None:
    """A data migration's step when ``DOC_FORMAT`` changes: render every older row with today's
    renderer (not historical models). If a later migration has not yet added a column today's
    models read, the rows stay stale and are rendered on first read or by
    ``manage.py render_documents`` after migrating."""
    try:
        with transaction.atomic():
            render_all(stale_only=True)
            facets_rebuild()
    except DatabaseError as exc:
        print(f"\n  documents left to `manage.py render_documents`: {exc}".rstrip())


def json_text(document: dict[str, Any]) -> str:
    return json.dumps(document, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _store_many(agents: list[Agent], uptimes_known: dict[Any, Uptime] | None = None) -> None:
    """Render and store prefetched agents (the caller holds their row locks), with the uptimes
    the caller already has, by agent id (the others' are counted in one query)."""
    if not agents:
        return
    known = uptimes_known or {}
    unknown = [agent.pk for agent in agents if agent.pk not in known]
    up = {**(uptimes(unknown) if unknown else {}), **known}
    deltas: dict[FacetKey, list[int]] = {}
    for agent in agents:
        skills = list(agent.skills.all())
        ard_entry = agent.ard_entry or {}
        # ARD capability tokens: the manifest entry's, and the skill ids of the card.
        agent.capabilities = sorted(
            {c for c in ard_entry.get("capabilities") or [] if isinstance(c, str)}
            | {s.skill_id for s in skills if s.skill_id}
        )[:100]
        uptime = up.get(agent.pk, (None, None))
        agent.summary_doc = json_text(rendered.summary(agent, skills, uptime))
        agent.detail_doc = json_text(
            rendered.detail(
                agent,
                skills,
                list(agent.extensions.all()),
                list(agent.keys.all()),
                uptime,
            )
        )
        agent.doc_format = DOC_FORMAT
        # Sticky: change feeds tell readers other than the owner about a removal only if the
        # agent was once public (cards.reads.gate.changes): approved and with a card (gate.LISTED).
        agent.ever_public = agent.ever_public or (
            agent.deleted_at is None
            and agent.moderation in Agent.PUBLIC_STATES
            and agent.latest_snapshot_id is not None
        )
        entry_tags = ard_entry.get("tags") or []
        agent.tags = sorted(
            {row.tag for row in agent.tag_rows.all()}
            | {normalise_tag(t) for t in entry_tags if isinstance(t, str) and t.strip()}
        )
        agent.mode_keys = mode_keys(agent.mode_rows.all())
        contribution = facet_contribution(agent) if counted(agent) else {}
        previous = {(k, d, key): (a, e) for k, d, key, a, e in agent.facet_keys or []}
        for key in previous.keys() | contribution.keys():
            old, new = previous.get(key, (0, 0)), contribution.get(key, (0, 0))
            entry = deltas.setdefault(key, [0, 0])
            entry[0] += new[0] - old[0]
            entry[1] += new[1] - old[1]
        agent.facet_keys = [[*key, *value] for key, value in sorted(contribution.items())]
    changed = sorted((key, (a, e)) for key, (a, e) in deltas.items() if (a, e) != (0, 0))
    if changed:
        upsert_counts(changed)
    columns = [
        "summary_doc", "detail_doc", "doc_format", "tags", "mode_keys", "facet_keys",
        "capabilities", "ever_public",
    ]  # fmt: skip
    if len(agents) == 1:  # a crawl: one plain UPDATE (bulk_update builds a CASE per column)
        one = agents[0]
        Agent.objects.filter(pk=one.pk).update(**{name: getattr(one, name) for name in columns})
    else:
        Agent.objects.bulk_update(agents, columns)
