"""The registry's own Prometheus series, and the hooks that scrape-time collectors register with.

The objects live here, in the foundation, so every layer may count what it does (crawls in
cards, live checks in live, budgets in schemas_app) without importing one another; this module
imports no app and no Django. What each series means, and the alerts worth setting on them:
docs/operations.md.

Every process counts in its own memory; with ``PROMETHEUS_MULTIPROC_DIR`` set (several web
workers, Celery's prefork children) prometheus_client writes each process's values to its own
file in that directory instead, and a scrape adds them up (registry/metrics_exposition.py).
That variable must be in the environment before prometheus_client is first imported: it picks
its storage once, at import.

Names follow Prometheus' conventions: the ``registry_`` prefix, ``_total`` on counters,
``_seconds`` on durations, base units everywhere. Label values come from small fixed sets (an
outcome, a door, a check id, a limit's name), never from what a client sent.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager

MULTIPROCESS_DIR = os.environ.get("PROMETHEUS_MULTIPROC_DIR") or None
if MULTIPROCESS_DIR:
    # A process started before the node's directory was made (a management command in a fresh
    # container) must not fail to import: prometheus_client opens its file on the first metric.
    os.makedirs(MULTIPROCESS_DIR, exist_ok=True)

from prometheus_client import Counter, Gauge, Histogram  # noqa: E402 - after the directory
from prometheus_client.registry import Collector  # noqa: E402

# A crawl fetches over the network: from a fast 304 to the total fetch deadline and beyond.
CRAWL_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0)
# A search answers in milliseconds; past a second something is wrong.
SEARCH_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)

CRAWLS = Counter(
    "registry_crawls_total",
    "Crawls of one agent, by what they recorded (stored, unchanged, not-modified, manifest, "
    "inline, error, transient-error, timeout, exception, missing).",
    ["outcome"],
)
CRAWL_DURATION = Histogram(
    "registry_crawl_duration_seconds",
    "Wall time of one agent's crawl: discovery, fetch, checks, verification and storage.",
    buckets=CRAWL_BUCKETS,
)
LIVE_CHECKS = Counter(
    "registry_live_checks_total",
    "Live conformance checks run against agents, by check id and outcome (pass, warn, fail, skip).",
    ["check", "outcome"],
)
LIVE_RUNS = Counter(
    "registry_live_runs_total",
    "Runs of one agent's live checks, by the agent's overall outcome (pass, fail, not-checked).",
    ["outcome"],
)
SEARCHES = Counter(
    "registry_searches_total",
    "Agent searches answered, by door (rest, catalogue, ard, mcp, a2a) and ranking (semantic, "
    "lexical).",
    ["door", "mode"],
)
SEARCH_DURATION = Histogram(
    "registry_search_duration_seconds",
    "Time to answer one agent search at its door, by door.",
    ["door"],
    buckets=SEARCH_BUCKETS,
)
LIMITER_REFUSALS = Counter(
    "registry_limiter_refusals_total",
    "Requests refused by a rate limit, by the limit's name (anon, validate-url, submissions, "
    "login, trusted-exchange, origin-verify).",
    ["limit"],
)
SCHEMA_BUDGETS_EXHAUSTED = Counter(
    "registry_schema_budgets_exhausted_total",
    "Schema evaluations stopped by their budget: the CPU seconds spent (cpu), or a text too "
    "long for one pattern match (input-too-long).",
    ["reason"],
)
IMPORT_JOBS = Counter(
    "registry_import_jobs_total",
    "Import jobs finished, by outcome (completed, failed: the list could not be read).",
    ["outcome"],
)
IMPORT_ITEMS = Counter(
    "registry_import_items_total",
    "URLs of import jobs finished, by outcome (crawled, invalid, failed).",
    ["outcome"],
)
TRUSTED_EXCHANGES = Counter(
    "registry_trusted_exchanges_total",
    "CI ID tokens exchanged for a publish token (trusted publishing), by outcome (ok, refused) "
    "and reason (ok, or the check that failed: malformed, issuer-not-allowed, "
    "issuer-unreachable, unknown-key, bad-signature, wrong-audience, expired, not-yet-valid, "
    "missing-claim, replayed, no-match, ambiguous, origin-not-verified).",
    ["outcome", "reason"],
)
# One sample per live process (``liveall``): the exposition derives the node's snapshot age
# from the oldest of them, leaving out 0, a process that serves no snapshot.
VECTOR_SNAPSHOT_BUILT = Gauge(
    "registry_vector_snapshot_built_timestamp_seconds",
    "When the vector index snapshot this process serves was built (Unix time; 0 when it serves "
    "none: every vector is read from the database).",
    multiprocess_mode="liveall",
)

# --- Celery tasks (registry/metrics_tasks.py counts them from Celery's signals) --------------
# A task runs from a second (a crawl) to minutes (the vector snapshot, an import's list).
TASK_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 900.0)
TASKS = Counter(
    "registry_tasks_total",
    "Celery tasks run by this node's workers, by task name (the registry's own, else other) "
    "and outcome (succeeded, failed, retried).",
    ["task", "outcome"],
)
TASK_DURATION = Histogram(
    "registry_task_duration_seconds",
    "Wall time of one Celery task run, whatever its outcome, by task name.",
    ["task"],
    buckets=TASK_BUCKETS,
)
# The latest time any process wrote agents' vectors (an embedding task that embedded some):
# a snapshot built before it is behind (the RegistryVectorSnapshotStale rule).
VECTORS_WRITTEN = Gauge(
    "registry_vectors_written_timestamp_seconds",
    "When an embedding task last wrote agents' vectors (Unix time); absent until one has "
    "since the node started.",
    multiprocess_mode="max",
)

# --- label sets made at 0 ---------------------------------------------------------------------
# A labelled counter has no series until its first increment, and then appears at 1: rate()
# and increase() see no change from an absent series, so the first event after a restart was
# missed. Every closed label set below is made at 0 when a process starts serving: each web
# process as it loads its middleware (registry/metrics_requests.py), each Celery child as it
# starts (registry/metrics_tasks.py); not at import, which would write files into the node's
# directory before it is emptied.
CRAWL_OUTCOMES = (
    "stored",
    "unchanged",
    "not-modified",
    "manifest",
    "inline",
    "error",
    "transient-error",
    "timeout",
    "exception",
    "missing",
)
SEARCH_DOORS = ("rest", "catalogue", "ard", "mcp", "a2a")
SEARCH_MODES = ("semantic", "lexical")
LIMITS = ("anon", "validate-url", "submissions", "login", "trusted-exchange", "origin-verify")
TASK_OUTCOMES = ("succeeded", "failed", "retried")
TRUSTED_REFUSALS = (
    "malformed",
    "issuer-not-allowed",
    "issuer-unreachable",
    "unknown-key",
    "bad-signature",
    "wrong-audience",
    "expired",
    "not-yet-valid",
    "missing-claim",
    "replayed",
    "no-match",
    "ambiguous",
    "origin-not-verified",
)


def init_label_sets(task_names: tuple[str, ...] = ()) -> None:
    """Make every closed label set of the registry's counters exist at 0 in this process
    (``task_names``: the tasks a worker runs). ``inc(0)`` writes the value, so a process
    forked after its parent made them makes its own (multiprocess mode)."""
    for outcome in CRAWL_OUTCOMES:
        CRAWLS.labels(outcome=outcome).inc(0)
    for outcome in ("pass", "fail", "not-checked"):
        LIVE_RUNS.labels(outcome=outcome).inc(0)
    for door in SEARCH_DOORS:
        SEARCH_DURATION.labels(door=door)
        for mode in SEARCH_MODES:
            SEARCHES.labels(door=door, mode=mode).inc(0)
    for limit in LIMITS:
        LIMITER_REFUSALS.labels(limit=limit).inc(0)
    for reason in ("cpu", "input-too-long"):
        SCHEMA_BUDGETS_EXHAUSTED.labels(reason=reason).inc(0)
    for outcome in ("completed", "failed"):
        IMPORT_JOBS.labels(outcome=outcome).inc(0)
    for outcome in ("crawled", "invalid", "failed"):
        IMPORT_ITEMS.labels(outcome=outcome).inc(0)
    TRUSTED_EXCHANGES.labels(outcome="ok", reason="ok").inc(0)
    for reason in TRUSTED_REFUSALS:
        TRUSTED_EXCHANGES.labels(outcome="refused", reason=reason).inc(0)
    for task in task_names:
        TASK_DURATION.labels(task=task)
        for outcome in TASK_OUTCOMES:
            TASKS.labels(task=task, outcome=outcome).inc(0)


@contextmanager
def crawl_observed() -> Iterator[dict[str, str]]:
    """Count one crawl and its duration. The caller writes the outcome into the yielded dict
    (``exception`` stands when it raises something it did not name)."""
    started = time.monotonic()
    seen = {"outcome": "exception"}
    try:
        yield seen
    finally:
        CRAWL_DURATION.observe(time.monotonic() - started)
        CRAWLS.labels(outcome=seen["outcome"]).inc()


@contextmanager
def search_observed(door: str, mode: str) -> Iterator[None]:
    """Count one search at ``door`` and time it, failed ones too (a 400 is an answer)."""
    started = time.monotonic()
    try:
        yield
    finally:
        SEARCH_DURATION.labels(door=door).observe(time.monotonic() - started)
        SEARCHES.labels(door=door, mode=mode).inc()


def refused(limit: str) -> None:
    """One request refused by the rate limit named ``limit``."""
    LIMITER_REFUSALS.labels(limit=limit).inc()


# --- collectors computed at scrape time -------------------------------------------------------
# Gauges read from PostgreSQL or Redis when /metrics is asked (the crawl schedule's lag, the
# embedding backlog) are not kept by any process: apps register their collector here (from
# their AppConfig.ready) and the exposition asks each one, in the scraping process only.

SCRAPE_COLLECTORS: list[Collector] = []


def register_scrape_collector(collector: Collector) -> None:
    """Add a collector (an object with ``collect()`` yielding metric families) that reads the
    registry's state when scraped. Registering the same object again does nothing."""
    if collector not in SCRAPE_COLLECTORS:
        SCRAPE_COLLECTORS.append(collector)
