"""Write side of the read model: render documents, store them, maintain the facet counts.

Every save of an :class:`~cards.models.Agent` calls :func:`agent_changed` (the signal is
connected in ``cards.apps``); code that changes agents with ``QuerySet.update()`` calls it
itself. The rendering runs in the same transaction as the change, under the agent's row lock,
so the stored documents, the tag array and the facet counts always describe the committed rows.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import Any, NamedTuple

from django.db import DatabaseError, connection, transaction
from django.db.models import Count, OuterRef, Prefetch, Q, Subquery
from django.db.models.functions import Coalesce
from django.utils import timezone

from cards.indexing import IndexRows, normalise_tag
from cards.models import Agent, CrawlAttempt, Extension, FacetCount, Mode, Skill, SkillTag
from cards.rendering import documents as rendered
from cards.rendering.documents import Uptime

# Bump when a document's shape changes; `manage.py render_documents` (and a data migration)
# re-render every agent whose documents are older.
# 6: the publisher (issue 44); 5: long lists bounded, with totals (bounds.py); 4: live checks
# (live, health.endpoint); 3: list rows share the detail's shapes
DOC_FORMAT = 6

FacetKey = tuple[str, str, str]  # kind, direction, key


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


def uptimes(agent_ids: list[Any]) -> dict[Any, Uptime]:
    """Share of successful crawl attempts over 7 and 30 days, per agent (one query)."""
    month, week = uptime_windows()
    rows = (
        CrawlAttempt.objects.filter(agent_id__in=agent_ids, started_at__gte=month)
        .values("agent_id")
        .annotate(
            total=Count("id"),
            ok=Count("id", filter=Q(success=True)),
            week_total=Count("id", filter=Q(started_at__gte=week)),
            week_ok=Count("id", filter=Q(started_at__gte=week, success=True)),
        )
    )
    return {
        row["agent_id"]: uptime_of(row["total"], row["ok"], row["week_total"], row["week_ok"])
        for row in rows
    }


def uptime_windows(now: datetime | None = None) -> tuple[datetime, datetime]:
    """The starts of the 30-day and 7-day uptime windows."""
    now = now or timezone.now()
    return now - timedelta(days=30), now - timedelta(days=7)


def uptime_of(total: int, ok: int, week_total: int, week_ok: int) -> Uptime:
    """(7 days, 30 days) shares of successful attempts from their counts; None without any."""
    return (
        round(week_ok / week_total, 4) if week_total else None,
        round(ok / total, 4) if total else None,
    )


# The annotations of :func:`uptime_counts`, in :func:`uptime_of`'s order.
UPTIME_COUNTS = ("up_total", "up_ok", "up_week_total", "up_week_ok")


def uptime_counts(month: Any, week: Any) -> dict[str, Any]:
    """The counts :func:`uptime_of` takes, as annotations of agent rows (one subquery each), so
    a read that locks the agent also brings them: ``month`` and ``week`` are the windows'
    starts."""

    def attempts(since: Any, **only: Any) -> Coalesce:
        rows = CrawlAttempt.objects.filter(agent=OuterRef("pk"), started_at__gte=since, **only)
        counted = rows.order_by().values("agent").annotate(n=Count("id")).values("n")
        return Coalesce(Subquery(counted), 0)

    total, ok, week_total, week_ok = UPTIME_COUNTS
    return {
        total: attempts(month),
        ok: attempts(month, success=True),
        week_total: attempts(week),
        week_ok: attempts(week, success=True),
    }


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
        _upsert_counts(changed)
    columns = [
        "summary_doc", "detail_doc", "doc_format", "tags", "mode_keys", "facet_keys",
        "capabilities", "ever_public",
    ]  # fmt: skip
    if len(agents) == 1:  # a crawl: one plain UPDATE (bulk_update builds a CASE per column)
        one = agents[0]
        Agent.objects.filter(pk=one.pk).update(**{name: getattr(one, name) for name in columns})
    else:
        Agent.objects.bulk_update(agents, columns)


def mode_keys(modes: Iterable[Mode]) -> list[str]:
    """The search keys of an agent's modes, as ``cards.reads.search.ModeQuery.key`` asks for
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


def _upsert_counts(rows: Iterable[tuple[FacetKey, tuple[int, int]]]) -> None:
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


# Fields of the agent row a crawl outcome changes without touching the card or its index.
CRAWL_STATE = (
    "status",
    "last_error",
    "last_error_code",
    "last_http_status",
    "last_crawled_at",
    "last_success_at",
    "fetch_ms",
    "health",
    "consecutive_failures",
    "gone_since",
    "lease_until",
    "next_crawl_at",
    "updated_at",
)


def crawl_state_documents(agent: Agent, uptime: Uptime | None = None) -> dict[str, Any] | None:
    """The stored documents of ``agent`` with only its crawl state brought up to date (a 304:
    same card, same index), as column values to UPDATE together with that state. None when a
    full rendering is needed instead: documents of an older format, or a move into or out of
    ``gone``, which changes what the facet counts include. ``uptime``: the agent's, when the
    caller has counted it already (else it is read)."""
    if agent.doc_format != DOC_FORMAT or not agent.summary_doc or not agent.detail_doc:
        return None
    summary = json.loads(agent.summary_doc)
    detail = json.loads(agent.detail_doc)
    gone = Agent.Health.GONE
    if ((summary.get("health") or {}).get("state") == gone) != (agent.health == gone):
        return None
    when = rendered.when
    if uptime is None:
        uptime = uptimes([agent.pk]).get(agent.pk, (None, None))
    # A 304 leaves the live checks' report as it was: the endpoint is the stored one.
    endpoint = (summary.get("health") or {}).get("endpoint") or "not-checked"
    health = rendered.health_section(agent, uptime, endpoint)
    crawl = rendered.crawl_section(agent)
    summary.update(
        status=agent.status,
        health=health,
        crawl=crawl,
        signature_status=agent.signature_status or None,
        last_crawled_at=when(agent.last_crawled_at),
    )
    detail.update(status=agent.status, updated_at=when(agent.updated_at))
    detail["health"] = health
    detail["crawl"] = crawl
    return {"summary_doc": json_text(summary), "detail_doc": json_text(detail)}


# What :func:`live_documents` reads of the agent row besides the live fields it is given.
LIVE_STATE = ("id", "doc_format", "summary_doc", "detail_doc", "probe_messages", "updated_at")


def live_documents(agent: Agent) -> dict[str, Any] | None:
    """The stored documents of ``agent`` with only the live checks' parts brought up to date
    (``live`` and ``health.endpoint``; the detail's ``updated_at``), as column values to UPDATE
    with the report. None when a full rendering is needed (documents of an older format)."""
    if agent.doc_format != DOC_FORMAT or not agent.summary_doc or not agent.detail_doc:
        return None
    summary = json.loads(agent.summary_doc)
    detail = json.loads(agent.detail_doc)
    endpoint = (agent.live or {}).get("endpoint") or rendered.NOT_CHECKED
    summary["live"] = rendered.live_outcome(agent)
    detail["live"] = rendered.live_section(agent)
    for document in (summary, detail):
        if isinstance(document.get("health"), dict):
            document["health"]["endpoint"] = endpoint
    detail["updated_at"] = rendered.when(agent.updated_at)
    return {"summary_doc": json_text(summary), "detail_doc": json_text(detail)}
