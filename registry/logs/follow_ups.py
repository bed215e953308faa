"""A submission's request id on the agent's follow-up tasks queued later by beat (issue 46).

A submission's crawl carries the submission's request id (registry.logs.task_signals). What the
crawl leads to is not always queued by the crawl: with a broker, the agent's first live check is
queued by beat's ``live.sweep`` minutes later, under the sweep's own id. So that one id still
tells the whole story, the crawl of an agent whose id came from a web request remembers it (in
the cache, for :data:`REMEMBER_SECONDS`), and the next follow-up of that agent queued outside
any web request's story (:data:`FOLLOW_UPS`, e.g. by the sweep) is given it instead of the
sweep's, once. Whether an id comes from a web request travels with the tasks in the header
:data:`SOURCE_HEADER` (``web``), as the id does.

The cache being away costs only this (nothing is raised; the follow-up keeps the sweep's id).
"""

from __future__ import annotations

import logging
from contextvars import ContextVar
from typing import Any

SOURCE_HEADER = "registry_request_source"
WEB = "web"
REMEMBERING = frozenset({"cards.crawl_agent"})
FOLLOW_UPS = frozenset({"live.check_agent", "cards.embed_agents"})
REMEMBER_SECONDS = 6 * 3600
_KEY = "logs:agent-request:{}"

# Whether the current request id is a web request's (set by the web middleware, and by a
# task whose message says so).
from_web: ContextVar[bool] = ContextVar("registry_request_from_web", default=False)

logger = logging.getLogger(__name__)


def _cache() -> Any:
    # lazy: the cache needs settings, which logging is configured before
    from django.core.cache import cache

    return cache


def remember(task_name: str, agent: str | None, request_id: str | None) -> None:
    """A crawl of ``agent`` running in a web request's story: keep its id for the follow-ups."""
    if task_name not in REMEMBERING or not agent or not request_id or not from_web.get():
        return
    try:
        _cache().set(_KEY.format(agent), request_id, REMEMBER_SECONDS)
    except Exception as exc:  # the cache is away: the follow-ups keep their own ids
        logger.debug("request id of agent %s not remembered: %s", agent, exc)


def for_follow_up(task_name: str, agent: str | None) -> str | None:
    """The remembered id for a follow-up of ``agent`` queued outside a web request's story
    (forgotten once given), else None."""
    if task_name not in FOLLOW_UPS or not agent or from_web.get():
        return None
    key = _KEY.format(agent)
    try:
        cache = _cache()
        rid = cache.get(key)
        if rid is not None:
            cache.delete(key)
    except Exception as exc:
        logger.debug("request id of agent %s not read: %s", agent, exc)
        return None
    return str(rid) if rid is not None else None
