"""Agents waiting for their embedding, gathered so that a worker embeds them many at a time.

A crawl that stored new text marks its agent once its transaction commits: a Redis sorted set
(``registry:embed:pending``) maps the agent to when it was marked, and one ``cards.embed_pending``
task is queued unless one is already queued or running (a claim key with an expiry). That task
embeds the waiting agents :data:`BATCH` at a time (one model run over all their texts, one upsert)
until none is left, for at most :data:`TURN_SECONDS`, then queues itself again if some remain.

An agent leaves the set only after its vectors are written, and only if it was not marked again
meanwhile (its text may have changed after it was read): a worker lost in the middle leaves its
batch waiting for the next drain (the claim expires after :data:`CLAIM_SECONDS`). Without Redis
(in-process mode, tests) agents are embedded by the ``cards.embed_agents`` task, one crawl at a
time, as before.

The request id follows a submission into its batch (issue 46): an agent marked by a crawl in a
web request's story (a submission's) keeps that request id beside it (:data:`REQUESTS`), and the
drain writes one line per such agent of each batch, with the submission's request id as the
line's own and the drain's in ``batch_request_id``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.db import transaction

from cards import queue
from registry.logs import context, follow_ups

logger = logging.getLogger(__name__)

KEY = "registry:embed:pending"
REQUESTS = "registry:embed:requests"  # agent -> the request id of the submission that marked it
CLAIM = "registry:embed:drain"
CLAIM_SECONDS = 300  # a drain lost with its worker is replaced after this
BATCH = 64  # agents per model run and upsert (about 270 texts)
TURN_SECONDS = 20.0  # one task drains this long, well inside the task time limit

# Remove each (member, score) pair only if its score is still the one read: an agent marked
# again while its batch was embedded stays for the next batch.
_DONE = """
local removed = 0
for i = 1, #ARGV, 2 do
  if tonumber(redis.call('ZSCORE', KEYS[1], ARGV[i])) == tonumber(ARGV[i + 1]) then
    removed = removed + redis.call('ZREM', KEYS[1], ARGV[i])
    redis.call('HDEL', KEYS[2], ARGV[i])
  end
end
return removed
"""


def _redis() -> Any | None:
    if not settings.REDIS_URL or settings.CELERY_TASK_ALWAYS_EAGER:
        return None
    import redis  # lazy: only with a Redis URL (redis-py costs 45 ms at start-up)

    return redis.Redis.from_url(settings.REDIS_URL, socket_timeout=5, socket_connect_timeout=2)


_reader: Any = None  # the backlog's client (scrapes), made once per process


def backlog() -> tuple[int, float | None] | None:
    """How many agents wait in the set, and when the oldest was marked (Unix time; None when
    none waits): one round trip. None without Redis, where nothing waits here (each crawl's
    agents are embedded by a task of their own)."""
    global _reader
    if not settings.REDIS_URL or settings.REGISTRY_EMBEDDINGS == "off":
        return None
    if _reader is None:
        import redis  # lazy: only with a Redis URL (redis-py costs 45 ms at start-up)

        _reader = redis.Redis.from_url(
            settings.REDIS_URL, socket_timeout=2, socket_connect_timeout=2
        )
    pipe = _reader.pipeline(transaction=False)
    pipe.zcard(KEY)
    pipe.zrange(KEY, 0, 0, withscores=True)
    count, first = pipe.execute()
    return int(count), (float(first[0][1]) if first else None)


def embed_after_commit(agent_ids: list[str]) -> None:
    """Have these agents embedded once the current transaction commits (their text is then
    readable); nothing when embeddings are off."""
    if settings.REGISTRY_EMBEDDINGS == "off" or not agent_ids:
        return
    client = _redis()
    if client is None:
        queue.embed_after_commit(agent_ids)
        return
    ids = list(agent_ids)
    rid = context.request_id.get() if follow_ups.from_web.get() else None
    transaction.on_commit(lambda: _mark(client, ids, rid))


def mark(client: Any, agent_ids: list[str], request_id: str | None = None) -> bool:
    """Add the agents to the waiting set (with the submission's ``request_id``, if any); True
    when this call took the claim (the caller then queues a drain)."""
    now = repr(time.time())
    pipe = client.pipeline(transaction=False)
    pipe.zadd(KEY, dict.fromkeys(agent_ids, now))
    pipe.set(CLAIM, "queued", nx=True, ex=CLAIM_SECONDS)
    if request_id:
        pipe.hset(REQUESTS, mapping=dict.fromkeys(agent_ids, request_id))
    return bool(pipe.execute()[1])


def _mark(client: Any, agent_ids: list[str], request_id: str | None = None) -> None:
    try:
        claimed = mark(client, agent_ids, request_id)
    except Exception:  # Redis went away: embed these the plain way
        logger.warning("embedding queue unreachable; embedding %d agents directly", len(agent_ids))
        queue.send("cards.embed_agents", agent_ids, priority=queue.PERIODIC)
        return
    if claimed and not queue.send("cards.embed_pending", priority=queue.PERIODIC):
        client.delete(CLAIM)  # the next mark tries again


def drain(
    embed: Callable[[list[str]], int],
    *,
    client: Any | None = None,
    turn: float = TURN_SECONDS,
) -> tuple[int, bool]:
    """Embed waiting agents, :data:`BATCH` at a time, until none is left or ``turn`` seconds
    have passed. Returns (agents written, whether some are still waiting: the caller queues
    the next turn; the claim is kept for it)."""
    client = client or _redis()
    if client is None:
        return 0, False
    done = client.register_script(_DONE)
    deadline = time.monotonic() + turn
    written = 0
    while True:
        client.set(CLAIM, "running", ex=CLAIM_SECONDS)
        batch = client.zrange(KEY, 0, BATCH - 1, withscores=True)
        if not batch:
            client.delete(CLAIM)
            # An agent marked between the read and the delete found the claim taken and queued
            # nothing: take the claim back and go on if the set is not empty.
            if client.zcard(KEY) and client.set(CLAIM, "running", nx=True, ex=CLAIM_SECONDS):
                continue
            return written, False
        members = [member.decode() for member, _ in batch]
        _log_submissions(client, members)
        written += embed(members)
        args: list[Any] = []
        for member, score in batch:
            args += [member, repr(score)]
        done(keys=[KEY, REQUESTS], args=args)
        if time.monotonic() >= deadline:
            return written, bool(client.zcard(KEY))


def _log_submissions(client: Any, agent_ids: list[str]) -> None:
    """One line per agent of the batch that a submission marked, under its request id."""
    batch_rid = context.request_id.get()
    for agent_id, rid in zip(agent_ids, client.hmget(REQUESTS, agent_ids), strict=True):
        if rid is None:
            continue
        with context.bound(request=rid.decode(), agent=agent_id):
            logger.info(
                "embedding agent %s in a batch of %d",
                agent_id,
                len(agent_ids),
                extra={"batch_request_id": batch_rid},
            )
