"""Give every agent of a large synthetic registry a vector without embedding it: for speed
measurements of search at 100,000 agents, never for quality.

    .venv/bin/python bench/borrow_vectors.py \
        --source postgres://postgres@127.0.0.1:5432/registry_bench_me10k \
        --database-url postgres://postgres@127.0.0.1:5432/registry_bench_100k

Embedding 100,000 synthetic agents for real costs about an hour of both cores on this machine.
The agents of ``bench/seed.py`` are the same cards for the same index whatever ``-n`` is, so
the agents of a smaller seeded database that were embedded for real (``--source``, same
``--seed``) keep their own vectors here. Every other agent borrows the stored rows of a random
source agent (its whole text and its skills: the same number of rows an agent as real cards),
each row moved by a little noise and normalised again, so no two agents share a vector and the
nearest-neighbour graph is not built over exact duplicates. The rows are written as the worker
writes them (``AgentEmbedding``, the model id the search reads, fresh ``seq`` values). What
this keeps: the number of agents and rows, the rows' spread in the space, the candidates each
need gets. What it does not: which agent a need finds (the text of a borrowed agent is not its
own), so only timings are read from such a database.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import setup_django  # noqa: E402

DIM = 384


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--source", required=True, help="a seeded database embedded for real")
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--noise", type=float, default=0.05, help="per-coordinate, before norm")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--batch", type=int, default=5000)
    args = parser.parse_args()
    with psycopg.connect(args.source) as source:
        rows = source.execute(
            "SELECT agent_id, model, vector FROM cards_agentembedding ORDER BY agent_id"
        ).fetchall()
    if not rows:
        raise SystemExit(f"{args.source} has no embeddings: run bench/semantic_load.py on it")
    own = {pk: (name, bytes(raw)) for pk, name, raw in rows}
    pool = [bytes(raw) for _, _, raw in rows]
    model_id = rows[0][1]
    setup_django(args.database_url)
    from cards.models import Agent
    from search.embedding import store
    from search.models import AgentEmbedding

    rng = np.random.default_rng(args.seed)
    ids = list(
        Agent.objects.filter(embedding__isnull=True).order_by("pk").values_list("pk", flat=True)
    )
    started = time.monotonic()
    kept = borrowed = 0
    for first in range(0, len(ids), args.batch):
        chunk = ids[first : first + args.batch]
        seqs = store._next_seqs(len(chunk))
        made = []
        for pk, seq in zip(chunk, seqs, strict=True):
            if pk in own:
                raw = own[pk][1]
                kept += 1
            else:
                block = np.frombuffer(pool[int(rng.integers(len(pool)))], dtype="<f4")
                block = block.reshape(-1, DIM) + rng.normal(0, args.noise, (len(block) // DIM, DIM))
                block /= np.maximum(np.linalg.norm(block, axis=1, keepdims=True), 1e-12)
                raw = block.astype("<f4").tobytes()
                borrowed += 1
            made.append(
                AgentEmbedding(
                    agent_id=pk, model=model_id, text_sha256="borrowed", vector=raw, seq=seq
                )
            )
        AgentEmbedding.objects.bulk_create(made)
        print(f"\r{first + len(chunk)}/{len(ids)}", end="", flush=True)
    print(
        f"\n{kept} agents kept their own vectors, {borrowed} borrowed "
        f"({time.monotonic() - started:.0f} s); model {model_id}"
    )


if __name__ == "__main__":
    main()
