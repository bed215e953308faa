"""Hubness (search/embedding/hubs.py, docs/search.md "Ranking"): an agent close to needs in
general has a share of that closeness taken off its cosine to any one need."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from cards.models import Agent
from cards.reads import gate
from search import semantic
from search.embedding import hubs, model, store
from search.index import snapshot, vectors, writing
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
    monkeypatch.setattr(snapshot, "directory", lambda: tmp_path / "index")
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
    # Scores are whole percents: put the generic card's plain cosine for this need at the middle
    # of the scale, where a change shows (at the far tail both round to 1 on some CPUs).
    cosine = index.matches(model.embed_query(need), [generic.pk], hubs.references())
    monkeypatch.setattr(semantic, "MID", cosine[generic.pk][0])
    with_hubs = dict(semantic.rank(need, agents, limit=5))
    monkeypatch.setattr(semantic, "HUB_WEIGHT", 0.0)
    without = dict(semantic.rank(need, agents, limit=5))
    assert generic.pk in without
    assert with_hubs.get(generic.pk, 0) < without[generic.pk]


def test_row_hubness_and_the_profile_of_a_snapshot() -> None:
    refs = np.vstack([np.eye(4, dtype=np.float32), np.zeros((8, 4), dtype=np.float32)])
    rows = np.array(
        [[0.9, 0.0, 0.0, 0.0], [0.0, 0.5, 0.3, 0.0], [0.0, 0.0, 0.0, 1.0]], dtype=np.float32
    )
    assert hubs.row_hubness(rows, refs) == pytest.approx([0.9 / 8, 0.8 / 8, 1.0 / 8])
    # Agent 0 owns rows 0-1, agent 1 row 2; chunks of one row still group by agent.
    for chunk in (1, 2, 100):
        agent, row = hubs.profile(rows, np.array([0, 2]), refs, chunk=chunk)
        assert agent == pytest.approx([hubs.hubness(rows[:2], refs), hubs.hubness(rows[2:], refs)])
        assert row == pytest.approx(hubs.row_hubness(rows, refs))


@pytest.mark.skipif(not model.available(), reason="the embedding model package is not installed")
def test_the_snapshot_scores_as_the_delta_does(monkeypatch: pytest.MonkeyPatch) -> None:
    """Hubness stored in the snapshot by the worker gives the scores computed on the fly for
    newer rows; a snapshot stored for other references is not trusted (computed instead)."""
    made: list[Agent] = []
    for name, skills in (
        ("Tide Tables", ["harbour tide times", "moon phases"]),
        ("Everything Helper", ["answer anything", "do any task", "plan your life"]),
        ("Plain", []),
    ):
        card = minimal_card(name=name, description=f"{name}: what it does.")
        card["skills"] = [
            {"id": f"s{i}", "name": text, "description": text, "tags": []}
            for i, text in enumerate(skills)
        ]
        made.append(
            agent_from_card(
                card, url=f"https://{len(made)}.hubs.example/.well-known/agent-card.json"
            )
        )
    ids = [agent.pk for agent in made]
    store.embed_agents(ids)
    query = model.embed_query("when is low water in Brest")
    refs = hubs.references()
    ask = {"row_weight": 0.3, "center": 0.19}
    fresh = vectors.index().matches(query, ids, refs, **ask)
    assert writing.save_snapshot() == 3
    vectors.reset()
    index = vectors.index()
    index.refresh(force=True)
    assert index.snapshot.hub_signature == hubs.signature() and not index.delta
    stored = index.matches(query, ids, refs, **ask)
    monkeypatch.setattr(index.snapshot, "hub_signature", "other references")
    computed = index.matches(query, ids, refs, **ask)
    for pk in ids:  # skill rows are float16 in the snapshot
        for found in (stored, computed):
            assert found[pk][0] == pytest.approx(fresh[pk][0], abs=2e-3)
            assert found[pk][1] == fresh[pk][1]
            assert found[pk][2] == pytest.approx(fresh[pk][2], abs=2e-3)
    assert fresh[made[2].pk][1] == -1  # no skill
    plain = index.matches(query, ids)  # no references: the plain best cosine, hubness 0
    assert all(plain[pk][2] == 0.0 for pk in ids)


@pytest.mark.skipif(not model.available(), reason="the embedding model package is not installed")
def test_a_snapshot_of_other_references_is_written_again_though_no_row_changed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """After an upgrade that changes the model id (or the references), the snapshot's stored
    hubness no longer applies and every search would compute it: the worker's next
    save_snapshot writes the snapshot again even when no vector changed. With the same
    signature, nothing is written."""
    agent = agent_from_card(minimal_card(name="Tide Tables", description="Harbour tide times."))
    store.embed_agents([agent.pk])
    assert writing.save_snapshot() == 1
    first = snapshot.current_name()
    assert writing.save_snapshot() == 1 and snapshot.current_name() == first  # nothing to do
    monkeypatch.setattr(hubs, "signature", lambda: "after an upgrade")
    assert writing.save_snapshot() == 1
    second = snapshot.current_name()
    assert second != first
    vectors.reset()
    index = vectors.index()
    index.refresh(force=True)
    assert index.snapshot.name == second and index.snapshot.hub_signature == "after an upgrade"
    assert writing.save_snapshot() == 1 and snapshot.current_name() == second
