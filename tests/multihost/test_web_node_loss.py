"""Web node A stops: web node B still serves every door (REST, catalogue, ARD, A2A, /mcp), each
answered from the shared PostgreSQL and Redis, nothing of A's."""

from __future__ import annotations

import httpx
import pytest

from tests.faults.doors import failing
from tests.multihost.cluster import PROTOCOLS_PORT, WEB_PORT, Cluster
from tests.multihost.hosts import eventually

pytestmark = pytest.mark.disruptive


def _all_doors(cluster: Cluster, role: str, person: str, agent: str) -> dict[str, str]:
    """What fails on ``role``: the image's server (REST, A2A, ARD, catalogue; compose serves
    /mcp from the protocols server) and the protocols server (every door, /mcp included)."""
    web = failing(cluster.url(role, WEB_PORT, person=person), agent, skip=("mcp",))
    protocols = failing(cluster.url(role, PROTOCOLS_PORT, person=person), agent)
    return {f"{role}:{WEB_PORT} {k}": v for k, v in web.items()} | {
        f"{role}:{PROTOCOLS_PORT} {k}": v for k, v in protocols.items()
    }


def test_stopping_web_node_a_leaves_b_serving_every_door(cluster: Cluster) -> None:
    cluster.ensure("web-a", "web-b")
    weather = cluster.demo["weather"]
    a = cluster.url("web-a", WEB_PORT, person="visitor")
    assert httpx.get(a + "/healthz", timeout=5).status_code == 200
    # B serves every door (warm: the demo agent's vector came to it through PostgreSQL). Each
    # attempt as another person: every anonymous call takes from the caller's budget.
    attempts = iter(range(8))
    last: dict[str, str] = {}

    def b_serves() -> bool:
        nonlocal last
        last = _all_doors(cluster, "web-b", f"early-visitor-{next(attempts)}", weather)
        return not last

    eventually(b_serves, 60, lambda: f"before A stops, doors of B fail: {last}", step=2)

    host = cluster.hosts["web-a"]
    host.stop("web")
    host.stop("protocols")
    with pytest.raises(httpx.HTTPError):
        httpx.get(a + "/healthz", timeout=3)

    # B answers every door, and keeps answering: not one lucky call.
    for round_ in range(2):
        assert _all_doors(cluster, "web-b", f"visitor-{round_}", weather) == {}
