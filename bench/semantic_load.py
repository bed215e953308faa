"""Speed of natural-language search at 100,000 agents: embedding at ingest, query embedding,
search latency (one client), the index snapshot.

    .venv/bin/python bench/seed.py -n 100000 --recreate \
        --database-url postgres://postgres@127.0.0.1:5432/registry_sem_bench_100k
    .venv/bin/python bench/semantic_load.py \
        --database-url postgres://postgres@127.0.0.1:5432/registry_sem_bench_100k

1. Ingest: every agent without an embedding is embedded by ``--processes`` worker processes
   (1 model thread each), each calling the worker's own ``search.embedding.store.embed_agents``
   on batches of ``--ingest-batch`` ids (64, as the ``cards.embed_pending`` drain does; 1 is one
   crawl's ``cards.embed_agents`` task). Reported: agents/s over the wall time and the CPU per
   agent of the embedding processes, model loading excluded (``--ingest-sample N`` re-embeds
   N agents instead; ``--ingest-only`` stops there).
2. The snapshot the worker writes (``save_snapshot``), and a web process opening it.
3. Query embedding: distinct needs, cache cold, one at a time.
4. Search: ``search.semantic.rank`` over every public agent (page of 20), one client; with
   the need's embedding not cached (the usual case) and cached; then the HTTP path
   (``GET /api/v1/agents?mode=semantic``) through Django's test client.
``--profile`` prints where a search spends its time.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import synth  # noqa: E402
from bench._common import PhaseTimer, percentile, setup_django  # noqa: E402

TEMPLATES = (
    "I need something that can {verb} my {noun} for {tag}",
    "help me {verb} {tag} {noun}s",
    "which agent can {verb} a {noun} about {tag}",
    "{tag} {noun} {verb}",
    "looking for a {adjective} {tag} helper to {verb} {noun}s",
)


def _base(verb: str) -> str:
    if verb.endswith("ies"):
        return verb[:-3] + "y"
    return verb[:-1] if verb.endswith("s") else verb


def needs(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    out: set[str] = set()
    while len(out) < count:
        out.add(
            rng.choice(TEMPLATES).format(
                verb=_base(rng.choice(synth.VERBS)),
                noun=rng.choice(synth.NOUNS),
                tag=rng.choice(synth.TAGS).replace("-", " "),
                adjective=rng.choice(synth.ADJECTIVES),
            )
        )
    return sorted(out)


def _embed_worker(args: tuple[str, list[str], Any, bool, int]) -> tuple[int, float, float]:
    database_url, ids, barrier, force, batch = args
    setup_django(database_url, REGISTRY_EMBEDDING_THREADS="1")
    from search.embedding import model, store

    model.embed(["warm up"])  # the model is loaded before the clock starts
    barrier.wait()
    started = time.monotonic()
    cpu = time.process_time()
    written = 0
    for start in range(0, len(ids), batch):
        written += store.embed_agents(ids[start : start + batch], force=force)
    return written, time.monotonic() - started, time.process_time() - cpu


def phases(agents: Any, count: int = 200, passes: int = 3) -> None:
    """CPU per search (``time.process_time``) spent in each phase of ``semantic.rank``, the
    needs' vectors cached first: the HNSW search, scoring the candidates' rows, the lexical
    query and the matched skills' names; ``passes`` times over the same needs, in a process
    that has had its snapshot open for longer than the look-back window."""
    from search import semantic
    from search.embedding import model
    from search.index import snapshot, vectors

    texts = needs(count, seed=5)
    for text in texts:
        model.embed_query(text)
    semantic.rank("warm up", agents, limit=20)
    # A snapshot written soon after a bulk write (bench/borrow_vectors.py, a reembed) has its
    # floor far behind its last row: until WINDOW_SECONDS after opening it, each refresh (once
    # a second) reads the seq of every row after that floor, 100,000 at 100,000 agents (about
    # 0.3-0.9 ms a search in a loop like this one). A process that has served that long no
    # longer does: wait for it, as a running web process has.
    time.sleep(snapshot.WINDOW_SECONDS + 1)
    semantic.rank("warm up", agents, limit=20)
    for turn in range(passes):
        timer = PhaseTimer(time.process_time)
        for owner, name in (
            (vectors.VectorIndex, "candidates"),
            (vectors.VectorIndex, "scores"),
            (semantic, "word_shares"),
            (semantic, "_named"),
        ):
            timer.wrap(owner, name, name)
        began = time.process_time()
        for text in texts:
            semantic.rank(text, agents, limit=20)
        whole = (time.process_time() - began) / len(texts) * 1000
        timer.restore()
        spent = timer.totals
        shares = ", ".join(f"{name} {spent[name] / len(texts) * 1000:.2f}" for name in spent)
        print(
            f"CPU per search, pass {turn + 1}: {whole:.2f} ms in all; {shares} ms "
            f"({len(texts)} needs, cached)"
        )


def ingest(database_url: str, processes: int, sample: int, batch: int = 64) -> None:
    from cards.models import Agent

    if sample:
        ids = [str(pk) for pk in Agent.objects.order_by("pk").values_list("pk", flat=True)[:sample]]
        force = True
    else:
        ids = [
            str(pk)
            for pk in Agent.objects.filter(embedding__isnull=True).values_list("pk", flat=True)
        ]
        force = False
    if not ids:
        print("ingest: every agent has an embedding already (use --ingest-sample N to measure)")
        return
    parts = [ids[i::processes] for i in range(processes)]
    load = os.getloadavg()[0]
    context = multiprocessing.get_context("spawn")
    with context.Manager() as manager:
        barrier = manager.Barrier(processes + 1)
        with context.Pool(processes) as pool:
            pending = pool.map_async(
                _embed_worker, [(database_url, part, barrier, force, batch) for part in parts]
            )
            barrier.wait()
            started = time.monotonic()
            results = pending.get()
            wall = time.monotonic() - started
    written = sum(n for n, _, _ in results)
    cpu = sum(c for _, _, c in results)
    print(
        f"ingest ({batch} agents per call): {written} agents embedded by {processes} processes "
        f"in {wall:.1f} s: "
        f"{written / wall:.0f} agents/s; {cpu / written * 1000:.1f} ms of CPU per agent in "
        f"the embedding processes ({written / cpu * processes:.0f} agents/s if each had a "
        f"core of its own); load average before {load:.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--database-url", default="postgres://postgres@127.0.0.1:5432/registry_sem_bench_100k"
    )
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--ingest-sample", type=int, default=0)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument(
        "--phases", action="store_true", help="CPU per search in each phase of semantic.rank"
    )
    parser.add_argument(
        "--ingest-batch",
        type=int,
        default=64,
        help="agents per embed_agents call: 64 as cards.embed_pending drains, 1 as one crawl's "
        "cards.embed_agents task",
    )
    parser.add_argument(
        "--ingest-only", action="store_true", help="measure the ingest part only, then stop"
    )
    args = parser.parse_args()
    setup_django(args.database_url)

    from django.test import Client

    from cards.models import Agent
    from cards.reads import gate
    from search import semantic
    from search.embedding import model
    from search.index import vectors, writing
    from search.models import AgentEmbedding

    print(f"{Agent.objects.count()} agents, {AgentEmbedding.objects.count()} embeddings")
    ingest(args.database_url, args.processes, args.ingest_sample, args.ingest_batch)
    if args.ingest_only:
        return

    started = time.monotonic()
    size = writing.save_snapshot(threads=args.processes)
    print(f"snapshot: {size} agents written in {time.monotonic() - started:.1f} s")
    vectors.reset()
    started = time.monotonic()
    vectors.index().refresh(force=True)
    print(f"a web process opens it (memory-mapped) in {time.monotonic() - started:.2f} s")

    model.embed(["warm up"])
    timings = []
    for text in needs(args.queries, seed=1):
        began = time.perf_counter()
        model.embed_query(text)
        timings.append((time.perf_counter() - began) * 1000)
    print(
        f"query embedding: p50 {percentile(timings, 50):.1f} ms, "
        f"p99 {percentile(timings, 99):.1f} ms ({len(timings)} needs)"
    )

    agents = gate.agents(include_gone=False)
    # A web process that has served a while: its pages of the snapshot and PostgreSQL's
    # buffers are warm (the first searches after a start are slower: see docs/search.md).
    cold = []
    for text in needs(100, seed=9):
        began = time.perf_counter()
        semantic.rank(text, agents, limit=20)
        cold.append((time.perf_counter() - began) * 1000)
    print(
        f"first 100 searches of a fresh process: p50 {percentile(cold, 50):.1f} ms, "
        f"max {max(cold):.0f} ms"
    )
    for label, texts in (
        ("search (need not cached)", needs(args.queries, seed=2)),
        ("search (need cached)", needs(args.queries, seed=2)),
    ):
        timings, empty = [], 0
        for text in texts:
            began = time.perf_counter()
            found = semantic.rank(text, agents, limit=20)
            timings.append((time.perf_counter() - began) * 1000)
            empty += not found
        print(
            f"{label}: p50 {percentile(timings, 50):.1f} ms, p99 {percentile(timings, 99):.1f} ms"
            f" ({len(texts)} needs, {empty} with nothing above the cutoff)"
        )

    client = Client(HTTP_HOST="localhost")  # an allowed host (testserver is not)
    timings = []
    for text in needs(args.queries, seed=3):
        began = time.perf_counter()
        response = client.get("/api/v1/agents", {"q": text, "mode": "semantic"})
        timings.append((time.perf_counter() - began) * 1000)
        assert response.status_code == 200, response.content[:300]
    print(
        f"GET /api/v1/agents?mode=semantic: p50 {percentile(timings, 50):.1f} ms, "
        f"p99 {percentile(timings, 99):.1f} ms"
    )

    if args.phases:
        phases(agents)
    if args.profile:
        import cProfile
        import pstats

        profiler = cProfile.Profile()
        profiler.enable()
        for text in needs(100, seed=4):
            semantic.rank(text, agents, limit=20)
        profiler.disable()
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(18)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
