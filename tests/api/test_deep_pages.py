"""Deep pages cost what the first page costs: the keyset is a row comparison bound by an index.

``created_at < X OR (created_at = X AND id < Y)`` was applied as a filter, so page 251 read and
discarded 5,000 rows. ``(created_at, id) < (X, Y)`` on the matching index starts the scan at
the cursor. The plans are pinned on PostgreSQL with EXPLAIN ANALYZE of the SQL each list runs,
at a depth of 2,000 rows: an Index Cond carrying the ROW comparison, no row removed by a filter,
and no more rows read than the page needs.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from cards.models import Agent, FacetCount, Mode, Snapshot
from cards.rendering.store import DOC_FORMAT

pytestmark = pytest.mark.django_db

N = 2600
PAGE = 100
DEPTH = 20  # pages walked before the one explained: 2,000 rows deep


@pytest.fixture
def many(db: None) -> None:
    if connection.vendor != "postgresql":
        pytest.skip("query plans are PostgreSQL's")
    agents = []
    for i in range(N):
        agent = Agent(
            url=f"https://deep-{i}.example/agent-card.json",
            card_url=f"https://deep-{i}.example/agent-card.json",
            name=f"Deep {i:05d}",
            moderation=Agent.Moderation.APPROVED,
            ever_public=True,
            health=Agent.Health.HEALTHY,
            ard_identifier=f"urn:air:deep-{i}.example:a2a:deep",
            doc_format=DOC_FORMAT,
        )
        agent.summary_doc = json.dumps({"id": str(agent.pk), "name": agent.name})
        agents.append(agent)
    Agent.objects.bulk_create(agents, batch_size=1000)
    # Each has a card: an agent without one is its owner's only (cards.reads.gate).
    Snapshot.objects.bulk_create(
        [
            Snapshot(
                agent=a, sha256=f"{i:064x}", raw=b"{}", data={}, fetched_at="2026-01-01T00:00Z"
            )
            for i, a in enumerate(agents)
        ],
        batch_size=1000,
    )
    Mode.objects.bulk_create(
        [
            Mode(
                agent=a,
                direction="input",
                media_type="application/json;schema=Deep",
                essence="application/json",
                schema="Deep",
            )
            for a in agents
        ],  # fmt: skip
        batch_size=1000,
    )
    # Many ties (counts 1 to 5): the second key must bound the scan too.
    FacetCount.objects.bulk_create(
        FacetCount(kind="tag", key=f"tag-{i:05d}", agents=1 + i % 5, extra=1) for i in range(N)
    )
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE cards_agent SET latest_snapshot_id = s.id FROM cards_snapshot s"
            " WHERE s.agent_id = cards_agent.id"
        )
        cursor.execute(
            "UPDATE cards_agent SET "
            "created_at = timestamptz '2026-01-01' + abs(hashtext(url)) % 5000000 * interval '1s', "
            "updated_at = timestamptz '2026-02-01' + abs(hashtext(name)) % 5000000 * interval '1s'"
        )
        for table in ("cards_agent", "cards_facetcount", "cards_mode"):
            cursor.execute(f"ANALYZE {table}")


def _deep_sql(client: Client, url: str, marker: str) -> str:
    """Walk ``DEPTH`` pages of a list by its ``next`` links, then return the SQL of the next
    page's read (the one query whose text has ``marker``)."""
    for _ in range(DEPTH):
        response = client.get(url)
        assert response.status_code == 200, response.content[:300]
        url = response.json()["next"]
        assert url
    with CaptureQueriesContext(connection) as captured:
        response = client.get(url)
        assert response.status_code == 200, response.content[:300]
    found = [q["sql"] for q in captured.captured_queries if marker in q["sql"]]
    assert len(found) == 1, [q["sql"][:200] for q in captured.captured_queries]
    return found[0]


def _nodes(plan: dict[str, Any]) -> list[dict[str, Any]]:
    out = [plan]
    for child in plan.get("Plans", []):
        out += _nodes(child)
    return out


def _explain(sql: str) -> list[dict[str, Any]]:
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + sql)
        plan = cursor.fetchone()[0]
    if isinstance(plan, str):
        plan = json.loads(plan)
    return _nodes(plan[0]["Plan"])


def assert_bound_by_index(sql: str, table: str) -> None:
    nodes = _explain(sql)
    scans = [n for n in nodes if n.get("Relation Name") == table and "Index" in n["Node Type"]]
    assert scans, [(n["Node Type"], n.get("Relation Name")) for n in nodes]
    scan = scans[0]
    assert "ROW(" in scan.get("Index Cond", ""), scan
    assert scan.get("Rows Removed by Filter", 0) == 0, scan
    assert scan["Actual Rows"] <= PAGE + 1, scan


def test_v1_agent_list_pages_by_index(many: None) -> None:
    client = Client()
    sql = _deep_sql(client, f"/api/v1/agents?limit={PAGE}", '"cards_agent"."created_at", ')
    assert_bound_by_index(sql, "cards_agent")


def test_change_feed_pages_by_index(many: None) -> None:
    client = Client()
    url = f"/api/v1/agents?limit={PAGE}&updated_since=2026-01-01T00:00:00Z"
    sql = _deep_sql(client, url, '"cards_agent"."updated_at", ')
    assert_bound_by_index(sql, "cards_agent")


def test_schema_agents_page_by_index(many: None) -> None:
    client = Client()
    url = f"/api/v1/schemas/Deep/agents?limit={PAGE}"
    sql = _deep_sql(client, url, '"cards_agent"."id") < (')
    nodes = _explain(sql)
    scans = [n for n in nodes if n.get("Relation Name") == "cards_agent"]
    assert scans and "ROW(" in scans[0].get("Index Cond", ""), scans


def test_facet_pages_by_index(many: None) -> None:
    client = Client()
    sql = _deep_sql(client, f"/api/v1/tags?limit={PAGE}", "cards_facetcount")
    assert_bound_by_index(sql, "cards_facetcount")


@pytest.mark.parametrize("order", ["createdAt DESC", "updatedAt", "identifier"])
def test_ard_listing_pages_by_index(many: None, order: str) -> None:
    client = Client()
    base = f"/ard/agents?pageSize={PAGE}&orderBy={order.replace(' ', '+')}"
    url = base
    for _ in range(DEPTH):
        body = client.get(url).json()
        assert body.get("pageToken"), body
        url = f"{base}&pageToken={body['pageToken']}"
    with CaptureQueriesContext(connection) as captured:
        assert client.get(url).status_code == 200
    sql = next(q["sql"] for q in captured.captured_queries if "ORDER BY" in q["sql"])
    nodes = _explain(sql)
    scans = [
        n for n in nodes if n.get("Relation Name") == "cards_agent" and "Index" in n["Node Type"]
    ]
    assert (
        scans
        and "ROW(" in scans[0].get("Index Cond", "")
        or (
            # A unique column alone: the row comparison bounds it, and at most one row is rechecked.
            order == "identifier" and scans and scans[0].get("Rows Removed by Filter", 0) <= 1
        )
    ), [(n["Node Type"], n.get("Index Cond"), n.get("Filter")) for n in nodes]
    assert scans[0].get("Rows Removed by Filter", 0) <= 1 and scans[0]["Actual Rows"] <= PAGE + 2
