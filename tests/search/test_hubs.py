"""Hubness (cards/embedding/hubs.py, docs/search.md "Ranking"): an agent close to needs in
general has a share of that closeness taken off its cosine to any one need."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from cards.embedding import hubs, model, store, vectors
from cards.reads import gate, semantic
from tests.factories import agent_from_card, minimal_card

pytestmark = pytest.mark.django_db


def test_hubness_is_the_mean_of_the_best_cosines_to_the_references() -> None:
    # 12 references, only 4 of them nonzero
    refs = np.vstack([np.eye(4, dtype=np.float32), np.zeros((8, 4), dtype=np.float32)])
    rows = np.array([[0.9, 0.0, 0.0, 0.0], [0.0, 0.5, 0.3, 0.0]], dtype=np.float32)
    # Best row per reference: 0.9, 0.5, 0.3, 0 and eight 0; the best TOP (8) of them.
    assert hubs.TOP == 8
    assert hubs.hubness(rows, refs) == pytest.approx((0.9 + 0.5 + 0.3) / 8)
    assert hubs.hubness(rows[:0], refs) == 0.0


@pytest.fixture(autouse=True)
def _fresh_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(vectors, "_directory", lambda: tmp_path / "index")
    vectors.reset()
    yield
    vectors.reset()


@pytest.mark.skipif(not model.available(), reason="the embedding model package is not installed")
def test_a_generic_card_pays_for_its_hubness(monkeypatch: pytest.MonkeyPatch) -> None:
    """A card that says it does everything sits near every need; its score for a need is
    lower than its plain cosine would give, while a specific card's barely moves."""
    generic = agent_from_card(
        minimal_card(
            name="Everything Helper",
            description="Helps with anything: questions, tasks, writing, planning, searching, "
            "shopping, travel, money, health, work and home.",
        ),
        url="https://generic.hubs.example/.well-known/agent-card.json",
    )
    specific = agent_from_card(
        minimal_card(
            name="Tide Tables",
            description="High and low tide times for harbours on the Atlantic coast.",
        ),
        url="https://tides.hubs.example/.well-known/agent-card.json",
    )
    store.embed_agents([generic.pk, specific.pk])
    index = vectors.index()
    found = index.matches(
        model.embed_query("when is low water in Brest"),
        [generic.pk, specific.pk],
        hubs.references(),
    )
    assert found[generic.pk][2] > found[specific.pk][2] > 0  # the generic card is the hub
    agents = gate.agents(include_gone=False)
    need = "help me plan my week"
    with_hubs = dict(semantic.rank(need, agents, limit=5))
    monkeypatch.setattr(semantic, "HUB_WEIGHT", 0.0)
    without = dict(semantic.rank(need, agents, limit=5))
    assert generic.pk in without
    assert with_hubs.get(generic.pk, 0) < without[generic.pk]
