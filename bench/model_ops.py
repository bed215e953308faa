"""Where the embedding model's time goes, and what the fused add & norm would cost.

    .venv/bin/python bench/model_ops.py --agents 200 --rounds 3
    .venv/bin/python bench/model_ops.py --agents 300 --rounds 3 --batches 1,8,32,128

Runs the shipped int8 graph through the model's own runner (``search/embedding/model.py``:
tokenising, each text alone, pooling; one thread, as the worker) over the texts of ``--agents``
synthetic agents (``bench/synth.py``, composed by ``search/embedding/texts.py`` as at ingest:
the whole text and one per skill). Prints the
texts/s of CPU and the ms of CPU per agent, alternating each round with the same graph whose
add & norm is fused back into ONNX Runtime's SkipLayerNormalization (the form shipped before
conversion 3), the cosine between the two forms' vectors, then an ONNX Runtime profile of the
shipped graph: each operator's share of the kernel time. ``--batches`` measures only the
shipped graph's rate in batches of texts of similar length, against each text alone.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import synth  # noqa: E402
from bench._common import setup_django  # noqa: E402


def agent_texts(count: int, seed: int) -> list[list[str]]:
    """The texts ingest embeds for ``count`` synthetic agents (``texts.texts_of``)."""
    from search.embedding.texts import texts_of

    out = []
    for index in range(count):
        card = synth.make_card(seed, index)
        skills = [s for s in card.get("skills", []) if isinstance(s, dict)]
        parts = [
            (s.get("name", ""), s.get("description", ""), s.get("examples"), s.get("tags"))
            for s in skills
        ]
        out.append(
            texts_of(
                name=card["name"],
                description=card.get("description", ""),
                ard_entry=None,
                skills=parts,
            )
        )
    return out


def fused(path: Path, target: Path) -> None:
    """The graph at ``path`` with each Add, Add, LayerNormalization chain written as one
    SkipLayerNormalization (input, skip, gamma, beta, bias), saved to ``target``."""
    import onnx
    from onnx import helper

    from search.embedding.graph import MS

    model = onnx.load(str(path))
    graph = model.graph
    producer = {out: node for node in graph.node for out in node.output}
    dropped: set[str] = set()
    nodes = []
    for node in graph.node:
        if node.op_type != "LayerNormalization":
            nodes.append(node)
            continue
        biased = producer.get(node.input[0])
        summed = producer.get(biased.input[0]) if biased is not None else None
        if biased is None or summed is None:
            nodes.append(node)
            continue
        eps = next(a.f for a in node.attribute if a.name == "epsilon")
        dropped.update({biased.name, summed.name})
        inputs = [*summed.input, node.input[1], node.input[2], biased.input[1]]
        nodes.append(
            helper.make_node(
                "SkipLayerNormalization",
                inputs,
                list(node.output),
                name=node.name,
                domain=MS,
                epsilon=eps,
            )
        )
    kept = [node for node in nodes if node.name not in dropped]
    del graph.node[:]
    graph.node.extend(kept)
    onnx.save(model, str(target))


def runner(path: Path, profile: bool = False, disabled: list[str] | None = None) -> Any:
    """The model's own runner (``model._OnnxRunner``: tokenising, each text alone, pooling)
    over the graph at ``path``, optionally profiled or with other fusions left on."""
    from search.embedding import model

    made = model._OnnxRunner(path)
    options = model.session_options()
    options.enable_profiling = profile
    made.session = model.new_session(path, options, disabled or [])
    return made


def run(embed: Any, texts: list[str]) -> tuple[np.ndarray, float]:
    started = time.process_time()
    vectors = embed(texts)
    return vectors, time.process_time() - started


def batched(session: Any, encodings: list[Any], size: int) -> float:
    """CPU seconds to run ``encodings`` through ``session`` ``size`` at a time, sorted by
    length (the least padding a batch can have); the states are not pooled."""
    order = sorted(range(len(encodings)), key=lambda i: len(encodings[i].ids))
    started = time.process_time()
    for start in range(0, len(order), size):
        chunk = [encodings[i].ids for i in order[start : start + size]]
        ids = np.zeros((len(chunk), max(map(len, chunk))), dtype=np.int64)
        mask = np.zeros_like(ids)
        for row, text_ids in enumerate(chunk):
            ids[row, : len(text_ids)] = text_ids
            mask[row, : len(text_ids)] = 1
        session.run(None, {"input_ids": ids, "attention_mask": mask})
    return time.process_time() - started


def batch_rates(path: Path, texts: list[str], sizes: list[int], rounds: int) -> None:
    """The shipped graph's texts/s of CPU in batches of each size (1: each text alone, as
    ingest runs it). Batches are what each text alone gave up (its activations' int8 scale
    would then depend on its neighbours); this says what they would buy."""
    made = runner(path)
    encodings = made.tokenizer.encode_batch(texts)
    batched(made.session, encodings[:50], 8)  # warm
    for round_ in range(rounds):
        rates = [
            f"{size}: {len(texts) / batched(made.session, encodings, size):.0f}" for size in sizes
        ]
        print(f"round {round_ + 1}, texts/s of CPU by batch size: " + ", ".join(rates))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agents", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--batches", help="Only this: texts/s in batches of these sizes (e.g. 1,8,32,128)."
    )
    args = parser.parse_args()
    setup_django("sqlite:///:memory:")
    from search.embedding import graph, model

    shipped = model._onnx_file()
    agents = agent_texts(args.agents, args.seed)
    texts = [text for agent in agents for text in agent]
    tokens = statistics.mean(len(e.ids) for e in model._tokenizer().encode_batch(texts))
    print(f"{len(texts)} texts of {len(agents)} agents, {tokens:.1f} tokens a text")
    if args.batches:
        batch_rates(shipped, texts, [int(n) for n in args.batches.split(",")], args.rounds)
        return
    with tempfile.TemporaryDirectory() as scratch:
        old = Path(scratch) / "fused.onnx"
        fused(shipped, old)
        forms = {
            "shipped (Add, Add, LayerNormalization)": runner(shipped, disabled=graph.UNFUSED),
            "fused (SkipLayerNormalization)": runner(old),
        }
        seen: dict[str, list[float]] = {name: [] for name in forms}
        vectors: dict[str, np.ndarray] = {}
        for embed in forms.values():
            run(embed, texts[:50])  # warm
        for _ in range(args.rounds):
            for name, embed in forms.items():
                vectors[name], cpu = run(embed, texts)
                seen[name].append(cpu)
    for name, cpus in seen.items():
        rates = ", ".join(f"{len(texts) / cpu:.0f}" for cpu in cpus)
        per_agent = statistics.median(cpus) * 1000 / len(agents)
        print(f"{name}: texts/s of CPU {rates}; median {per_agent:.1f} ms of CPU an agent")
    a, b = vectors.values()
    cosines = (a * b).sum(axis=1)
    print(f"cosine between the forms: mean {cosines.mean():.5f}, min {cosines.min():.5f}")

    profiled = runner(shipped, profile=True, disabled=graph.UNFUSED)
    run(profiled, texts)
    trace = profiled.session.end_profiling()
    events = json.loads(Path(trace).read_text())
    os.remove(trace)
    spent: Counter[str] = Counter()
    for event in events:
        if event.get("cat") == "Node" and event["name"].endswith("_kernel_time"):
            spent[event["args"]["op_name"]] += event["dur"]
    total = sum(spent.values())
    print(f"profile of the shipped graph: {total / len(texts):.0f} us of kernels a text")
    for op, us in spent.most_common():
        print(f"  {op:28} {100 * us / total:5.1f}%  {us / len(texts):7.0f} us a text")


if __name__ == "__main__":
    main()
