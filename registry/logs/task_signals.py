"""The request id follows a submission into its Celery tasks, and each task's lines say which.

- ``before_task_publish``: a task queued while a request id is set (a web request, or a task
  queueing another, a retry included) carries it in its message headers, and whether it is a
  web request's; an agent's follow-up queued by beat gets its submission's
  (``registry.logs.follow_ups``).
- ``task_prerun`` / ``task_postrun``: the worker sets, for the task's run, the id it came with (a
  new one when it came with none: tasks started by beat, or by a process outside any request),
  its name and, when its arguments carry one (``agent_id``), the agent's id; then puts back
  what was there before. A task run in-process (eager) keeps its caller's id.
- ``after_setup_logger`` / ``after_setup_task_logger``: Celery replaces the root logger's
  handlers with its own in worker and beat processes (and gives billiard's pool logger one);
  these give them the context filter, the traceback throttle (``registry.logs.tracebacks``) and
  the configured format (``REGISTRY_LOG_FORMAT``): in JSON, python-json-logger's formatter; in
  text, Celery's own format with the ``[request id] `` prefix before the message.
"""

from __future__ import annotations

import inspect
import logging
from functools import lru_cache
from typing import Any, cast

from celery import signals

from registry.logs import celery_output, context, follow_ups, formats, task_lines, tracebacks

HEADER = "registry_request_id"
AGENT_ARGUMENT = "agent_id"
_SAVED = "_registry_log_context"  # on the task's request: the values to put back after its run


def _stamp_request_id(
    sender: Any = None, body: Any = None, headers: dict[str, Any] | None = None, **kwargs: Any
) -> None:
    if headers is None:
        return
    remembered = None
    if isinstance(sender, str) and sender in follow_ups.FOLLOW_UPS:
        remembered = follow_ups.for_follow_up(sender, _published_agent(sender, body))
    if remembered is not None:  # an agent's follow-up queued by beat: its submission's id
        headers[HEADER] = remembered
        headers[follow_ups.SOURCE_HEADER] = follow_ups.WEB
        return
    rid = context.request_id.get()
    if rid is not None and HEADER not in headers:
        headers[HEADER] = rid
        if follow_ups.from_web.get():
            headers[follow_ups.SOURCE_HEADER] = follow_ups.WEB


def _published_agent(name: str, body: Any) -> str | None:
    """The agent a task being queued is about (its message body: args, kwargs, options)."""
    # lazy: registry.celery imports this module before Django is set up
    from celery import current_app

    task = current_app.tasks.get(name)
    if task is None or not isinstance(body, tuple | list) or len(body) < 2:
        return None
    return agent_of(task, body[0], body[1])


@lru_cache(maxsize=256)
def _agent_position(run: Any) -> int | None:
    """Where ``agent_id`` is among the positional parameters of a task's function."""
    try:
        names = list(inspect.signature(run).parameters)
    except (TypeError, ValueError):
        return None
    return names.index(AGENT_ARGUMENT) if AGENT_ARGUMENT in names else None


def agent_of(task: Any, args: Any, kwargs: Any) -> str | None:
    """The agent id among a task's arguments (``agent_id=`` or in its place), if any."""
    if kwargs and kwargs.get(AGENT_ARGUMENT) is not None:
        return str(kwargs[AGENT_ARGUMENT])
    position = _agent_position(task.run)
    if position is not None and args is not None and len(args) > position:
        return str(args[position])
    return None


def _enter_task(task: Any = None, args: Any = None, kwargs: Any = None, **_: Any) -> None:
    if task is None:
        return
    request = task.request
    if request.is_eager:
        rid, web = context.request_id.get(), follow_ups.from_web.get()
    else:
        rid = request.get(HEADER)
        web = request.get(follow_ups.SOURCE_HEADER) == follow_ups.WEB
    rid = context.accepted_request_id(rid)
    agent = agent_of(task, args, kwargs)
    values: tuple[tuple[Any, Any], ...] = (
        (context.request_id, rid or context.new_request_id()),
        (context.task_name, task.name),
        (context.agent_id, agent),
        (follow_ups.from_web, web and rid is not None),
    )
    setattr(request, _SAVED, [(var, var.get()) for var, _ in values])
    for var, value in values:
        var.set(value)
    follow_ups.remember(task.name, agent, rid)


def _leave_task(task: Any = None, **_: Any) -> None:
    saved = getattr(task.request, _SAVED, None) if task is not None else None
    for var, value in saved or ():
        var.set(value)


def _format_handlers(logger: logging.Logger | None = None, **_: Any) -> None:
    _format(logger)
    if logger is not None and logger is logging.getLogger():
        # Celery gives billiard's pool logger (a child lost, a pool that cannot start) a
        # handler of its own beside the root's, and tells nobody: its lines were text in JSON.
        from celery.utils.log import get_multiprocessing_logger  # lazy: worker and beat only

        _format(get_multiprocessing_logger())


def _format(logger: logging.Logger | None) -> None:
    # lazy: registry.celery imports this module before Django is set up
    from django.conf import settings

    json = settings.REGISTRY_LOG_FORMAT == "json"
    for handler in logger.handlers if logger is not None else ():
        handler.addFilter(context.ContextFilter())
        handler.addFilter(tracebacks.TracebackThrottle())
        current = handler.formatter
        if json:
            handler.setFormatter(formats.json_formatter())
        elif current is not None and current._fmt and "%(request_tag)s" not in current._fmt:
            tagged = current._fmt.replace("%(message)s", "%(request_tag)s%(message)s", 1)
            handler.setFormatter(_same_kind(current, tagged))


def _same_kind(formatter: logging.Formatter, fmt: str) -> logging.Formatter:
    """``formatter`` again with another format string (Celery's take ``use_color`` too)."""
    kind: Any = type(formatter)
    if hasattr(formatter, "use_color"):
        return cast(
            logging.Formatter, kind(fmt, use_color=formatter.use_color, datefmt=formatter.datefmt)
        )
    return cast(logging.Formatter, kind(fmt, datefmt=formatter.datefmt))


def connect() -> None:
    """Connect the receivers (once: ``dispatch_uid``)."""
    signals.before_task_publish.connect(
        _stamp_request_id, weak=False, dispatch_uid="registry.logs.publish"
    )
    signals.task_prerun.connect(_enter_task, weak=False, dispatch_uid="registry.logs.prerun")
    signals.task_postrun.connect(_leave_task, weak=False, dispatch_uid="registry.logs.postrun")
    for signal in (signals.after_setup_logger, signals.after_setup_task_logger):
        signal.connect(_format_handlers, weak=False, dispatch_uid=f"registry.logs.{signal.name}")
    task_lines.connect()
    celery_output.connect()
