"""The anonymous budget of one client is one budget, kept in Redis, whichever web node it asks:
part of it spent on A and the rest on B, the next request is refused on either node."""

from __future__ import annotations

import time

import httpx
import pytest

from tests.multihost.cluster import ANON_RATE, PROTOCOLS_PORT, WEB_PORT, Cluster
from tests.multihost.hosts import eventually

pytestmark = pytest.mark.disruptive

BUDGET, PERIOD = (int(ANON_RATE.split("/")[0]), 3600)
assert ANON_RATE.endswith("/hour")


def _ask(base: str) -> int:
    return httpx.get(f"{base}/api/v1/agents", params={"limit": 1}, timeout=10).status_code


def test_one_anonymous_budget_holds_across_both_web_nodes(cluster: Cluster) -> None:
    cluster.ensure("web-a", "web-b")
    a = cluster.url("web-a", WEB_PORT, person="stranger")
    b = cluster.url("web-b", WEB_PORT, person="stranger")
    b_protocols = cluster.url("web-b", PROTOCOLS_PORT, person="stranger")
    # The windows are fixed hours: do not start at the very end of one.
    left = PERIOD - time.time() % PERIOD
    if left < 30:
        time.sleep(left + 1)

    on_a = BUDGET * 3 // 5
    answers = [_ask(a) for _ in range(on_a)] + [_ask(b) for _ in range(BUDGET - on_a)]
    assert answers == [200] * BUDGET, answers

    refused = {"A": httpx.get(f"{a}/api/v1/agents", timeout=10)}
    refused["B"] = httpx.get(f"{b}/ard/agents", timeout=10)
    refused["B protocols"] = httpx.get(f"{b_protocols}/", timeout=10)
    for node, response in refused.items():
        assert response.status_code == 429, (node, response.status_code, response.text[:200])
        assert int(response.headers["Retry-After"]) > 0, node

    # Another client is not refused: the budget is this client's, not the node's.
    other = cluster.url("web-a", WEB_PORT, person="neighbour")
    eventually(lambda: _ask(other) == 200, 10, "another client was refused too")
