"""One line for each step of every Celery task (issue 46), on the logger ``registry.tasks``:

- ``received`` (INFO, the worker's main process, when the message arrives; a countdown's
  ``eta`` with it, and ``origin``, the process that queued it: ``gen<pid>@<host>``, one per
  beat, so that two beats running by mistake show);
- ``succeeded`` (INFO) with ``duration_ms``;
- ``retried`` (WARNING) with ``reason`` (the exception's class and text) and ``duration_ms``;
- ``failed`` (ERROR) with ``exception_class``, ``duration_ms`` and the traceback
  (``exception``); Celery's own failure line (``celery.app.trace``) is off, so each failure is
  told once.

Each line has ``task_id`` and ``task_name`` and the request id the task came with
(``registry.logs.task_signals``): ``received`` reads it from the message, the others run in
the task's context. Celery's own "received" and "succeeded" lines are off (settings.LOGGING).
A task run in-process (eager) has no ``received`` line: nothing was received.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from celery import signals

from registry.logs import context

logger = logging.getLogger("registry.tasks")
HEADER = "registry_request_id"  # as registry.logs.task_signals stamps it
_STARTED = "_registry_log_started"  # on the task's request: when its run started


def _received(request: Any = None, **_: Any) -> None:
    if request is None:
        return
    headers = getattr(request, "request_dict", None) or {}
    rid = context.accepted_request_id(headers.get(HEADER))
    origin = headers.get("origin")  # Celery's: the queueing process, gen<pid>@<host>
    fields: dict[str, Any] = {"event": "received", "task_id": request.id, "origin": origin}
    eta = getattr(request, "eta", None)
    if eta:
        fields["eta"] = str(eta)
    with context.bound(request=rid, task=request.name):
        logger.info(
            "task %s[%s] received (queued by %s)", request.name, request.id, origin, extra=fields
        )


def _started(task: Any = None, **_: Any) -> None:
    if task is not None:
        setattr(task.request, _STARTED, time.perf_counter())


def _duration_ms(task: Any) -> float | None:
    started = getattr(task.request, _STARTED, None) if task is not None else None
    if started is None:
        return None
    return round((time.perf_counter() - started) * 1000, 1)


def _succeeded(sender: Any = None, **_: Any) -> None:
    if sender is None:
        return
    duration = _duration_ms(sender)
    logger.info(
        "task %s[%s] succeeded in %s ms",
        sender.name,
        sender.request.id,
        duration,
        extra={"event": "succeeded", "task_id": sender.request.id, "duration_ms": duration},
    )


def _retried(sender: Any = None, request: Any = None, reason: Any = None, **_: Any) -> None:
    if sender is None:
        return
    cause = getattr(reason, "exc", None)
    if cause is not None:
        text = f"{type(cause).__name__}: {cause}"
    elif reason is None:  # Celery cancels a late-acknowledged task whose connection was lost
        text = "cancelled by the worker (its broker connection was lost): delivered again"
    else:
        text = str(reason)
    task_id = getattr(request, "id", None) or sender.request.id
    duration = _duration_ms(sender)
    logger.warning(
        "task %s[%s] retried: %s",
        sender.name,
        task_id,
        text,
        extra={
            "event": "retried",
            "task_id": task_id,
            "reason": text,
            "duration_ms": duration,
            "retries": getattr(request, "retries", None),
        },
    )


def _failed(
    sender: Any = None,
    task_id: Any = None,
    exception: BaseException | None = None,
    einfo: Any = None,
    **_: Any,
) -> None:
    if sender is None:
        return
    kind = type(exception).__name__ if exception is not None else "unknown"
    duration = _duration_ms(sender) if context.task_name.get() == sender.name else None
    exc_info = (
        (type(exception), exception, exception.__traceback__) if exception is not None else None
    )
    logger.error(
        "task %s[%s] failed: %s: %s",
        sender.name,
        task_id,
        kind,
        exception,
        exc_info=exc_info,
        extra={
            "event": "failed",
            "task_id": task_id,
            "exception_class": kind,
            "duration_ms": duration,
        },
    )


def connect() -> None:
    """Connect the receivers (once: ``dispatch_uid``)."""
    for signal, receiver in (
        (signals.task_received, _received),
        (signals.task_prerun, _started),
        (signals.task_success, _succeeded),
        (signals.task_retry, _retried),
        (signals.task_failure, _failed),
    ):
        signal.connect(receiver, weak=False, dispatch_uid=f"registry.logs.lines.{signal.name}")
