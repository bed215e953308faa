"""A worker host dies in the middle of crawls (its cable pulled, every process killed, its
namespace deleted): no crawl is lost, the other worker host finishes every one.

The messages it held (crawls running, and a sweep's batch reserved ahead of its countdown) stay
unacknowledged in Redis until the broker's visibility timeout, an hour. Long before that the
agents' rows bring them back: a submission (leased while its first crawl is queued, so that
the sweep does not crawl it twice) and an agent of a batch are due again when their lease runs
out. The politeness slots the
dead worker held at the origin expire a third past the crawl time limit; meanwhile the other
worker's crawls there find it busy and wait, without extending them (they did, and the origin
was never crawled again: cards/politeness.py). The cluster runs with a short lease and time
limit (tests/multihost/cluster.py) so that all of it fits in a test.
"""

from __future__ import annotations

import signal
import time

import pytest

from tests.factories import minimal_card
from tests.multihost import api
from tests.multihost.cluster import Cluster
from tests.multihost.hosts import eventually

pytestmark = pytest.mark.disruptive

SLOW = 6.0  # seconds each card takes to arrive: long enough to be caught in the middle
PORT = 8082  # one origin for all: at most two crawls there at once (REGISTRY_ORIGIN_CONCURRENCY)


def _card(name: str) -> dict[str, object]:
    return minimal_card(
        name=f"Slow {name}",
        description="A card that takes its time to arrive.",
        skills=[{"id": "wait", "name": "Wait", "description": "Waits.", "tags": ["slow"]}],
    )


def _fetching(cluster: Cluster, names: list[str], client: str, before: float) -> dict[str, int]:
    """Fetches of each card that ``client`` started and had not been answered by ``before``."""
    open_fetches = dict.fromkeys(names, 0)
    for name in names:
        for line in cluster.fetches(name, at="start"):
            open_fetches[name] += line["client"] == client and line["time"] < before
        for line in cluster.fetches(name, at="end"):
            open_fetches[name] -= line["client"] == client and line["time"] < before
    return open_fetches


def test_pulling_a_worker_host_out_in_the_middle_of_crawls_loses_no_crawl(
    cluster: Cluster, publisher: str
) -> None:
    cluster.ensure("web-b", "worker-1", "worker-2", "beat")
    b = cluster.url("web-b", person="publisher")
    names = [f"slow-{n}" for n in range(4)]
    urls = {name: cluster.publish(name, _card(name), port=PORT, delay=SLOW) for name in names}
    doomed, survivor = cluster.hosts["worker-1"], cluster.hosts["worker-2"]

    # Worker 2 is held off for a moment, so that worker 1 takes the first crawls with both its
    # processes, and both of the origin's slots; the others wait for worker 2. A stopped worker's
    # connection still has its last BRPOP waiting in Redis, which hands it the next message: of
    # three submissions it takes one at most, and worker 1 gets the other two. (Each submission
    # is queued once: its row is leased while its crawl waits, so no sweep adds a second.)
    survivor.send("worker", signal.SIGSTOP)
    try:
        ids = {name: api.submit(b, publisher, urls[name]) for name in names[:3]}

        def doomed_is_busy() -> bool:
            return sum(_fetching(cluster, names, doomed.address, time.time()).values()) >= 2

        eventually(doomed_is_busy, 30, "worker 1 did not start two crawls at once")
        ids |= {name: api.submit(b, publisher, urls[name]) for name in names[3:]}
    finally:
        survivor.send("worker", signal.SIGCONT)
    time.sleep(1.0)  # worker 2 takes the others: the origin is busy, they wait their turn

    killed_at = time.time()
    cluster.remove("worker-1")

    def all_crawled() -> bool:
        return all(api.status(b, publisher, agent) == "ok" for agent in ids.values())

    eventually(all_crawled, 120, f"crawls were lost with worker 1; logs in {cluster.base}", step=1)
    # The crawls cut short (worker 1 never had their answer) were made again by worker 2, after
    # worker 1 was gone. (The agents host may have written worker 1's answers after the kill,
    # into sockets nobody reads any more: those do not count.)
    answered = {
        line["path"].rsplit("/", 1)[1].removesuffix(".json")
        for name in names
        for line in cluster.fetches(name)
        if line["client"] == doomed.address and line["time"] < killed_at
    }
    cut = [name for name, n in _fetching(cluster, names, doomed.address, killed_at).items() if n]
    cut = [name for name in cut if name not in answered]
    assert cut, "worker 1 was not in the middle of a crawl"
    for name in cut:
        again = [
            line
            for line in cluster.fetches(name)
            if line["time"] > killed_at and line["client"] == survivor.address
        ]
        assert 200 in [line["status"] for line in again], (name, cluster.fetches(name))
