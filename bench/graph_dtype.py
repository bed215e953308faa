"""The vector snapshot's graph in float16 or int8: search time against the exact nearest agents.

    .venv/bin/python bench/graph_dtype.py \
        --database-url postgres://postgres@127.0.0.1:5432/registry_bench_100k

Reads the rows of the current snapshot (``search/index/snapshot.py``: every agent's whole
text and skills), builds a usearch graph of them in each element type with the snapshot's own
settings, and asks each graph for the nearest rows of the same needs (``bench/semantic_load.py``'s
synthetic needs, their vectors from the model), for several counts of rows. For each it prints
the CPU per search (``time.process_time``, median of the rounds) and the share of the exact 100
nearest agents (each agent at its best row, by brute force over every row in float32) that the
rows found cover once collapsed to agents, as ``VectorIndex.nearest`` collapses them. The graph
only finds candidates (their rows are then scored exactly), so this share is what the element
type changes.

``--pca 96,128,192`` also builds int8 graphs of the rows projected on their first principal
components (centred; the need is projected the same way, which keeps the order of inner
products up to the dropped components): fewer bytes a row for the graph to read, at the cost of
the components left out. Measured on 2026-11-28 and not adopted (docs/search.md).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import setup_django  # noqa: E402
from bench.semantic_load import needs  # noqa: E402

WANTED = 100  # agents a first page asks the graph for (search/semantic.py NEAREST_MIN)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--needs", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--rows", default="f16:200,i8:200,i8:250,i8:300,i8:400")
    parser.add_argument("--pca", default="", help="dimensions of projected graphs, e.g. 96,128")
    args = parser.parse_args()
    setup_django(args.database_url)

    from search.embedding import model
    from search.index import snapshot as files
    from search.index import vectors

    queries = np.array([model.embed_query(t) for t in needs(args.needs, seed=5)], np.float32)
    index = vectors.index()
    index.refresh(force=True)
    snapshot = index.snapshot
    if not len(snapshot.ids):
        raise SystemExit("no snapshot: run bench/semantic_load.py on this database first")
    span, count = files.KEY_SPAN, len(snapshot.ids)
    offsets = np.asarray(snapshot.offsets)
    skill_keys = [
        np.arange(1, 1 + offsets[i + 1] - offsets[i], dtype=np.int64) + i * span
        for i in range(count)
    ]
    keys = np.concatenate([np.arange(count, dtype=np.int64) * span, *skill_keys]).astype(np.uint64)
    rows = np.vstack(
        [np.asarray(snapshot.matrix, np.float32), np.asarray(snapshot.skills, np.float32)]
    )
    owner = (keys // span).astype(np.int64)
    print(f"{count} agents, {len(rows)} rows; exact nearest agents by brute force ...")
    exact = []
    for query in queries:
        best = np.full(count, -9.0, dtype=np.float32)
        np.maximum.at(best, owner, rows @ query)
        exact.append(set(np.argsort(-best)[:WANTED].tolist()))
    graphs: dict[str, Any] = {}
    projections: dict[str, np.ndarray] = {}
    for kind in dict.fromkeys(spec.split(":")[0] for spec in args.rows.split(",")):
        graph = files.new_graph(kind)
        started = time.monotonic()
        graph.add(keys, rows, threads=2)
        graphs[kind] = graph
        print(f"{kind}: built in {time.monotonic() - started:.0f} s")
    if args.pca:
        from usearch.index import Index

        centred = rows - rows.mean(axis=0)
        values, axes = np.linalg.eigh(centred.T @ centred / len(rows))
        axes, values = axes[:, ::-1], values[::-1]
        counts = sorted({int(spec.split(":")[1]) for spec in args.rows.split(",")})
        for dims in (int(d) for d in args.pca.split(",")):
            basis = axes[:, :dims].astype(np.float32)
            projected = centred @ basis
            basis /= np.abs(projected).max()  # int8 rows hold values in [-1, 1]
            kind = f"pca{dims}"
            graph = Index(ndim=dims, metric="ip", dtype="i8", connectivity=16, expansion_add=128)
            started = time.monotonic()
            graph.add(keys, centred @ basis, threads=2)
            graphs[kind], projections[kind] = graph, basis
            kept = values[:dims].sum() / values.sum()
            spent = time.monotonic() - started
            print(f"{kind}: {kept:.3f} of the variance, built in {spent:.0f} s")
            args.rows += "".join(f",{kind}:{count}" for count in counts)
    print(
        f"{'graph':6s} {'rows asked':>10s} {'CPU ms/search':>14s} "
        f"{'exact ' + str(WANTED) + ' agents found':>24s}"
    )
    for spec in args.rows.split(","):
        kind, asked = spec.split(":")
        graph = graphs[kind]
        asked_with = queries @ projections[kind] if kind in projections else queries
        times = []
        for _ in range(args.rounds):
            began = time.process_time()
            found = [graph.search(query, int(asked)) for query in asked_with]
            times.append((time.process_time() - began) / len(queries) * 1000)
        share = statistics.mean(
            len(set(files.agents_by_best_row(f.keys)[0][:WANTED].tolist()) & e) / WANTED
            for f, e in zip(found, exact, strict=True)
        )
        print(f"{kind:6s} {asked:>10s} {statistics.median(times):14.2f} {share:24.3f}")


if __name__ == "__main__":
    main()
