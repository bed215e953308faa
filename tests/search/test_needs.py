"""The strict needs set (bench/queries/strict.json) keeps its rule (docs/search.md, "Quality").

No need shares more than one stemmed content word with any card that serves it; near-miss
negatives share words with some card but no card serves them; the tuning and held-out halves
are both present for every kind.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from bench.queries import rule
from tests.support import CORPUS

NEEDS = Path(__file__).resolve().parents[2] / "bench" / "queries" / "strict.json"


def _needs() -> dict[str, Any]:
    return json.loads(NEEDS.read_text())


def _cards() -> dict[str, dict[str, Any]]:
    if not CORPUS.is_dir():
        pytest.skip("the corpus is only on the project's machines")
    cards: dict[str, dict[str, Any]] = {}
    for path in sorted(CORPUS.glob("*.json")):
        try:
            card = json.loads(path.read_text())
        except ValueError:
            continue
        if isinstance(card, dict):
            cards[path.stem] = card
    return cards


def test_the_stemmer() -> None:
    assert rule.stem("translation") == rule.stem("translates") == rule.stem("translate")
    assert rule.stem("planned") == rule.stem("plans") == "plan"
    assert rule.stem("recipes") == rule.stem("recipe")
    assert rule.stems("What is the weather in the city?") == {"weath", "city"}
    assert rule.shared("will it rain", {"name": "Rain radar", "skills": [{"tags": ["rain"]}]}) == {
        "rain"
    }


def test_no_need_shares_more_than_one_word_with_a_card_that_serves_it() -> None:
    cards = _cards()
    broken = []
    for item in _needs()["queries"]:
        assert item["relevant"], item["q"]
        for stem, grade in item["relevant"].items():
            assert grade in (1, 2) and stem in cards, (item["q"], stem)
            shared = rule.shared(item["q"], cards[stem])
            if len(shared) > 1:
                broken.append((item["q"], stem, sorted(shared)))
    assert broken == []


def test_near_miss_negatives_share_words_with_some_card() -> None:
    cards = _cards()
    negatives = _needs()["negative"]
    assert len(negatives) >= 10
    for item in negatives:
        assert any(rule.shared(item["q"], card) for card in cards.values()), item["q"]


def test_both_halves_of_every_kind() -> None:
    data = _needs()
    kinds = Counter((item["kind"], item["split"]) for item in data["queries"])
    for kind in ("words", "shape"):
        assert kinds[(kind, "tuning")] >= 3 and kinds[(kind, "heldout")] >= 3, kinds
    assert {item["split"] for item in data["negative"]} == {"tuning", "heldout"}
    texts = [item["q"] for item in data["queries"]] + [item["q"] for item in data["negative"]]
    assert len(texts) == len(set(texts))
