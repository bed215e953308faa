"""What a scrape answers: this node's processes, each counted once, and gauges read now.

Two sources make one exposition, for ``/metrics`` (registry/metrics_view.py) and for the Celery
worker's own server (registry/metrics_worker.py):

* **the processes' series**. Without ``PROMETHEUS_MULTIPROC_DIR`` (``make run``, tests) it is
  this process's registry. With it, every process of the node (web workers, Celery's prefork
  children) has written its values to its own files in that directory, named by its pid, and
  :class:`~prometheus_client.multiprocess.MultiProcessCollector` adds them up: a counter is the
  sum over the files, so each increment, made once by the one process that did the work, is
  counted once whichever process answers the scrape. Before reading, the files of processes
  that are gone from this node are marked dead (their ``live*`` gauges dropped, their counters
  kept), which covers servers without a hook for it (granian) and children killed outright;
* **gauges computed at scrape time** by the collectors the apps registered
  (:data:`registry.metrics.SCRAPE_COLLECTORS`: the crawl schedule's lag, the embedding backlog),
  and the vector snapshot's age, derived from the processes' snapshot timestamps. A collector
  that fails (its database or Redis is down) is left out of that scrape and logged: the rest is
  still answered.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterable
from pathlib import Path

from prometheus_client import REGISTRY, CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.multiprocess import MultiProcessCollector, mark_process_dead

from registry import metrics

logger = logging.getLogger(__name__)

SNAPSHOT_BUILT = "registry_vector_snapshot_built_timestamp_seconds"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


def sweep_dead(directory: str) -> list[int]:
    """Mark the processes whose ``live*`` gauge files are in ``directory`` but which no longer
    run on this node as dead; returns their pids. (A pid taken again by a new process keeps
    the old one's gauges until that process writes its own: the same values, overwritten.)"""
    pids: set[int] = set()
    for path in Path(directory).glob("gauge_live*_*.db"):
        tail = path.stem.rsplit("_", 1)[-1]
        if tail.isdigit():
            pids.add(int(tail))
    gone = sorted(pid for pid in pids if pid != os.getpid() and not _alive(pid))
    for pid in gone:
        mark_process_dead(pid, directory)
    return gone


def process_families() -> list[Metric]:
    """The series every process keeps: this node's, added up, or this process's own."""
    directory = metrics.MULTIPROCESS_DIR
    if directory is None:
        return list(REGISTRY.collect())
    sweep_dead(directory)
    return list(MultiProcessCollector(None, directory).collect())


def snapshot_age(families: Iterable[Metric], now: float) -> Metric | None:
    """``registry_vector_snapshot_age_seconds``: how old the oldest vector snapshot served by a
    live process of this node is (None when no process serves one)."""
    built = [
        sample.value
        for family in families
        if family.name == SNAPSHOT_BUILT
        for sample in family.samples
        if sample.value > 0
    ]
    if not built:
        return None
    return GaugeMetricFamily(
        "registry_vector_snapshot_age_seconds",
        "Seconds since the oldest vector index snapshot served by a live process of this node "
        "was built (searches read newer vectors from the database on top of it).",
        value=max(0.0, now - min(built)),
    )


def scraped_families() -> list[Metric]:
    """What the registered scrape-time collectors read now (a failing one is left out)."""
    out: list[Metric] = []
    for collector in list(metrics.SCRAPE_COLLECTORS):
        try:
            out.extend(collector.collect())
        except Exception:  # a database or Redis outage must not take the other series down
            logger.warning("metrics collector %s failed", type(collector).__name__, exc_info=True)
    return out


class NodeCollector:
    """Every family of one scrape of this node (see the module's docstring)."""

    def collect(self) -> Iterable[Metric]:
        families = process_families()
        age = snapshot_age(families, time.time())
        if age is not None:
            families.append(age)
        families.extend(scraped_families())
        return families


def node_registry() -> CollectorRegistry:
    """A registry that collects :class:`NodeCollector`. Nothing is described up front (the
    families are known only when scraped), so it is kept as a collector without names, which
    a scrape filtered by ``name[]`` still asks."""
    registry = CollectorRegistry(auto_describe=False, support_collectors_without_names=True)
    registry.register(NodeCollector())
    return registry


def exposition() -> bytes:
    """The text exposition format (0.0.4) of one scrape."""
    return generate_latest(node_registry())
