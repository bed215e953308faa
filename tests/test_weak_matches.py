"""Weak matches are collapsed on the catalogue, kept in the API (issue 39, item 6).

For a need no agent serves, the ranking still lists the agents above its noise floor (recall
first, docs/search.md), with scores of a few percent. The catalogue shows those under
``WEAK_SCORE`` in a collapsed "N weaker matches" list after the others; the API returns every
one of them as before. On the demo agents with the real model.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from cards.models import Agent
from search.embedding import model, store
from search.index import snapshot, vectors
from search.matches import WEAK_SCORE
from tests.factories import agent_from_card

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(
        not model.available(), reason="the embedding model package is not installed"
    ),
]

DEMO = Path(__file__).resolve().parents[1] / "cards" / "demo"
# Needs the demo agents do not serve, each with a few agents just above the noise floor, and
# needs they serve (docs/catalogue.md, "Weaker matches", has the scores).
UNSERVED = [
    "summarise this PDF",
    "track my parcel",
    "book a table for two at an Italian restaurant",
]
SERVED = {"will it rain in Porto this weekend": "Weatherly"}


@pytest.fixture
def demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Agent]]:
    monkeypatch.setattr(snapshot, "directory", lambda: tmp_path / "index")
    vectors.reset()
    agents = {
        path.stem: agent_from_card(
            path.read_bytes(), url=f"https://{path.stem}.demo.example/.well-known/agent-card.json"
        )
        for path in sorted(DEMO.glob("*.json"))
    }
    store.embed_agents([agent.pk for agent in agents.values()])
    yield agents
    vectors.reset()


def _section(body: str, start: str, end: str) -> str:
    return body.split(start, 1)[1].split(end, 1)[0] if start in body else ""


@pytest.mark.parametrize("need", UNSERVED)
def test_matches_a_person_would_not_pick_are_collapsed_but_kept_in_the_api(
    demo: dict[str, Agent], client: Client, client_anon: Any, need: str
) -> None:
    ranked = client_anon.get("/api/v1/agents", {"q": need}).json()["results"]
    assert ranked, "the API keeps every match above the noise floor"
    weak = [row for row in ranked if row["score"] < WEAK_SCORE]
    assert weak and all(not row["confident"] for row in weak)

    body = client.get("/", {"q": need}).content.decode()
    collapsed = _section(body, '<details class="weaker" id="weaker">', "</details>")
    assert f"{len(weak)} weaker match" in collapsed
    # Every weak match is inside the collapsed list, none outside it; each still has its row.
    for row in weak:
        assert f'href="/agents/{row["id"]}"' in collapsed
        assert body.count(f'href="/agents/{row["id"]}"') == 1
        assert f"match {row['score']}" in collapsed
    outside = body.replace(collapsed, "")
    assert all(int(score) >= WEAK_SCORE for score in re.findall(r"match (\d+)\b", outside))
    if len(weak) == len(ranked):
        assert "No agent is a likely match for this need." in body


@pytest.mark.parametrize(("need", "name"), SERVED.items())
def test_a_served_need_keeps_its_agent_on_top_and_collapses_the_rest(
    demo: dict[str, Agent], client: Client, need: str, name: str
) -> None:
    body = client.get("/", {"q": need}).content.decode()
    results = _section(body, '<ol class="results">', "</ol>")
    assert name in results
    collapsed = _section(body, '<details class="weaker" id="weaker">', "</details>")
    assert name not in collapsed
    # The details element is closed: no "open" attribute.
    assert '<details class="weaker" id="weaker" open' not in body
