"""Seed N synthetic agents into a dedicated PostgreSQL database, as the real ingest would.

    .venv/bin/python bench/seed.py -n 100000 \
        --database-url postgres://postgres@127.0.0.1:5432/registry_bench_100k

Each card (bench/synth.py) goes through the real ``cards.pipeline.check`` (parse and
validate) and ``cards.indexing.apply_summary``; the index rows are built with the indexer's own
helpers (``_mode_rows``, ``normalise_tag``, ...) in the same order as ``index_card``, and written
with ``bulk_create`` in batches, in parallel worker processes. After VACUUM ANALYZE, a random
sample of agents is re-ingested through the real ``card_ingest`` inside a rolled-back
transaction and every row is compared (``--verify``), so a drift between this fast path and the
indexer fails the seed.

The database is created if missing, migrated, and its registry tables are emptied first.
"""

from __future__ import annotations

import argparse
import hashlib
import multiprocessing
import random
import sys
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import synth  # noqa: E402
from bench._common import DEFAULT_DATABASE_URL, ensure_database, setup_django  # noqa: E402

TABLES = (
    "cards_mode",
    "cards_skilltag",
    "cards_skill",
    "cards_extension",
    "cards_snapshot",
    "cards_agent",
)
EPOCH = datetime(2025, 1, 1, tzinfo=UTC)
NOW = datetime(2025, 11, 1, tzinfo=UTC)


# --- building the rows of one agent --------------------------------------------------------


def build_agent(index: int, seed: int, n_total: int, with_snapshot: bool) -> tuple[Any, ...]:
    """(agent, snapshot|None, skills, tags, modes, extensions) for synthetic agent ``index``.

    Mirrors cards.crawling.card_ingest with the indexer's own ``index_rows``, without touching the
    database.
    """
    from cards.ard import identifiers
    from cards.indexing import apply_summary, index_rows
    from cards.models import Agent, Snapshot
    from cards.pipeline import check as card_check
    from registry.findings import counts

    rng = random.Random(seed * 7919 + index)
    raw = synth.card_bytes(seed, index)
    origin = synth.agent_origin(seed, index)
    card_url = origin + "/.well-known/agent-card.json"
    started = time.monotonic()
    report = card_check(raw=raw)
    card = report.card
    assert card is not None, "synthetic cards always parse"
    sha256 = hashlib.sha256(raw).hexdigest()

    # Submitted over ~10 months, in index order; crawled at some point of the last 6 hours.
    created = (
        EPOCH + (NOW - EPOCH) * (index / max(1, n_total)) + timedelta(seconds=rng.uniform(0, 60))
    )
    crawled = NOW - timedelta(seconds=rng.uniform(0, 6 * 3600))
    agent = Agent(
        id=uuid.UUID(int=rng.getrandbits(128), version=4),
        url=origin,
        discover=True,
        card_url=card_url,
        created_at=created,
    )
    apply_summary(agent, card)
    # As the crawl does for a card it stored: the derived ARD identifier (each synthetic agent
    # has a host of its own, so none collides). ARD lists only agents that have one.
    agent.ard_identifier = identifiers.derived(card_url, agent.name)
    agent.ard_identifier_source = "derived"
    findings = [f.as_dict() for f in report.findings]
    tally = counts(report.findings)
    agent.content_sha256 = sha256
    agent.shape = report.parsed.shape
    agent.findings = findings
    agent.error_count, agent.warning_count, agent.info_count = (
        tally["error"],
        tally["warning"],
        tally["info"],
    )
    agent.valid = report.valid
    agent.status = Agent.Status.OK
    agent.last_error = ""
    agent.last_error_code = ""
    agent.last_success_at = crawled
    agent.last_crawled_at = crawled
    agent.last_http_status = 200
    agent.fetch_ms = rng.uniform(40, 400)
    agent.etag = ""
    agent.last_modified = ""
    agent.next_crawl_at = crawled + timedelta(hours=6)
    signature = _crawler_bookkeeping(agent, report, card_url, crawled)

    snapshot = None
    if with_snapshot:
        snapshot = Snapshot(
            agent=agent,
            sha256=sha256,
            raw=raw,
            content_type="application/json",
            card_url=card_url,
            data=report.parsed.data,
            card=card,
            shape=report.parsed.shape,
            findings=findings,
            fetched_at=crawled,
        )
        if signature is not None and hasattr(snapshot, "signature"):
            snapshot.signature = signature

    # The indexer's own row builder: the benchmark data is what a crawl would write.
    rows = index_rows(agent, card)
    skills, tags, modes, extensions = rows.skills, rows.tags, rows.modes, rows.extensions
    agent.process_ms = (time.monotonic() - started) * 1000
    return agent, snapshot, skills, tags, modes, extensions


def _crawler_bookkeeping(agent: Any, report: Any, card_url: str, crawled: datetime) -> Any:
    """What a successful crawl records besides the index, where the code has it (best effort).

    Health after a success, and the signature report (synthetic cards are unsigned). Not part
    of the strict check in ``verify``: search does not read it, and this code is still moving.
    """
    try:
        from cards import health

        health.after_success(agent, crawled, max_age=None)
    except (ImportError, AttributeError, TypeError):
        pass
    try:
        from cards import trust

        signature = trust.signature_check(report.parsed, card_url=card_url)
    except (ImportError, AttributeError, TypeError):
        return None
    if signature is None:
        return None
    agent.signature_status = signature.status
    agent.signature = signature.as_dict()
    return agent.signature


def _seed_range(args: tuple[str, int, int, int, int, int, bool]) -> dict[str, int]:
    database_url, seed, start, stop, n_total, batch, with_snapshots = args
    setup_django(database_url)
    from django.db import transaction

    from cards.models import Agent, Extension, Mode, Skill, SkillTag, Snapshot

    # Seeded agents carry a spread of submission times; auto_now_add would stamp them all now.
    Agent._meta.get_field("created_at").auto_now_add = False
    totals = dict(agents=0, skills=0, tags=0, modes=0, extensions=0, snapshots=0)
    last_report = time.monotonic()
    for lo in range(start, stop, batch):
        hi = min(stop, lo + batch)
        agents, snapshots, skills, tags, modes, extensions = [], [], [], [], [], []
        for index in range(lo, hi):
            agent, snapshot, s, t, m, e = build_agent(index, seed, n_total, with_snapshots)
            agents.append(agent)
            if snapshot is not None:
                snapshots.append(snapshot)
            skills += s
            tags += t
            modes += m
            extensions += e
        with transaction.atomic():
            # Foreign keys are DEFERRABLE INITIALLY DEFERRED: snapshots may go in before their
            # agents (whose UUIDs are already known), which gives their ids to latest_snapshot.
            if snapshots:
                Snapshot.objects.bulk_create(snapshots, batch_size=1000)
                for snapshot in snapshots:
                    snapshot.agent.latest_snapshot = snapshot
            Agent.objects.bulk_create(agents, batch_size=2000)
            Skill.objects.bulk_create(skills, batch_size=5000)
            SkillTag.objects.bulk_create(tags, batch_size=5000)
            Mode.objects.bulk_create(modes, batch_size=5000)
            Extension.objects.bulk_create(extensions, batch_size=5000)
        for key, rows in (
            ("agents", agents),
            ("skills", skills),
            ("tags", tags),
            ("modes", modes),
            ("extensions", extensions),
            ("snapshots", snapshots),
        ):
            totals[key] += len(rows)
        if time.monotonic() - last_report > 10:
            last_report = time.monotonic()
            print(f"  worker {start}-{stop}: {totals['agents']} agents", flush=True)
    return totals


# --- checking the fast path against the real ingest ----------------------------------------


_VOLATILE_AGENT_FIELDS = {
    # when and how fast: differ between any two crawls of the same card
    "id",
    "created_at",
    "updated_at",
    "last_crawled_at",
    "last_success_at",
    "next_crawl_at",
    "fetch_ms",
    "process_ms",
    "latest_snapshot",
    "submitted_by",
}


def _natural(obj: Any, field: Any) -> Any:
    """A field's value, with foreign keys replaced by something stable across re-ingests."""
    from django.db import models

    if isinstance(field, models.ForeignKey):
        target = getattr(obj, field.name)
        if target is None:
            return None
        if hasattr(target, "position"):
            return ("position", target.position)
        if hasattr(target, "sha256"):
            return ("sha256", target.sha256)
        return ("fk", field.related_model.__name__)
    value = getattr(obj, field.attname)
    if isinstance(value, memoryview):
        value = bytes(value)
    return value


def _dump(agent_id: Any) -> dict[str, Any]:
    """Every row the ingest wrote for one agent, minus ids, timestamps and timings.

    Generic over the models, so a column or table the ingest starts writing is compared too.
    """
    from django.db import models

    from cards.models import Agent

    agent = Agent.objects.get(pk=agent_id)
    out: dict[str, Any] = {
        "agent": {
            f.name: _natural(agent, f)
            for f in Agent._meta.concrete_fields
            if f.name not in _VOLATILE_AGENT_FIELDS
        }
    }
    for rel in Agent._meta.related_objects:
        if not rel.one_to_many or not isinstance(rel.field, models.ForeignKey):
            continue
        model = rel.related_model
        fields = [
            f
            for f in model._meta.concrete_fields
            if not f.primary_key and f is not rel.field and not isinstance(f, models.DateTimeField)
        ]
        rows = model._default_manager.filter(**{rel.field.name: agent})
        dumped = [tuple((f.name, _natural(row, f)) for f in fields) for row in rows]
        out[model.__name__] = sorted(dumped, key=repr)
    return out


INDEX_TABLES = ("Skill", "SkillTag", "Mode", "Extension")


def summary_fields(cards: list[dict[str, Any]]) -> set[str]:
    """The Agent fields ``apply_summary`` writes (found by running it, so it stays current)."""
    from cards.indexing import apply_summary
    from cards.models import Agent

    names: set[str] = set()
    for card in cards:
        agent = Agent()
        before = {f.name: getattr(agent, f.attname) for f in Agent._meta.concrete_fields}
        apply_summary(agent, card)
        names |= {
            f.name
            for f in Agent._meta.concrete_fields
            if getattr(agent, f.attname) != before[f.name]
        }
    return names | {"search_text"}


def verify(seed: int, sample: list[int], with_snapshots: bool) -> tuple[int, set[str]]:
    """Re-ingest ``sample`` through the real card_ingest (rolled back) and compare rows.

    Strict (counted as mismatches): the Agent fields apply_summary writes and the index tables
    (Skill, SkillTag, Mode, Extension) -- what search reads. Anything else the crawler
    records (signature, health, attempts, change summaries...) is listed as a note, because
    this fast path does not replay crawler bookkeeping.
    """
    from django.db import transaction

    from cards.models import Agent, Extension, Mode, Skill, SkillTag, Snapshot
    from cards.pipeline import check as card_check
    from registry.http.fetcher import FetchResult

    try:
        from cards.crawling import card_ingest
    except ImportError:  # before the crawl code moved out of services
        from cards.services import card_ingest  # type: ignore[attr-defined,no-redef]

    strict_agent = summary_fields(
        [card_check(raw=synth.card_bytes(seed, i)).card for i in sample[:50]]
    )
    bad = 0
    loose: set[str] = set()
    for index in sample:
        origin = synth.agent_origin(seed, index)
        agent_id = Agent.objects.only("id").get(url=origin).pk
        seeded = _dump(agent_id)
        raw = synth.card_bytes(seed, index)
        with transaction.atomic():
            # Back to a never-crawled agent: no snapshot, no index rows (the first crawl of an
            # agent writes its index without deleting anything).
            Agent.objects.filter(pk=agent_id).update(latest_snapshot=None, content_sha256="")
            Snapshot.objects.filter(agent_id=agent_id).delete()
            for model in (Mode, SkillTag, Skill, Extension):
                model.objects.filter(agent_id=agent_id).delete()
            result = FetchResult(
                url=origin + "/.well-known/agent-card.json",
                status=200,
                headers={"content-type": "application/json"},
                body=raw,
                content_type="application/json",
            )
            outcome = card_ingest(agent_id=agent_id, result=result, fetch_ms=1.0)
            real = _dump(agent_id)
            transaction.set_rollback(True)
        strict_diff = [
            f"Agent.{k}"
            for k in sorted(strict_agent)
            if real["agent"].get(k) != seeded["agent"].get(k)
        ] + [t for t in INDEX_TABLES if real.get(t) != seeded.get(t)]
        loose |= {
            f"Agent.{k}"
            for k in real["agent"]
            if k not in strict_agent and real["agent"][k] != seeded["agent"].get(k)
        }
        loose |= {
            t
            for t in set(real) | set(seeded)
            if t not in INDEX_TABLES
            and t != "agent"
            and real.get(t) != seeded.get(t)
            and (with_snapshots or t != "Snapshot")
        }
        if outcome != "stored" or strict_diff:
            bad += 1
            print(f"  MISMATCH agent {index}: outcome={outcome} differs in {strict_diff}")
    return bad, loose


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", "--agents", type=int, default=10_000)
    parser.add_argument("--database-url", default=DEFAULT_DATABASE_URL)
    parser.add_argument("--seed", type=int, default=1, help="random seed of the synthetic cards")
    parser.add_argument("--workers", type=int, default=max(1, min(4, multiprocessing.cpu_count())))
    parser.add_argument("--batch", type=int, default=500, help="agents per transaction")
    parser.add_argument(
        "--no-render",
        dest="render",
        action="store_false",
        help="skip rendering the stored documents (manage.py render_documents does it later)",
    )
    parser.add_argument(
        "--no-snapshots",
        action="store_true",
        help="skip Snapshot rows (raw/data/card); search never reads them",
    )
    parser.add_argument(
        "--verify",
        type=int,
        default=100,
        help="agents re-ingested through card_ingest and compared (0: none)",
    )
    parser.add_argument(
        "--recreate",
        action="store_true",
        help="drop and create the database first (only for names containing 'bench')",
    )
    args = parser.parse_args()
    with_snapshots = not args.no_snapshots

    t0 = time.monotonic()
    ensure_database(args.database_url, recreate=args.recreate)
    setup_django(args.database_url)
    from django.core.management import call_command
    from django.db import connection

    call_command("migrate", verbosity=0, interactive=False)
    with connection.cursor() as cur:
        cur.execute(f"TRUNCATE {', '.join(TABLES)} RESTART IDENTITY CASCADE")
    connection.close()

    n = args.agents
    workers = max(1, min(args.workers, n // max(1, args.batch) or 1))
    bounds = [n * k // workers for k in range(workers + 1)]
    jobs = [
        (args.database_url, args.seed, bounds[k], bounds[k + 1], n, args.batch, with_snapshots)
        for k in range(workers)
    ]
    print(
        f"seeding {n} agents with {workers} worker processes"
        f"{'' if with_snapshots else ' (no snapshots)'} ...",
        flush=True,
    )
    t1 = time.monotonic()
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(workers) as pool:
        results = pool.map(_seed_range, jobs)
    totals = {key: sum(r[key] for r in results) for key in results[0]}
    t2 = time.monotonic()
    print(f"inserted in {t2 - t1:.1f}s: " + ", ".join(f"{v} {k}" for k, v in totals.items()))

    if args.render:
        # The read model: documents, tag and mode arrays, facet counts, as a crawl renders them.
        from cards.rendering.store import facets_rebuild, render_all

        rendered = render_all(batch=1000)
        facets_rebuild()
        print(f"rendered {rendered} agents' documents in {time.monotonic() - t2:.1f}s")
        t2 = time.monotonic()
    with connection.cursor() as cur:
        # A loaded database is vacuumed in steady state (autovacuum); without the visibility
        # map, index-only scans would visit the heap and the numbers would be pessimistic.
        cur.execute("VACUUM (ANALYZE)")
    t3 = time.monotonic()
    print(f"VACUUM ANALYZE in {t3 - t2:.1f}s")

    bad = 0
    if args.verify:
        sample = random.Random(args.seed).sample(range(n), min(args.verify, n))
        bad, loose = verify(args.seed, sample, with_snapshots)
        print(
            f"verified {len(sample)} agents against the real card_ingest: summary fields and "
            f"index rows of {len(sample) - bad} identical, {bad} different"
        )
        if loose:
            print(f"  note: crawler bookkeeping not replayed by the fast path: {sorted(loose)}")
    with connection.cursor() as cur:
        cur.execute(
            "SELECT relname, n_live_tup, pg_size_pretty(pg_total_relation_size(relid)) "
            "FROM pg_stat_user_tables WHERE relname LIKE 'cards_%' ORDER BY relname"
        )
        for name, rows, size in cur.fetchall():
            print(f"  {name:18} {rows:>10} rows {size:>10}")
        cur.execute("SELECT pg_size_pretty(pg_database_size(current_database()))")
        print(f"  database size {cur.fetchone()[0]}")
    print(f"total {time.monotonic() - t0:.1f}s")
    if bad:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
