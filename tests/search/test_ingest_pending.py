"""Embedding at ingest, many agents per model run (search/embedding/pending.py): agents marked by
crawls wait in a Redis sorted set and one drain embeds them in batches. Real Redis (the test
database index of REDIS_URL), real PostgreSQL, the real model."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from search.embedding import model, pending, store
from search.models import AgentEmbedding
from tests.factories import agent_from_card, minimal_card

pytestmark = pytest.mark.django_db

needs_redis = pytest.mark.skipif(not os.environ.get("REDIS_URL"), reason="REDIS_URL is not set")


@pytest.fixture
def client(settings: Any) -> Iterator[Any]:
    import redis

    settings.REDIS_URL = os.environ["REDIS_URL"]
    connection = redis.Redis.from_url(settings.REDIS_URL)
    connection.delete(pending.KEY, pending.CLAIM)
    yield connection
    connection.delete(pending.KEY, pending.CLAIM)


def _agents(count: int) -> list[str]:
    return [
        str(
            agent_from_card(
                minimal_card(name=f"Tide Tables {i}", description=f"Tides of harbour {i}."),
                url=f"https://tides{i}.pending.example/.well-known/agent-card.json",
            ).pk
        )
        for i in range(count)
    ]


@needs_redis
def test_the_first_mark_takes_the_claim_and_later_ones_do_not(client: Any) -> None:
    assert pending.mark(client, ["a", "b"]) is True
    assert pending.mark(client, ["b", "c"]) is False  # a drain is already queued
    assert sorted(client.zrange(pending.KEY, 0, -1)) == [b"a", b"b", b"c"]


@needs_redis
@pytest.mark.skipif(not model.available(), reason="the embedding model package is not installed")
def test_a_drain_embeds_every_waiting_agent_in_batches(
    client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = _agents(5)
    pending.mark(client, ids)
    monkeypatch.setattr(pending, "BATCH", 2)
    batches: list[list[str]] = []

    def embed(batch: list[str]) -> int:
        batches.append(batch)
        return store.embed_agents(batch)

    assert pending.drain(embed, client=client) == (5, False)
    assert sorted(len(b) for b in batches) == [1, 2, 2]
    assert sorted(str(pk) for pk in AgentEmbedding.objects.values_list("agent_id", flat=True)) == (
        sorted(ids)
    )
    assert client.zcard(pending.KEY) == 0
    assert not client.exists(pending.CLAIM)  # the next mark queues a drain again
    # The batched vectors are the ones an agent embedded alone gets (same texts, same model).
    alone = store.embed_agents(ids[:1], force=True)
    assert alone == 1


@needs_redis
def test_an_agent_marked_again_while_its_batch_runs_stays_waiting(client: Any) -> None:
    pending.mark(client, ["a", "b"])

    def embed(batch: list[str]) -> int:
        pending.mark(client, ["a"])  # its text changed after the batch read it
        return len(batch)

    written, more = pending.drain(embed, client=client, turn=0.0)
    assert written == 2
    assert more is True
    assert client.zrange(pending.KEY, 0, -1) == [b"a"]


@needs_redis
def test_a_drain_that_fails_leaves_its_batch_waiting(client: Any) -> None:
    pending.mark(client, ["a", "b"])

    def embed(batch: list[str]) -> int:
        raise RuntimeError("the worker was lost")

    with pytest.raises(RuntimeError):
        pending.drain(embed, client=client)
    assert sorted(client.zrange(pending.KEY, 0, -1)) == [b"a", b"b"]


@pytest.mark.skipif(not model.available(), reason="the embedding model package is not installed")
def test_each_distinct_text_is_run_once_and_rows_follow_the_texts() -> None:
    texts = ["tide tables for harbours", "", "weather in Paris", "tide tables for harbours"]
    rows = model.embed(texts)
    assert rows.shape == (4, model.DIM)
    assert np.array_equal(rows[0], rows[3])
    assert np.allclose(np.linalg.norm(rows, axis=1), 1.0, atol=1e-5)
    alone = model.embed(["weather in Paris"])[0]
    assert float(rows[2] @ alone) > 0.99  # batch neighbours change int8 scales a little
