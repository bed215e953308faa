"""The catalogue's pages (the home page first) are read in the catalogue's order from
``agent_catalogue_idx``, not by sorting every public agent: at 10,000 agents the sort was 25 ms
of PostgreSQL for each home page, the index 0.07 ms (docs/benchmarks.md, "Requests per web
core, by door"). The index is built on the same rank expression and the same rows as the
page's query (cards/models/agents.py); a change to either that the other does not follow loses
the index, and this test says so. Sequential scans and sorts are priced out so that the plan
shows whether the index can serve the query at all, whatever the table's size here."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from tests.factories import agent_from_card, minimal_card

pytestmark = pytest.mark.django_db


def _page_query(client: Client, path: str) -> tuple[str, str]:
    with CaptureQueriesContext(connection) as captured:
        html = client.get(path).content.decode()
    queries = [q["sql"] for q in captured.captured_queries if '"catalogue_rank"' in q["sql"]]
    assert len(queries) == 1, [q["sql"][:200] for q in captured.captured_queries]
    return queries[0], html


def _plan(sql: str) -> list[dict[str, Any]]:
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("SET LOCAL enable_sort = off")
        cursor.execute("SET LOCAL enable_bitmapscan = off")
        cursor.execute("EXPLAIN (FORMAT JSON) " + sql)
        plan = cursor.fetchone()[0]
    plan = json.loads(plan) if isinstance(plan, str) else plan
    nodes, stack = [], [plan[0]["Plan"]]
    while stack:
        node = stack.pop()
        nodes.append(node)
        stack.extend(node.get("Plans", []))
    return nodes


def test_the_home_page_and_the_next_are_read_from_the_catalogue_index() -> None:
    for n in range(23):
        agent_from_card(minimal_card(name=f"Listed {n}"))
    client = Client()
    first, html = _page_query(client, "/")
    nodes = _plan(first)
    assert [n.get("Index Name") for n in nodes if "Index Name" in n] == ["agent_catalogue_idx"]
    assert not [n for n in nodes if n["Node Type"] in ("Sort", "Incremental Sort", "Seq Scan")]
    following = re.search(r'href="(/\?cursor=[^"]+)"', html)
    assert following, "23 agents make a second page"
    second, _ = _page_query(client, following.group(1).replace("&amp;", "&"))
    nodes = _plan(second)
    assert "agent_catalogue_idx" in [n.get("Index Name") for n in nodes]
    assert not [n for n in nodes if n["Node Type"] in ("Sort", "Incremental Sort", "Seq Scan")]
