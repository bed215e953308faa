"""Quality of natural-language search: recall@5 and nDCG@5, lexical alone vs hybrid.

    .venv/bin/python bench/semantic_quality.py \
        --database-url postgres://postgres@127.0.0.1:5432/registry_sem_bench

Loads the corpus cards (read from /work/shared/corpus/cards, never copied) and the demo agents
(cards/demo/) into a dedicated database through the real ``card_ingest``, embeds them with the
real store, then asks every need of bench/queries/*.json:

- lexical: what ``q`` does without ``mode=semantic`` (PostgreSQL full-text, every word must
  match), ranked by ``ts_rank`` so it gets a fair top 5;
- lexical fallback: ``mode=semantic`` where the model is off (``REGISTRY_EMBEDDINGS=off``);
- hybrid: ``mode=semantic`` (cards.reads.semantic.rank), with the cutoff in force.

recall@5 counts the relevant agents in the top 5 over min(5, relevant); nDCG@5 uses binary gains.
The negative needs (no agent serves them) should return nothing: the share that does is shown.
``--sweep`` prints the same for a range of cutoffs.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import ensure_database, setup_django  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus" / "cards"
DEMO = ROOT / "cards" / "demo"
QUERIES = Path(__file__).resolve().parent / "queries"


def load_agents() -> dict[Any, str]:
    """Ingest the corpus and demo cards; returns agent id -> label (file stem, demo/<stem>)."""
    from django.core.management import call_command

    from cards.crawling import card_ingest
    from cards.models import Agent
    from registry.http import FetchResult

    call_command("migrate", verbosity=0)
    Agent.objects.all().delete()
    labels: dict[Any, str] = {}
    sources = [(p.stem, p) for p in sorted(CORPUS.glob("*.json"))]
    sources += [(f"demo/{p.stem}", p) for p in sorted(DEMO.glob("*.json"))]
    for label, path in sources:
        url = f"https://{label.replace('/', '-')}.quality.example/.well-known/agent-card.json"
        agent = Agent.objects.create(url=url, card_url=url)
        card_ingest(agent_id=agent.pk, result=FetchResult.local(url, path.read_bytes()))
        labels[agent.pk] = label
    return labels


def lexical_top(text: str, limit: int) -> list[Any]:
    from cards.reads import gate
    from cards.reads.search import text_filter

    agents = text_filter(gate.agents(include_gone=False), text)
    ranked = agents.extra(  # noqa: S610 - bound parameter
        select={"lex": "ts_rank(cards_agent.search_vector, websearch_to_tsquery('english', %s))"},
        select_params=[text],
        order_by=["-lex"],
    )
    return list(ranked.values_list("pk", flat=True)[:limit])


def metrics(found: list[str], relevant: set[str]) -> tuple[float, float]:
    top = found[:5]
    hits = [1.0 if label in relevant else 0.0 for label in top]
    recall = sum(hits) / min(5, len(relevant))
    dcg = sum(h / math.log2(i + 2) for i, h in enumerate(hits))
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(5, len(relevant))))
    return recall, dcg / ideal


def evaluate(queries: list[dict[str, Any]], negatives: list[str], ask: Any) -> dict[str, float]:
    recalls, ndcgs, empty_positive = [], [], 0
    for item in queries:
        found = ask(item["q"])
        recall, ndcg = metrics(found, set(item["relevant"]))
        recalls.append(recall)
        ndcgs.append(ndcg)
        empty_positive += not found
    empty_negative = sum(1 for text in negatives if not ask(text))
    return {
        "recall@5": sum(recalls) / len(recalls),
        "ndcg@5": sum(ndcgs) / len(ndcgs),
        "positive_empty": empty_positive,
        "negative_empty": empty_negative,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--database-url", default="postgres://postgres@127.0.0.1:5432/registry_sem_bench"
    )
    parser.add_argument("--sweep", action="store_true", help="Also sweep the cutoff.")
    parser.add_argument("--verbose", action="store_true", help="Show each need's top 5.")
    args = parser.parse_args()
    if not CORPUS.is_dir():
        raise SystemExit(f"{CORPUS} is absent: the corpus is only on the project's machines")
    ensure_database(args.database_url)
    setup_django(args.database_url)

    from django.conf import settings

    from cards.embedding import model, store, vectors
    from cards.reads import gate, semantic

    labels = load_agents()
    started = time.monotonic()
    written = store.reembed_all(force=True)
    print(f"{len(labels)} agents loaded, {written} embedded in {time.monotonic() - started:.1f} s")
    vectors.reset()

    queries: list[dict[str, Any]] = []
    negatives: list[str] = []
    for path in sorted(QUERIES.glob("*.json")):
        data = json.loads(path.read_text())
        queries += data["queries"]
        negatives += data.get("negative", [])
    print(f"{len(queries)} needs with answers, {len(negatives)} needs without\n")

    def hybrid(text: str) -> list[str]:
        agents = gate.agents(include_gone=False)
        return [labels[pk] for pk, _ in semantic.rank(text, agents, limit=5)]

    def lexical(text: str) -> list[str]:
        return [labels[pk] for pk in lexical_top(text, 5)]

    rows = [("lexical (full-text, every word)", evaluate(queries, negatives, lexical))]
    settings.REGISTRY_EMBEDDINGS = "off"
    model.reset()
    rows.append(("lexical fallback (model off)", evaluate(queries, negatives, hybrid)))
    settings.REGISTRY_EMBEDDINGS = "auto"
    model.reset()
    rows.append((f"hybrid ({model.model_id()})", evaluate(queries, negatives, hybrid)))

    cutoff = settings.REGISTRY_SEMANTIC_CUTOFF
    print(f"cutoff {cutoff}")
    print(f"{'ranking':44} {'recall@5':>9} {'nDCG@5':>7} {'answered':>9} {'neg. empty':>11}")
    for name, row in rows:
        answered = len(queries) - row["positive_empty"]
        print(
            f"{name:44} {row['recall@5']:9.3f} {row['ndcg@5']:7.3f} "
            f"{answered:>4}/{len(queries):<4} {row['negative_empty']:>5}/{len(negatives)}"
        )
    if args.verbose:
        for item in queries + [{"q": text, "relevant": []} for text in negatives]:
            found = semantic.rank(item["q"], gate.agents(include_gone=False), limit=5)
            shown = ", ".join(
                f"{labels[pk]}{'*' if labels[pk] in item['relevant'] else ''} {score}"
                for pk, score in found
            )
            print(f"- {item['q']}: {shown or '(nothing)'}")
    if args.sweep:
        print("\ncutoff sweep (hybrid)")
        for value in range(20, 75, 5):
            settings.REGISTRY_SEMANTIC_CUTOFF = value
            row = evaluate(queries, negatives, hybrid)
            print(
                f"  cutoff {value:3}: recall@5 {row['recall@5']:.3f} nDCG@5 {row['ndcg@5']:.3f} "
                f"answered {len(queries) - row['positive_empty']}/{len(queries)} "
                f"negatives empty {row['negative_empty']}/{len(negatives)}"
            )


if __name__ == "__main__":
    main()
