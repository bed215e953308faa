"""The strict needs sets (bench/queries/strict*.json) keep their rule (docs/search.md, "Quality").

No need shares more than one stemmed content word with any card graded for it; near-miss
negatives share words with some card but no card serves them. strict.json keeps a tuning and a
held-out half of every kind; strict2.json, written later because the first tuning half was
saturated, is a tuning set only; strict3.json is a held-out set only, written blind after the
ranking constants were chosen.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from bench.queries import rule
from tests.support import CORPUS

QUERIES = Path(__file__).resolve().parents[2] / "bench" / "queries"
SETS = sorted(QUERIES.glob("strict*.json"))


def _needs(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())


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


each_set = pytest.mark.parametrize("path", SETS, ids=[path.stem for path in SETS])


def test_both_strict_sets_are_there() -> None:
    assert [path.name for path in SETS][:2] == ["strict.json", "strict2.json"]


def test_the_stemmer() -> None:
    assert rule.stem("translation") == rule.stem("translates") == rule.stem("translate")
    assert rule.stem("planned") == rule.stem("plans") == "plan"
    assert rule.stem("recipes") == rule.stem("recipe")
    assert rule.stems("What is the weather in the city?") == {"weath", "city"}
    assert rule.shared("will it rain", {"name": "Rain radar", "skills": [{"tags": ["rain"]}]}) == {
        "rain"
    }


@each_set
def test_no_need_shares_more_than_one_word_with_a_card_that_serves_it(path: Path) -> None:
    cards = _cards()
    broken = []
    for item in _needs(path)["queries"]:
        assert item["relevant"], item["q"]
        assert 2 in item["relevant"].values(), item["q"]  # some card serves it
        for stem, grade in item["relevant"].items():
            assert grade in (1, 2) and stem in cards, (item["q"], stem)
            shared = rule.shared(item["q"], cards[stem])
            if len(shared) > 1:
                broken.append((item["q"], stem, sorted(shared)))
    assert broken == []


@each_set
def test_near_miss_negatives_share_words_with_some_card(path: Path) -> None:
    cards = _cards()
    negatives = _needs(path)["negative"]
    assert len(negatives) >= 10
    for item in negatives:
        assert any(rule.shared(item["q"], card) for card in cards.values()), item["q"]


@each_set
def test_every_need_is_said_once(path: Path) -> None:
    data = _needs(path)
    texts = [item["q"] for item in data["queries"]] + [item["q"] for item in data["negative"]]
    assert len(texts) == len(set(texts))


def test_the_sets_share_no_need() -> None:
    seen: dict[str, str] = {}
    for path in [*SETS, QUERIES / "agents.json"]:
        data = _needs(path)
        for item in data["queries"] + data.get("negative", []):
            text = (item if isinstance(item, str) else item["q"]).strip().lower()
            assert text not in seen, (text, seen.get(text), path.name)
            seen[text] = path.name


def test_strict_keeps_both_halves_of_every_kind() -> None:
    data = _needs(QUERIES / "strict.json")
    kinds = Counter((item["kind"], item["split"]) for item in data["queries"])
    for kind in ("words", "shape"):
        assert kinds[(kind, "tuning")] >= 3 and kinds[(kind, "heldout")] >= 3, kinds
    assert {item["split"] for item in data["negative"]} == {"tuning", "heldout"}


@pytest.mark.parametrize(
    ("name", "split", "words", "shapes"),
    [("strict2.json", "tuning", 45, 3), ("strict3.json", "heldout", 40, 4)],
    ids=["strict2 is a tuning set", "strict3 is held out"],
)
def test_a_set_of_one_split(name: str, split: str, words: int, shapes: int) -> None:
    """strict2.json is for tuning only; strict3.json, written blind, is held out only."""
    data = _needs(QUERIES / name)
    assert data["graded"] and data["corpus_only"]
    assert {item["split"] for item in data["queries"] + data["negative"]} == {split}
    kinds = Counter(item["kind"] for item in data["queries"])
    assert kinds["words"] >= words and kinds["shape"] >= shapes, kinds
    assert all(item.get("filter") for item in data["queries"] if item["kind"] == "shape")
    assert len(data["negative"]) >= 12


def test_the_extra_hubness_references_are_no_quality_need() -> None:
    """bench/references/ (the hubness references tried with bench/semantic_quality.py
    --more-references) holds everyday needs, none of them a need or negative of a quality set,
    each once."""
    asked = {
        (item if isinstance(item, str) else item["q"]).strip().lower()
        for path in QUERIES.glob("*.json")
        for key in ("queries", "negative")
        for item in _needs(path).get(key, [])
    }
    assert len(asked) > 250
    files = sorted((QUERIES.parent / "references").glob("*.txt"))
    assert len(files) == 2
    for path in files:
        lines = [line.strip().lower() for line in path.read_text().splitlines()]
        assert all(lines) and len(lines) == len(set(lines)) >= 100
        assert not set(lines) & asked, path.name
