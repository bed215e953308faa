"""The request frame around a need ("find an agent that …") is not what the model ranks by."""

from __future__ import annotations

from pathlib import Path

import pytest

from cards.embedding import model, store, vectors
from cards.reads import gate, semantic
from cards.reads.request_frame import need_of
from tests.factories import agent_from_card

DEMO = Path(__file__).resolve().parent.parent.parent / "cards" / "demo"


@pytest.mark.parametrize(
    ("asked", "need"),
    [
        (
            "Find an agent that tells my bot when a storm is coming",
            "tells my bot when a storm is coming",
        ),
        ("find me a bot to plan my trip", "plan my trip"),
        ("find agents for data cleaning", "data cleaning"),
        ("bots that trade crypto for me", "trade crypto for me"),
        ("something to make my kid laugh", "make my kid laugh"),
        ("Is there a service which can convert euros to yen?", "convert euros to yen?"),
        ("I need an agent that books tables", "books tables"),
        ("we're looking for a tool for invoice extraction", "invoice extraction"),
        ("a bot that repeats back whatever I type", "repeats back whatever I type"),
        ("something that answers any message cheerfully", "answers any message cheerfully"),
        ("Please, can you bargain the seller down", "bargain the seller down"),
        ("help me word a polite note", "word a polite note"),
        ("I'd like you to summarise this report", "summarise this report"),
        ("hey, an assistant able to draft tweets", "draft tweets"),
    ],
)
def test_the_frame_is_taken_off(asked: str, need: str) -> None:
    assert need_of(asked) == need


@pytest.mark.parametrize(
    "asked",
    [
        "show me what sneakers this store carries",  # no agent is asked for: every word counts
        "will it rain in Porto this weekend",
        "find the bottleneck that limits our factory output",
        "find an agent that",  # nothing would remain
        "a bot that sings",  # one word would remain
        "the bot that broke production: who wrote it",  # a bot named, not asked for
        "tell me whether a bot that trades can be trusted",  # the frame only counts first
        "agent to agent payments with receipts",  # a bare noun before "to" is the topic
        "tools for data cleaning",
        "",
    ],
)
def test_a_need_without_a_frame_is_kept_whole(asked: str) -> None:
    assert need_of(asked) == asked


@pytest.mark.django_db
@pytest.mark.skipif(not model.available(), reason="the embedding model package is not installed")
def test_a_framed_need_ranks_as_the_bare_need(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The frame changes neither the order nor the scores, and the lexical side (which already
    leaves such words out) agrees."""
    monkeypatch.setattr(vectors, "_directory", lambda: tmp_path / "index")
    vectors.reset()
    ids = [
        agent_from_card(
            path.read_bytes(), url=f"https://{path.stem}.demo.example/.well-known/agent-card.json"
        ).pk
        for path in sorted(DEMO.glob("*.json"))
    ]
    store.embed_agents(ids)
    agents = gate.agents(include_gone=False)
    for bare in ("will it rain in Porto this weekend", "who would win, a lion or a tiger"):
        plain = [m.why() | {"id": m.id} for m in semantic.rank(bare, agents, limit=5)]
        for framed in (f"Find an agent that tells me {bare}", f"a bot that tells me {bare}"):
            assert need_of(framed) == f"tells me {bare}"
        asked = [
            m.why() | {"id": m.id}
            for m in semantic.rank(f"Is there an agent which can say {bare}", agents, limit=5)
        ]
        said = [m.why() | {"id": m.id} for m in semantic.rank(f"say {bare}", agents, limit=5)]
        assert asked == said and said[0]["id"] == plain[0]["id"]
    vectors.reset()
