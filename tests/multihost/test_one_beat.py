"""A second beat, started by mistake on another host: what it does.

Each beat sends the whole schedule (registry/settings/schedule.py, CELERY_BEAT_SCHEDULE) on its own
clock, so with two the workers run every periodic task twice as often: twice the sweeps, and
twice the vector snapshots and live-check sweeps. What the sweeps claim is not doubled: a claim
is a row lock taken with SKIP LOCKED plus a lease (cards/scheduling.py), and a sweep holds a
Redis lock while it runs (cards/tasks.py), so each due agent is crawled once. The waste is why
a deployment runs exactly one beat (docs/deploy.md).
"""

from __future__ import annotations

import re
import time
from collections import Counter

import pytest

from tests.factories import minimal_card
from tests.multihost import api
from tests.multihost.cluster import SWEEP_SECONDS, Cluster
from tests.multihost.hosts import eventually

pytestmark = pytest.mark.disruptive

WINDOW = 5 * SWEEP_SECONDS  # seconds over which sweeps are counted, with both beats up
PORT = 8085
SLOW = 1.5  # each card: the batch is still being crawled while later sweeps come
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


# The workers' line for each sweep they receive says which process queued it (Celery's origin,
# gen<pid>@<host>): one origin per beat (beat's own per-send line is DEBUG, issue 46).
RECEIVED = re.compile(r"task cards\.sweep_due\[[^\]]+\] received \(queued by (\S+)\)")


def _counts(cluster: Cluster) -> Counter[str]:
    """Sweeps received so far by the workers, by the beat that sent them."""
    text = "".join(cluster.hosts[role].log("worker") for role in ("worker-1", "worker-2"))
    return Counter(RECEIVED.findall(text))


def _card(name: str) -> dict[str, object]:
    return minimal_card(
        name=f"Due {name}",
        description="An agent waiting for the sweep.",
        skills=[{"id": "due", "name": "Due", "description": "Is due.", "tags": ["due"]}],
    )


def test_a_second_beat_doubles_the_sweeps_but_each_due_agent_is_crawled_once(
    cluster: Cluster, publisher: str
) -> None:
    cluster.ensure("web-b", "worker-1", "worker-2", "beat")
    cluster.boot("beat-2")  # on a host of its own, with the same configuration
    try:
        before = _counts(cluster)
        started, since = time.monotonic(), time.time()
        # Agents due and not queued (as submissions made while Redis was down): only a sweep
        # queues their crawls, and more sweeps come, from both beats, while they are crawled.
        names = [f"due-{n}" for n in range(6)]
        urls = [cluster.publish(name, _card(name), port=PORT, delay=SLOW) for name in names]
        made = cluster.hosts["beat"].manage(
            "shell", "-c",
            "from django.contrib.auth import get_user_model; "
            "from cards.services import agent_submit; "
            "owner = get_user_model().objects.get(username='multihost-publisher'); "
            f"print(' '.join(str(agent_submit(url=u, user=owner, enqueue=False)[0].pk) "
            f"for u in {urls!r}))",
        )  # fmt: skip
        ids = UUID.findall(made)
        assert len(ids) == len(names), made
        b = cluster.url("web-b", person="publisher")
        eventually(
            lambda: all(api.status(b, publisher, agent) == "ok" for agent in ids),
            90,
            f"the sweeps did not crawl the due agents; logs in {cluster.base}",
            step=1,
        )
        time.sleep(max(2 * SWEEP_SECONDS, WINDOW - (time.monotonic() - started)))
        time.sleep(1)  # the last sweeps sent reach the workers
        after = _counts(cluster)
        crawled = {
            name: len([line for line in cluster.fetches(name) if line["time"] > since])
            for name in names
        }
    finally:
        cluster.remove("beat-2")

    sweeps = after - before
    print(f"sweeps in {time.monotonic() - started:.0f} s: {dict(sweeps)}; crawls: {crawled}")
    assert crawled == {name: 1 for name in names}, crawled
    # Each beat sent the sweep on its own clock, and the workers ran both beats' sweeps.
    by_beat = [count for _, count in sweeps.most_common(2)]
    assert len(by_beat) == 2 and min(by_beat) >= 3, sweeps
    assert sum(sweeps.values()) >= 1.6 * by_beat[0], sweeps
