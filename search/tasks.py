"""Search's Celery tasks: embedding agents, and writing the vector index snapshot.

They keep the names they were registered under when they lived in ``cards.tasks``
(``cards.embed_agents``, ``cards.embed_pending``, ``cards.save_vector_index``): tasks queued
before an upgrade, the beat schedule (registry/settings/schedule.py) and the metrics and log
names that list them still find them.
"""

from __future__ import annotations

from typing import Any

from celery import shared_task
from django.conf import settings

from cards import queue
from search.embedding import pending, store
from search.index import writing

# Embedding tasks: no result kept; acknowledged once done (a lost worker's task runs again).
EMBEDDING_TASK: dict[str, Any] = {
    "ignore_result": True,
    "acks_late": True,
    "soft_time_limit": settings.CELERY_TASK_SOFT_TIME_LIMIT,
    "time_limit": settings.CELERY_TASK_TIME_LIMIT,
}


@shared_task(name="cards.embed_agents", **EMBEDDING_TASK)
def embed_agents(agent_ids: list[str]) -> int:
    """Embed these agents for semantic search (those whose text changed); returns how many."""
    return store.embed_agents(agent_ids)


@shared_task(name="cards.embed_pending", **EMBEDDING_TASK)
def embed_pending() -> int:
    """Embed the agents waiting for it, many per model run (search.embedding.pending); a turn
    that leaves some waiting queues the next one."""
    written, more = pending.drain(store.embed_agents)
    if more:
        queue.send("cards.embed_pending", priority=queue.PERIODIC)
    return written


@shared_task(
    name="cards.save_vector_index", ignore_result=True, soft_time_limit=600, time_limit=900
)
def save_vector_index() -> int:
    """Write a new snapshot of the vector index for the web processes (docs/search.md)."""
    if settings.REGISTRY_EMBEDDINGS == "off":
        return 0
    return writing.save_snapshot()
