"""Page 1 against deep pages of the agent list: the keyset as a row comparison, and as the
``created_at < X OR (created_at = X AND id < Y)`` condition it replaced.

Seeds ``--agents`` plain agents (public, rendered) into a database named *bench* (created if
missing, reused when it already holds them), then times each page query with EXPLAIN ANALYZE
(PostgreSQL's own execution time, median of ``--runs``) at rows 1, 5,001 and 50,001.

    .venv/bin/python bench/deep_pages.py \\
        --database-url postgres://postgres@127.0.0.1:5432/registry_deep_bench --agents 100000
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import ensure_database, median, setup_django  # noqa: E402


def seed(count: int) -> None:
    from django.db import connection

    from cards.models import Agent
    from cards.rendering.store import DOC_FORMAT

    have = Agent.objects.count()
    batch: list[Any] = []
    for i in range(have, count):
        url = f"https://deep-{i}.bench.example/agent-card.json"
        batch.append(
            Agent(
                url=url,
                card_url=url,
                name=f"Deep {i}",
                moderation=Agent.Moderation.APPROVED,
                health=Agent.Health.HEALTHY,
                doc_format=DOC_FORMAT,
                summary_doc="{}",
            )
        )
        if len(batch) == 5000:
            Agent.objects.bulk_create(batch)
            batch = []
    Agent.objects.bulk_create(batch)
    with connection.cursor() as cursor:
        if have < count:  # spread the creation times (bulk_create gives them all "now")
            cursor.execute(
                "UPDATE cards_agent SET created_at = "
                "timestamptz '2026-01-01' + abs(hashtext(url)) % 50000000 * interval '1s'"
            )
        cursor.execute("ANALYZE cards_agent")


def execution_ms(query: Any) -> float:
    from django.db import connection

    sql, params = query.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + sql, params)
        plan = cursor.fetchone()[0]
    plan = json.loads(plan) if isinstance(plan, str) else plan
    return float(plan[0]["Execution Time"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--database-url", default="postgres://postgres@127.0.0.1:5432/registry_deep_bench"
    )
    parser.add_argument("--agents", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    ensure_database(args.database_url)
    setup_django(args.database_url)
    from django.core.management import call_command
    from django.db.models import Q

    from cards.api.reads import AGENTS
    from cards.reads import gate

    call_command("migrate", verbosity=0)
    seed(args.agents)
    rows = gate.agents(gate.ANONYMOUS, include_gone=False)
    columns = ("pk", "summary_doc")
    print(f"{args.agents} agents, 20 per page, PostgreSQL execution time (median of {args.runs})")
    for depth in (0, 5000, 50000):
        if depth >= args.agents:
            continue
        after = None
        if depth:
            after = list(AGENTS.ordered(rows, None).values_list("created_at", "id")[depth - 1])
        ours = AGENTS.ordered(rows, after).values_list(*columns)[:21]
        before = rows.order_by(*AGENTS.order)
        if after:
            x, y = after
            before = before.filter(Q(created_at__lt=x) | Q(created_at=x, id__lt=y))
        before = before.values_list(*columns)[:21]
        for label, query in (("row comparison", ours), ("OR condition", before)):
            took = median([execution_ms(query) for _ in range(args.runs)])
            print(f"  row {depth + 1:>6}: {label:<15} {took:8.3f} ms")


if __name__ == "__main__":
    main()
