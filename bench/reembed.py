"""Embedding an agent again after its card changed: the model runs only the changed texts.

Takes ``--agents`` embedded agents of a seeded database, and in each of ``--rounds`` rounds
changes one skill's description of each (the first skill, a word appended), then embeds them
again twice over, alternating which goes first: as a re-crawl does (``store.embed_agents``:
rows whose text is unchanged are kept) and with ``force=True`` (every text through the model,
what every change cost before the rows had keys). Prints the CPU per agent of each, one
process, one model thread::

    .venv/bin/python bench/reembed.py --agents 600 --rounds 3 \\
        --database-url postgres://postgres@127.0.0.1:5432/registry_bench_me10k

The agents' first embedding is forced once at the start, so every row has its key.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import setup_django  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--agents", type=int, default=600)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    setup_django(args.database_url, REGISTRY_EMBEDDING_THREADS="1")

    from django.db import connection

    from search.embedding import model, store
    from search.models import AgentEmbedding

    ids = list(
        AgentEmbedding.objects.order_by("agent_id").values_list("agent_id", flat=True)[
            : args.agents
        ]
    )
    if not ids:
        raise SystemExit("no embedded agent here: bench/semantic_load.py --ingest-only first")
    model.embed(["warm up"])
    store.embed_agents(ids, force=True)  # every row keyed
    spent: dict[str, list[float]] = {"kept rows": [], "every text": []}

    def change(step: str) -> None:
        with connection.cursor() as cursor:
            cursor.execute(
                "UPDATE cards_skill SET description = description || %s"
                " WHERE agent_id = ANY(%s) AND position = 0",
                [f" {step}", ids],
            )

    for round_ in range(args.rounds):
        ways = [("kept rows", False), ("every text", True)]
        for way, force in ways if round_ % 2 == 0 else ways[::-1]:
            change(f"r{round_}{way[0]}")
            began = time.process_time()
            written = store.embed_agents(ids, force=force)
            spent[way].append((time.process_time() - began) / max(1, written) * 1000)
        print(
            f"round {round_ + 1}: "
            + ", ".join(f"{way} {values[-1]:.2f} ms" for way, values in spent.items()),
            flush=True,
        )
    kept, every = (statistics.median(spent[way]) for way in ("kept rows", "every text"))
    print(
        f"{len(ids)} agents, one skill changed each: {kept:.2f} ms of CPU an agent with the "
        f"unchanged rows kept, {every:.2f} ms with every text run (median of {args.rounds}; "
        f"{every / kept:.2f}x)"
    )


if __name__ == "__main__":
    main()
