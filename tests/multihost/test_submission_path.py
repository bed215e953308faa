"""A submission on web node A is crawled by a worker on another host, found by meaning on web
node B, and counted in the crawling node's metrics.

Nothing of it travels over a shared disk: B's vectors come from PostgreSQL (the rows as they are
written, then the snapshot a worker publishes there; search/index/), and each host
has its own embedding directory.
"""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.multihost import api
from tests.multihost.cluster import METRICS_PORT, Cluster, metrics_available
from tests.multihost.hosts import eventually

pytestmark = pytest.mark.disruptive

# A need in other words than the card's: only its meaning connects them.
NEED = "when is the sea deepest at the port tomorrow morning"


def _card(agents: str) -> dict[str, object]:
    return {
        "name": "Harbourmaster",
        "description": "Tide tables for harbours and estuaries: times and heights of high and "
        "low water.",
        "supportedInterfaces": [
            {
                "url": f"http://{agents}:8080/a2a",
                "protocolBinding": "JSONRPC",
                "protocolVersion": "1.0",
            },
        ],  # fmt: skip
        "version": "1.0.0",
        "capabilities": {"streaming": False},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [
            {
                "id": "tides",
                "name": "Tide predictions",
                "tags": ["tides"],
                "description": "Predicts high and low water times and heights for a harbour on a "
                "given date.",
            },
        ],  # fmt: skip
    }


def _snapshots(host_directory: Path) -> set[str]:
    """The vector index snapshots a host holds in its own embedding directory."""
    return {meta.parent.name for meta in (host_directory / "embedding").glob("index/*/*/meta.json")}


def test_a_submission_on_a_is_crawled_elsewhere_found_by_meaning_on_b_and_counted(
    cluster: Cluster, publisher: str
) -> None:
    cluster.ensure("web-a", "web-b", "worker-1", "worker-2")
    if cluster.model_dir is None:
        pytest.skip("the embedding model package is not installed: no search by meaning")
    a = cluster.url("web-a", person="publisher")
    b = cluster.url("web-b", person="publisher")
    card_url = cluster.publish("harbourmaster", _card(cluster.address("agents")), port=8080)

    agent = api.submit(a, publisher, card_url)
    eventually(lambda: api.status(a, publisher, agent) == "ok", 60, "the agent was not crawled")

    # Crawled by a worker: its host's address is the one the agents host saw.
    workers = {cluster.address(role): role for role in ("worker-1", "worker-2")}
    fetched_by = {line["client"] for line in cluster.fetches("harbourmaster")}
    assert fetched_by and fetched_by <= set(workers), fetched_by
    crawler = workers[sorted(fetched_by)[0]]

    # Found by meaning on B (the owner's view while waiting, then as anyone sees it).
    eventually(
        lambda: agent in [found["id"] for found in api.search(b, NEED, token=publisher)],
        60,
        f"B does not find the agent by meaning; logs in {cluster.base}",
        step=1,
    )
    reader = cluster.url("web-b", person="reader")
    found = api.search(reader, NEED)
    assert found[0]["id"] == agent, [(hit["name"], hit.get("score")) for hit in found]
    assert found[0]["score"] > 0 and found[0]["matched_skill"]
    assert agent not in [hit["id"] for hit in api.search(reader, NEED, mode="lexical")]

    # The snapshot a worker writes reaches B through PostgreSQL, into B's own directory.
    web_b = cluster.hosts["web-b"].directory
    held_by_b = _snapshots(web_b)
    worker = cluster.hosts[crawler]
    worker.manage("shell", "-c", "from search.tasks import save_vector_index; save_vector_index()")
    new = _snapshots(worker.directory) - held_by_b
    assert new, "the worker wrote no new snapshot"
    time.sleep(1.2)  # a process looks for a new snapshot at most once a second

    def b_took_it() -> bool:
        hits = api.search(b, NEED, token=publisher)
        return bool(hits) and hits[0]["id"] == agent and new <= _snapshots(web_b)

    eventually(b_took_it, 30, "B did not copy the snapshot from PostgreSQL", step=1)

    # Counted where it happened: the crawling worker's node, scraped as Prometheus would.
    if not metrics_available():
        pytest.skip("registry/metrics.py is not there yet: the metrics step is left out")
    scraped = httpx.get(
        f"{cluster.url(crawler, METRICS_PORT, person='monitor')}/metrics", timeout=10
    )
    assert scraped.status_code == 200, scraped.text[:300]
    crawls = {
        sample.labels.get("outcome"): sample.value
        for family in text_string_to_metric_families(scraped.text)
        for sample in family.samples
        if sample.name == "registry_crawls_total"
    }
    assert crawls.get("stored", 0) >= 1, crawls
