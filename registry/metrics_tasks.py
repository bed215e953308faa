"""Celery tasks and beat, counted from Celery's signals (series in registry/metrics.py).

* every task run: ``registry_tasks_total{task, outcome}`` (succeeded, failed, retried) and
  ``registry_task_duration_seconds{task}``, from ``task_prerun`` and ``task_postrun`` (whose
  ``state`` says the outcome). ``task`` is the task's name when it is one of the registry's
  own (registered by its code: a closed set), else ``other``. Each worker child makes every
  (task, outcome) at 0 as it starts, so the first failure after a restart is an increase;
* an embedding task that wrote vectors sets ``registry_vectors_written_timestamp_seconds``
  (a snapshot built before that is behind);
* beat: each time it sends a schedule entry's task, the entry's name and the time go into a
  Redis hash (:data:`BEAT_KEY`), which any node's scrape reads
  (``registry_beat_last_sent_timestamp_seconds{schedule}``, registry/metrics_node.py): beat
  serves no metrics of its own, and its last run must be seen from elsewhere when it is gone.

registry.celery imports this module (through registry/metrics_worker.py), so every process
that loads the Celery app connects these handlers; they do nothing where no task runs.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from celery.signals import beat_init, before_task_publish, task_postrun, task_prerun

logger = logging.getLogger(__name__)

BEAT_KEY = "registry:beat:last-sent"
EMBEDDING_TASKS = frozenset({"cards.embed_agents", "cards.embed_pending"})
OTHER = "other"
_OUTCOMES = {"SUCCESS": "succeeded", "FAILURE": "failed", "RETRY": "retried"}

_started: dict[str, float] = {}  # task id -> monotonic start, in the process running it


def registry_task_names() -> tuple[str, ...]:
    """The registry's own tasks: every task the Celery app registered but Celery's."""
    # lazy: registry.celery imports this module before its app exists
    from celery import current_app

    return tuple(sorted(name for name in current_app.tasks if not name.startswith("celery.")))


def task_label(name: str | None) -> str:
    """``name`` when it is one of the registry's tasks, else ``other``."""
    return name if name and name in registry_task_names() else OTHER


@task_prerun.connect(weak=False)
def _task_started(task_id: str | None = None, **kwargs: Any) -> None:
    if task_id:
        _started[task_id] = time.monotonic()


@task_postrun.connect(weak=False)
def _task_finished(
    task_id: str | None = None,
    task: Any = None,
    retval: Any = None,
    state: str | None = None,
    **kwargs: Any,
) -> None:
    # lazy: prometheus_client's multiprocess mode reads its directory on import
    import registry.metrics as metrics

    started = _started.pop(task_id or "", None)
    name = task_label(getattr(task, "name", None))
    if started is not None:
        metrics.TASK_DURATION.labels(task=name).observe(time.monotonic() - started)
    outcome = _OUTCOMES.get(state or "")
    if outcome is not None:
        metrics.TASKS.labels(task=name, outcome=outcome).inc()
    if name in EMBEDDING_TASKS and state == "SUCCESS" and isinstance(retval, int) and retval > 0:
        metrics.VECTORS_WRITTEN.set(time.time())


def init_worker_series() -> None:
    """Every closed label set at 0 in this process, the tasks' included."""
    # lazy: prometheus_client's multiprocess mode reads its directory on import
    import registry.metrics as metrics

    metrics.init_label_sets(registry_task_names())


# --- beat -------------------------------------------------------------------------------------


class _Beat:
    running = False
    client: Any = None
    entries: dict[str, list[str]] = {}  # task name -> the schedule entries that send it


@beat_init.connect(weak=False)
def _beat_started(sender: Any = None, **kwargs: Any) -> None:
    # lazy: registry.celery imports this module before Django is set up
    from django.conf import settings

    entries: dict[str, list[str]] = {}
    for entry, spec in settings.CELERY_BEAT_SCHEDULE.items():
        entries.setdefault(str(spec["task"]), []).append(str(entry))
    _Beat.entries = entries
    _Beat.running = True


def _beat_client() -> Any | None:
    # lazy: registry.celery imports this module before Django is set up
    from django.conf import settings

    url = settings.REDIS_URL
    if not url:
        return None
    if _Beat.client is None:
        # lazy: redis-py only where a Redis URL is set (45 ms of start-up otherwise)
        import redis

        _Beat.client = redis.Redis.from_url(url, socket_timeout=1, socket_connect_timeout=1)
    return _Beat.client


def record_beat_sent(task_name: str, now: float | None = None) -> list[str]:
    """Note that beat sent ``task_name`` now: its schedule entries' time in Redis. Returns the
    entries noted (none when Redis is away: beat could not send either)."""
    names = _Beat.entries.get(task_name, [])
    client = _beat_client()
    if not names or client is None:
        return []
    at = time.time() if now is None else now
    try:
        client.hset(BEAT_KEY, mapping={name: repr(at) for name in names})
    except Exception as exc:  # Redis away: the broker is too, and the alert says so
        logger.debug("beat's last run not recorded: %s", exc)
        return []
    return names


@before_task_publish.connect(weak=False)
def _beat_sending(sender: str | None = None, **kwargs: Any) -> None:
    if _Beat.running and sender:
        record_beat_sent(sender)
