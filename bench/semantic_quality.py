"""Quality of natural-language search: recall@5 and nDCG@5, per set, kind and split.

    .venv/bin/python bench/semantic_quality.py \
        --database-url postgres://postgres@127.0.0.1:5432/registry_sem_bench

Loads the corpus cards (read from ../shared/corpus/cards beside the repository, never copied) and
the demo agents (cards/demo/) into a dedicated database through the real ``card_ingest``, embeds
them with the real store, then asks every need of bench/queries/*.json through
``search.semantic.rank`` (with the ARD filters of shape needs applied first, as ``POST
/ard/search`` does):

- ``agents.json``: binary judgements over corpus and demo agents;
- ``strict.json``: needs built by the strict rule (bench/queries/rule.py), graded 0/1/2 over the
  corpus cards only, in words or as shapes (a filter plus a few words), split into a tuning half
  and a held-out half (never used to choose parameters), and near-miss negatives.

recall@5: the share of the best-graded agents (grade 2, or all relevant for binary sets) in the
top 5, over min(5, their number); nDCG@5 with gains 2^grade - 1. Negatives: the share with no
``confident`` result (and with nothing at all). ``--tune`` sweeps the ranking constants on the
tuning needs only (and agents.json), never on held-out.

``--more-references FILE`` (repeatable) adds each non-empty line of FILE to the hubness
references (``search.embedding.hubs.REFERENCES``) for the run, with ``--hub-top`` as their TOP and
the corpus cards' mean hubness under them as ``HUB_CENTER`` (as the committed centre was
chosen): bench/references/ holds the two sets tried on 2026-11-28 (docs/search.md, "More hubness
references").
"""

from __future__ import annotations

import argparse
import json
import math
import random
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


def open_database(url: str) -> None:
    """Django on the quality database ``url`` (made when missing); the corpus must be here."""
    if not CORPUS.is_dir():
        raise SystemExit(f"{CORPUS} is absent: the corpus is only on the project's machines")
    ensure_database(url)
    setup_django(url)


def agent_labels(skip_load: bool) -> dict[Any, str]:
    """Agent id -> label of the agents loaded before (``skip_load``), or of those loaded now."""
    if not skip_load:
        return load_agents()
    from cards.models import Agent

    return {
        pk: url.split("//")[1].split(".quality")[0].replace("demo-", "demo/", 1)
        for pk, url in Agent.objects.values_list("pk", "card_url")
    }


def lexical_top(text: str, limit: int) -> list[Any]:
    from cards.reads import gate
    from search.filters import text_filter

    agents = text_filter(gate.agents(include_gone=False), text)
    ranked = agents.extra(  # noqa: S610 - bound parameter
        select={"lex": "ts_rank(cards_agent.search_vector, websearch_to_tsquery('english', %s))"},
        select_params=[text],
        order_by=["-lex"],
    )
    return list(ranked.values_list("pk", flat=True)[:limit])


def metrics(found: list[str], relevant: dict[str, int]) -> tuple[float, float]:
    top = found[:5]
    best = max(relevant.values())
    wanted = [label for label, grade in relevant.items() if grade == best]
    recall = sum(1 for label in top if relevant.get(label) == best) / min(5, len(wanted))
    dcg = sum((2 ** relevant.get(label, 0) - 1) / math.log2(i + 2) for i, label in enumerate(top))
    ideal = sorted(relevant.values(), reverse=True)[:5]
    idcg = sum((2**grade - 1) / math.log2(i + 2) for i, grade in enumerate(ideal))
    return recall, dcg / idcg


def load_sets() -> list[dict[str, Any]]:
    """Every needs file of bench/queries as (name, needs, negatives), needs normalised."""
    sets = []
    for path in sorted(QUERIES.glob("*.json")):
        data = json.loads(path.read_text())
        needs = []
        for item in data["queries"]:
            relevant = item["relevant"]
            if isinstance(relevant, list):
                relevant = {label: 1 for label in relevant}
            needs.append(
                {
                    "q": item["q"],
                    "kind": item.get("kind", "words"),
                    "split": item.get("split", "all"),
                    "filter": item.get("filter"),
                    "relevant": relevant,
                }
            )
        negatives = [
            n if isinstance(n, dict) else {"q": n, "split": "all"} for n in data.get("negative", [])
        ]
        for n in negatives:
            n.setdefault("split", "all")
        sets.append(
            {
                "name": path.stem,
                "corpus_only": bool(data.get("corpus_only")),
                "needs": needs,
                "negatives": negatives,
            }
        )
    return sets


def evaluate(
    needs: list[dict[str, Any]], negatives: list[dict[str, Any]], ask: Any
) -> dict[str, Any]:
    recalls, ndcgs, confident_hits = [], [], 0
    for item in needs:
        found = ask(item["q"], item.get("filter"))
        recall, ndcg = metrics([label for label, _ in found], item["relevant"])
        recalls.append(recall)
        ndcgs.append(ndcg)
        confident_hits += bool(found and found[0][1] and item["relevant"].get(found[0][0]))
    silent = empty = 0
    for item in negatives:
        found = ask(item["q"], None)
        silent += not any(confident for _, confident in found)
        empty += not found
    return {
        "n": len(needs),
        "recall@5": sum(recalls) / len(recalls) if recalls else float("nan"),
        "ndcg@5": sum(ndcgs) / len(ndcgs) if ndcgs else float("nan"),
        "confident_right": confident_hits,
        "neg": len(negatives),
        "neg_silent": silent,
        "neg_empty": empty,
    }


def report(
    title: str,
    sets: list[dict[str, Any]],
    ask_for: Any,
    splits: list[str],
    orders: list[Any] | None = None,
) -> None:
    """Print one table; with ``orders`` (callables that embed every agent again, each in
    another order), every number is the mean over them. Each text is embedded alone, so every
    order should give the same figures: whole counts in the means show it."""
    print(f"\n{title}")
    print(
        f"  {'set / kind / split':34} {'n':>3} {'recall@5':>9} {'nDCG@5':>7} "
        f"{'conf. top1':>10} {'negatives not confident':>24}"
    )
    runs = orders or [None]
    table: dict[str, list[dict[str, Any]]] = {}
    for embed in runs:
        if embed is not None:
            embed()
        for data in sets:
            ask = ask_for(data)
            kinds = sorted({n["kind"] for n in data["needs"]})
            for split in splits:
                for kind in kinds:
                    needs = [
                        n
                        for n in data["needs"]
                        if n["kind"] == kind and (split == "all" or n["split"] in (split, "all"))
                    ]
                    negs = (
                        [
                            n
                            for n in data["negatives"]
                            if split == "all" or n["split"] in (split, "all")
                        ]
                        if kind == "words"
                        else []
                    )
                    if needs:
                        key = data["name"] + " / " + kind + " / " + split
                        table.setdefault(key, []).append(evaluate(needs, negs, ask))
    for key, rows in table.items():
        mean = {k: sum(r[k] for r in rows) / len(rows) for k in rows[0]}
        count = "{:.0f}" if len(rows) == 1 else "{:.1f}"
        neg = (
            f"{count.format(mean['neg_silent'])}/{mean['neg']:.0f} "
            f"(empty {count.format(mean['neg_empty'])})"
            if mean["neg"]
            else ""
        )
        right = f"{count.format(mean['confident_right'])}/{mean['n']:.0f}"
        print(
            f"  {key:34} {mean['n']:>3.0f} {mean['recall@5']:9.3f} {mean['ndcg@5']:7.3f} "
            f"{right:>10} {neg:>24}"
        )


def more_references(files: list[Path], top: int, corpus: list[Any]) -> None:
    """Hubness measured against more references (each line of ``files``) and the mean of the
    best ``top``, centred on the corpus cards' mean hubness under them, for this run."""
    import numpy as np

    from search import semantic
    from search.embedding import hubs
    from search.embedding.store import stored_rows
    from search.index import vectors
    from search.models import AgentEmbedding

    known = {text.lower() for text in hubs.REFERENCES}
    for path in files:
        for text in (line.strip() for line in path.read_text().splitlines()):
            if text and text.lower() not in known:
                known.add(text.lower())
                hubs.REFERENCES = (*hubs.REFERENCES, text)
    hubs.TOP = top or hubs.TOP
    hubs._matrix.clear()
    vectors.reset()
    refs = hubs.references()
    rows = AgentEmbedding.objects.filter(agent_id__in=corpus).values_list("vector", flat=True)
    semantic.HUB_CENTER = float(np.mean([hubs.hubness(stored_rows(raw), refs) for raw in rows]))
    print(
        f"hubness references: {len(hubs.REFERENCES)}, TOP {hubs.TOP}, "
        f"HUB_CENTER {semantic.HUB_CENTER:.3f} (the corpus cards' mean)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--database-url", default="postgres://postgres@127.0.0.1:5432/registry_sem_bench"
    )
    parser.add_argument("--tune", action="store_true", help="Sweep constants on tuning needs.")
    parser.add_argument("--verbose", action="store_true", help="Show each need's top 5.")
    parser.add_argument("--skip-load", action="store_true", help="Reuse the loaded agents.")
    parser.add_argument(
        "--orders",
        type=int,
        default=1,
        help="Embed every agent again in this many shuffled orders and report the means.",
    )
    parser.add_argument(
        "--more-references",
        action="append",
        default=[],
        type=Path,
        help="a file of everyday needs, one a line, added to the hubness references",
    )
    parser.add_argument("--hub-top", type=int, default=0, help="hubs.TOP with them (0: as is)")
    args = parser.parse_args()
    open_database(args.database_url)

    from django.conf import settings

    from cards.reads import gate
    from protocols.ard import filters
    from search import semantic
    from search.embedding import model, store
    from search.index import vectors

    labels = agent_labels(args.skip_load)
    started = time.monotonic()
    written = store.reembed_all(force=not args.skip_load)
    print(f"{len(labels)} agents loaded, {written} embedded in {time.monotonic() - started:.1f} s")
    vectors.reset()
    sets = load_sets()
    demo = [pk for pk, label in labels.items() if label.startswith("demo/")]
    if args.more_references or args.hub_top:
        more_references(args.more_references, args.hub_top, [pk for pk in labels if pk not in demo])

    def asker(data: dict[str, Any]) -> Any:
        def ask(text: str, terms: Any) -> list[tuple[str, bool]]:
            agents = gate.agents(include_gone=False)
            if data["corpus_only"]:
                agents = agents.exclude(pk__in=demo)
            if terms:
                agents = filters.apply(agents, filters.check(terms))
            found = semantic.rank(text, agents, limit=5)
            return [(labels[m[0]], m.confident) for m in found]

        return ask

    splits = ["tuning"] if args.tune else ["tuning", "heldout", "all"]  # tuning: no peeking
    settings.REGISTRY_EMBEDDINGS = "off"
    model.reset()
    report("lexical fallback (model off)", sets, asker, splits)
    settings.REGISTRY_EMBEDDINGS = "auto"
    model.reset()

    def in_order(seed: int) -> Any:
        def embed() -> None:
            ids = sorted(labels, key=str)
            random.Random(seed).shuffle(ids)
            store.embed_agents(ids, force=True)
            vectors.reset()

        return embed

    orders = [in_order(seed) for seed in range(args.orders)] if args.orders > 1 else None
    title = f"hybrid ({model.model_id()})"
    if orders:
        title += f", means over {len(orders)} embedding orders"
    report(title, sets, asker, splits, orders)
    if args.verbose:
        for data in sets:
            ask = asker(data)
            for item in data["needs"] + [dict(n, relevant={}) for n in data["negatives"]]:
                if args.tune and item["split"] not in ("tuning", "all"):
                    continue  # --tune never shows a held-out need
                agents = gate.agents(include_gone=False)
                if data["corpus_only"]:
                    agents = agents.exclude(pk__in=demo)
                if item.get("filter"):
                    agents = filters.apply(agents, filters.check(item["filter"]))
                found = semantic.rank(item["q"], agents, limit=5)
                shown = ", ".join(
                    f"{labels[m[0]]}{'*' * item['relevant'].get(labels[m[0]], 0)} {m[1]}"
                    f"{'' if m.confident else '?'} [{m.matched_skill}]"
                    for m in found
                )
                print(f"- [{item.get('split')}] {item['q']}: {shown or '(nothing)'}")
            del ask
    if args.tune:
        print("\ntuning sweep (tuning needs and agents.json only)")
        chosen = (semantic.LEX_WEIGHT, semantic.HUB_WEIGHT, semantic.MID)
        for lex in (0.0, 0.1, 0.2, 0.3):
            semantic.LEX_WEIGHT = lex
            report(f"LEX_WEIGHT {lex}", sets, asker, ["tuning"], orders)
        semantic.LEX_WEIGHT = chosen[0]
        for hub in (0.0, 0.2, 0.3, 0.5, 0.7):
            semantic.HUB_WEIGHT = hub
            report(f"HUB_WEIGHT {hub}", sets, asker, ["tuning"], orders)
        semantic.HUB_WEIGHT = chosen[1]
        rows = semantic.ROW_HUB_WEIGHT
        for row in (0.0, 0.2, 0.3, 0.5):
            semantic.ROW_HUB_WEIGHT = row
            report(f"ROW_HUB_WEIGHT {row}", sets, asker, ["tuning"], orders)
        semantic.ROW_HUB_WEIGHT = rows
        for mid in (0.31, 0.33, 0.35, 0.37):
            semantic.MID = mid
            report(f"MID {mid}", sets, asker, ["tuning"], orders)
        semantic.MID = chosen[2]


if __name__ == "__main__":
    main()
