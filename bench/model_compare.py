"""Which sentence-embedding model ranks the quality sets better, before any of our ranking.

    .venv/bin/python bench/model_compare.py --model DIR [--model DIR ...] \
        --database-url postgres://postgres@127.0.0.1:5432/registry_q_models

Each model (the packaged all-MiniLM-L6-v2, then each ``--model``, a sentence-transformers
directory) embeds the same texts the registry embeds for each agent
(``search.embedding.texts``: the whole text, then one per skill) and each need; an agent's
similarity is the best of its rows (max pooling), nothing else: no hubness, no lexical share,
no floor. That isolates the model from the ranking built around it
(``bench/semantic_quality.py`` measures the whole of it). Needs in words only, recall@5 and
nDCG@5 as ``semantic_quality`` computes them.

``--centre 0.5,1`` also ranks with every row and need moved away from the mean of the rows
(``v - w * mean``, normalised again), a common cure for embeddings that all lean one way.

Only the tuning needs are read unless ``--splits`` says otherwise: a model is a constant like
any other, chosen on the tuning needs (docs/search.md, "Quality").

Needs sentence-transformers and PyTorch (`make install-torch`: requirements-torch.txt) and the
corpus beside the repository. The agents are loaded through the real ingest, as
``semantic_quality`` does (``--skip-load`` reuses them).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.semantic_quality import agent_labels, load_sets, metrics, open_database  # noqa: E402


def _best_rows(similarity: np.ndarray, owner: np.ndarray, agents: int) -> np.ndarray:
    """Per need, each agent's best row (needs x agents)."""
    best = np.full((similarity.shape[0], agents), -np.inf)
    for row in range(similarity.shape[0]):
        np.maximum.at(best[row], owner, similarity[row])
    return best


def compare(
    directory: str,
    max_tokens: int,
    labels: dict[Any, str],
    rows: dict[Any, list[str]],
    splits: list[str],
    whole_only: bool,
    centre: list[float],
) -> None:
    from sentence_transformers import SentenceTransformer

    encoder = SentenceTransformer(directory, device="cpu")
    encoder.max_seq_length = max_tokens
    ids = sorted(labels, key=str)
    texts, owner = [], []
    for position, pk in enumerate(ids):
        for text in rows.get(pk, [""])[: 1 if whole_only else None]:
            texts.append(text or " ")
            owner.append(position)
    started = time.process_time()
    vectors = encoder.encode(texts, normalize_embeddings=True, batch_size=32)
    spent = time.process_time() - started
    name = "/".join(Path(directory).parts[-2:]) + (" (whole text only)" if whole_only else "")
    print(f"\n{name}, {max_tokens} tokens: {len(texts)} texts, {spent:.1f} s of CPU (PyTorch)")
    mean = vectors.mean(axis=0)
    for weight in [0.0, *centre]:
        if weight:
            print(f"  rows and needs centred: less {weight} x the rows' mean, normalised again")
        shift = weight * mean
        _report(encoder, _moved(vectors, shift), owner, ids, labels, splits, shift)


def _moved(vectors: np.ndarray, shift: np.ndarray) -> np.ndarray:
    moved = vectors - shift
    return moved / np.linalg.norm(moved, axis=-1, keepdims=True)


def _report(
    encoder: Any,
    vectors: np.ndarray,
    owner: list[int],
    ids: list[Any],
    labels: dict[Any, str],
    splits: list[str],
    shift: np.ndarray,
) -> None:
    for data in load_sets():
        corpus_only = data["corpus_only"]
        allowed = np.array(
            [not (corpus_only and labels[pk].startswith("demo/")) for pk in ids], dtype=bool
        )
        for split in splits:
            needs = [
                n
                for n in data["needs"]
                if n["kind"] == "words" and (split == "all" or n["split"] in (split, "all"))
            ]
            if not needs:
                continue
            asked = encoder.encode([n["q"] for n in needs], normalize_embeddings=True)
            asked = _moved(asked, shift)
            best = _best_rows(asked @ vectors.T, np.asarray(owner), len(ids))
            best[:, ~allowed] = -np.inf
            recalls, ndcgs = [], []
            for row, need in enumerate(needs):
                top = [labels[ids[i]] for i in np.argsort(-best[row], kind="stable")[:5]]
                recall, ndcg = metrics(top, need["relevant"])
                recalls.append(recall)
                ndcgs.append(ndcg)
            print(
                f"  {data['name']:8} {split:8} n={len(needs):3d}  recall@5 {np.mean(recalls):.3f}"
                f"  nDCG@5 {np.mean(ndcgs):.3f}"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--database-url", default="postgres://postgres@127.0.0.1:5432/registry_q_models"
    )
    parser.add_argument(
        "--model", action="append", help="A sentence-transformers directory, besides MiniLM."
    )
    parser.add_argument("--max-tokens", type=int, default=80)
    parser.add_argument("--splits", default="tuning", help="Comma-separated: tuning,heldout,all")
    parser.add_argument("--whole-only", action="store_true", help="Only the whole text's row.")
    parser.add_argument("--skip-load", action="store_true", help="Reuse the loaded agents.")
    parser.add_argument(
        "--centre", default="", help="Also with rows and needs centred: weights, e.g. 0.5,1"
    )
    args = parser.parse_args()
    open_database(args.database_url)

    from search.embedding import model, texts

    labels = agent_labels(args.skip_load)
    rows = texts.agent_texts(list(labels))
    for directory in [str(model._package_dir()), *(args.model or [])]:
        compare(
            directory,
            args.max_tokens,
            labels,
            rows,
            args.splits.split(","),
            args.whole_only,
            [float(w) for w in args.centre.split(",") if w],
        )


if __name__ == "__main__":
    main()
