"""The request id follows a submission into the batched embedding (issue 46;
search/embedding/pending.py): an agent marked by a crawl in a submission's story keeps that
request id beside it, and the drain writes one line per such agent under it. Real Redis."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from typing import Any

import pytest
from django.db import transaction

from registry.logs import context, follow_ups
from search.embedding import pending

needs_redis = pytest.mark.skipif(not os.environ.get("REDIS_URL"), reason="REDIS_URL is not set")
KEYS = (pending.KEY, pending.CLAIM, pending.REQUESTS)


@pytest.fixture
def client(settings: Any) -> Iterator[Any]:
    import redis

    settings.REDIS_URL = os.environ["REDIS_URL"]
    connection = redis.Redis.from_url(settings.REDIS_URL)
    connection.delete(*KEYS)
    yield connection
    connection.delete(*KEYS)


@needs_redis
def test_each_submission_in_a_batch_is_logged_under_its_request_id(
    client: Any, caplog: pytest.LogCaptureFixture
) -> None:
    pending.mark(client, ["agent-a", "agent-b"], "submission-1")
    pending.mark(client, ["agent-c"], "submission-2")
    pending.mark(client, ["agent-d"])  # marked by a sweep's crawl: no submission
    caplog.handler.addFilter(context.ContextFilter())
    with caplog.at_level(logging.INFO, logger=pending.__name__), context.bound(request="drain-9"):
        assert pending.drain(len, client=client) == (4, False)
    lines = {
        record.agent_id: (record.request_id, record.batch_request_id)  # type: ignore[attr-defined]
        for record in caplog.records
        if record.name == pending.__name__
    }
    assert lines == {
        "agent-a": ("submission-1", "drain-9"),
        "agent-b": ("submission-1", "drain-9"),
        "agent-c": ("submission-2", "drain-9"),
    }
    assert not client.exists(pending.REQUESTS)  # forgotten with their agents


@needs_redis
@pytest.mark.django_db(transaction=True)
def test_a_crawl_in_a_submissions_story_marks_its_agent_with_the_request_id(
    client: Any, settings: Any
) -> None:
    settings.CELERY_TASK_ALWAYS_EAGER = False  # the Redis set, not a task per crawl
    settings.REGISTRY_EMBEDDINGS = "auto"
    client.set(pending.CLAIM, "queued")  # a drain is queued already: nothing is sent here
    web = follow_ups.from_web.set(True)
    try:
        with context.bound(request="submission-7"), transaction.atomic():
            pending.embed_after_commit(["agent-x"])
        with context.bound(request="sweep-1"), transaction.atomic():
            follow_ups.from_web.set(False)
            pending.embed_after_commit(["agent-y"])  # a sweep's crawl: no submission's id
    finally:
        follow_ups.from_web.reset(web)
    assert client.hgetall(pending.REQUESTS) == {b"agent-x": b"submission-7"}
    assert sorted(client.zrange(pending.KEY, 0, -1)) == [b"agent-x", b"agent-y"]
