"""Putting work on the task queue, by task name, with the priority its cause deserves.

Services queue tasks by name (``cards.crawl_agent``) through the Celery app's registry, so the
task modules, which call the services, are not imported back by them (DESIGN.md, "Layers").
In-process mode (``CELERY_TASK_ALWAYS_EAGER``) runs them at once, as ``apply_async`` does.
"""

from __future__ import annotations

import logging
from typing import Any

from celery import current_app
from django.conf import settings
from django.db import transaction

logger = logging.getLogger(__name__)

# Lower runs first (kombu's Redis transport reads priority 0 before 9).
ASKED = 0  # someone is waiting: a submission, an owner's or a curator's re-crawl, an import
PERIODIC = 6  # the sweep keeping every card fresh


def send(
    name: str,
    *args: Any,
    countdown: float | None = None,
    priority: int = PERIODIC,
    **options: Any,
) -> bool:
    """Queue task ``name``; False (and a warning) when the broker cannot be reached.
    ``options``: more of ``apply_async``'s (time limits)."""
    try:
        current_app.tasks[name].apply_async(args, countdown=countdown, priority=priority, **options)
    except Exception:  # kombu raises many types when the broker is unreachable
        logger.warning("could not queue %s%r", name, args, exc_info=True)
        return False
    return True


def embed_after_commit(agent_ids: list[str]) -> None:
    """Queue the embedding of these agents once the current transaction commits (their text
    is then readable); nothing when embeddings are off (docs/search.md)."""
    if settings.REGISTRY_EMBEDDINGS == "off" or not agent_ids:
        return
    transaction.on_commit(lambda: send("cards.embed_agents", list(agent_ids), priority=PERIODIC))
