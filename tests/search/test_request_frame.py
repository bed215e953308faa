"""The request frame around a need ("find an agent that …") is not what the model ranks by
(ranked with the model: tests/test_semantic.py)."""

from __future__ import annotations

import pytest

from search.request_frame import need_of


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
    ]
    + [
        (f"{frame} tells me {bare}", f"tells me {bare}")
        for frame in ("Find an agent that", "a bot that")
        for bare in ("will it rain in Porto this weekend", "who would win, a lion or a tiger")
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
