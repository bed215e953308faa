"""Proposed search indexes, measurable before they are in the registry (docs/benchmarks.md).

    .venv/bin/python bench/proposals.py \
        --source registry_bench_100k --target registry_bench_proposal
    .venv/bin/python bench/search_load.py --proposal-indexes \
        --database-url postgres://postgres@127.0.0.1:5432/registry_bench_proposal

1. ``cards_agent.search_vector``: ``to_tsvector('english', search_text)`` as a STORED generated
   column with a GIN index. Text search then reads the vector instead of recomputing
   ``to_tsvector`` for every row the ``ORDER BY created_at DESC LIMIT 21`` plan walks (the
   planner often walks thousands).
2. ``cards_agent.tag_list``: the agent's distinct normalised tags as ``text[]`` with a GIN
   index. ``tag_list @> ARRAY[...]`` has element statistics (unlike jsonb ``@>``), so the
   planner picks a bitmap scan for rare tags and tag pairs instead of a nested loop over the
   whole ``created_at`` index.

``--source``/``--target`` copies a seeded database (``CREATE DATABASE ... TEMPLATE``) and adds
both, backfilling ``tag_list`` from ``cards_skilltag``. ``install()`` (used by
bench/wsgi_timing.py when BENCH_PROPOSAL_INDEXES=1) swaps ``cards.selectors.text_filter`` and
``with_tag`` for versions that use them. The registry itself is not changed.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import check_loopback  # noqa: E402

DDL = (
    "ALTER TABLE cards_agent ADD COLUMN IF NOT EXISTS search_vector tsvector GENERATED ALWAYS AS "
    "(to_tsvector('english'::regconfig, search_text)) STORED",
    "CREATE INDEX IF NOT EXISTS agent_search_vector_gin ON cards_agent USING gin (search_vector)",
    "ALTER TABLE cards_agent ADD COLUMN IF NOT EXISTS tag_list text[] NOT NULL DEFAULT '{}'",
    "UPDATE cards_agent a SET tag_list = t.tags FROM (SELECT agent_id, "
    "array_agg(DISTINCT tag ORDER BY tag) AS tags FROM cards_skilltag GROUP BY agent_id) t "
    "WHERE t.agent_id = a.id",
    "CREATE INDEX IF NOT EXISTS agent_tag_list_gin ON cards_agent USING gin (tag_list)",
)


def install() -> None:
    """Make the search selectors use the proposed columns (this process only)."""
    from cards import selectors
    from cards.indexing import normalise_tag

    original_text_filter = selectors.text_filter

    def text_filter(queryset: Any, text: str) -> Any:
        text = text.strip()
        if not text or not selectors._uses_postgres():
            return original_text_filter(queryset, text)
        return queryset.extra(
            where=["cards_agent.search_vector @@ websearch_to_tsquery('english'::regconfig, %s)"],
            params=[text],
        )

    def with_tag(queryset: Any, tag: str) -> Any:
        return queryset.extra(
            where=["cards_agent.tag_list @> ARRAY[%s]::text[]"], params=[normalise_tag(tag)]
        )

    selectors.text_filter = text_filter
    selectors.with_tag = with_tag


def main() -> None:
    import psycopg
    from psycopg import sql

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--server", default="postgres://postgres@127.0.0.1:5432")
    parser.add_argument("--source", default="registry_bench_100k")
    parser.add_argument("--target", default="registry_bench_proposal")
    args = parser.parse_args()
    check_loopback(args.server)
    if "bench" not in args.target:
        raise SystemExit("the target database's name must contain 'bench' (it is dropped)")
    started = time.monotonic()
    with psycopg.connect(args.server + "/postgres", autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(sql.Identifier(args.target)))
        conn.execute(
            sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(
                sql.Identifier(args.target), sql.Identifier(args.source)
            )
        )
    with psycopg.connect(f"{args.server}/{args.target}", autocommit=True) as conn:
        for statement in DDL:
            conn.execute(statement)
        conn.execute("VACUUM (ANALYZE) cards_agent")
    print(f"{args.target}: copy of {args.source} with the proposed columns and indexes "
          f"({time.monotonic() - started:.0f}s)")


if __name__ == "__main__":
    main()
