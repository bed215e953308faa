"""Where the A2A endpoint keeps its tasks for ``GetTask`` and ``CancelTask``: the cache.

The cache alias ``a2a`` when configured (a separate Redis can be given to it, away from the
broker's), else ``default``, so any worker answers for a task another made. Every caller is
anonymous, so what is kept is bounded: a short TTL (``REGISTRY_A2A_TASK_TTL``), a size per task
(``REGISTRY_A2A_TASK_MAX_BYTES``: over it the history is left out; still over, the task is not
kept), a count per client (``REGISTRY_A2A_TASKS_PER_CLIENT``) and a byte budget for all clients
(``REGISTRY_A2A_STORE_MAX_BYTES``), each in a window of one TTL that opens with its first task.
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any

from django.conf import settings
from django.core.cache import BaseCache, caches

logger = logging.getLogger(__name__)

_TASK_ID = re.compile(r"[0-9a-fA-F-]{1,64}")


class StoreUnavailable(Exception):
    """The cache cannot be read: a task may exist, so "not found" would be a lie."""


def _store() -> BaseCache:
    return caches["a2a"] if "a2a" in settings.CACHES else caches["default"]


def stored_task(task_id: Any) -> dict[str, Any] | None:
    """The task kept under ``task_id``, or None. Raises :class:`StoreUnavailable`."""
    # Task ids are UUIDs this registry made: anything else (a NUL, spaces, 1 MB) is not looked
    # up, so it never becomes a cache key.
    if not isinstance(task_id, str) or not _TASK_ID.fullmatch(task_id):
        return None
    try:
        found = _store().get(f"a2a-task:{task_id}")
    except Exception:  # the cache client raises several types when Redis is down
        logger.warning("A2A task store unreachable", exc_info=True)
        raise StoreUnavailable from None
    return found if isinstance(found, dict) else None


def _add(store: BaseCache, key: str, amount: int, timeout: int) -> int:
    """Add ``amount`` to a counter that lives ``timeout`` seconds; the new total."""
    return amount if store.add(key, amount, timeout) else int(store.incr(key, amount))


def keep(task: dict[str, Any], client: str) -> bool:
    """Keep ``task`` if it fits every bound; False when it is not kept (it is still answered,
    and ``GetTask`` then says it is not found)."""
    ttl = settings.REGISTRY_A2A_TASK_TTL
    cap = settings.REGISTRY_A2A_TASK_MAX_BYTES
    stored, size = task, len(json.dumps(task))
    if size > cap:
        stored = {**task, "history": []}
        size = len(json.dumps(stored))
        if size > cap:
            return False
    store = _store()
    try:
        if _add(store, f"a2a-count:{client}", 1, ttl) > (settings.REGISTRY_A2A_TASKS_PER_CLIENT):
            return False
        if _add(store, "a2a-bytes", size, ttl) > (settings.REGISTRY_A2A_STORE_MAX_BYTES):
            return False
        store.set(f"a2a-task:{task['id']}", stored, ttl)
    except Exception:  # the cache client raises several types when Redis is down
        logger.warning("A2A task %s not kept: the task store is unreachable", task["id"])
        return False
    return True
