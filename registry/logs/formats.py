"""The two log formats, as pieces of ``settings.LOGGING`` (no Django import: settings use it).

``text`` (the default, what ``make run`` shows): the message, after ``[request id] `` when the
line belongs to a request or a task. ``json``: one JSON object a line, written by
python-json-logger, with ``time`` (ISO 8601, UTC), ``level``, ``logger``, ``message``,
``request_id``, ``task_name``, ``agent_id`` (null where unknown), ``exception`` (the traceback,
when there is one) and any ``extra=`` the line was logged with.
"""

from __future__ import annotations

from typing import Any

from pythonjsonlogger.core import RESERVED_ATTRS

FORMATS = ("text", "json")
TEXT = "%(request_tag)s%(message)s"

# The fields every JSON line starts with, in this order ("time" is filled in by the library's
# timestamp option; the others are record attributes, renamed below).
JSON_FIELDS = ["time", "levelname", "name", "message", "request_id", "task_name", "agent_id"]
JSON_RENAMED = {"levelname": "level", "name": "logger", "exc_info": "exception"}

FILTERS: dict[str, Any] = {
    "context": {"()": "registry.logs.context.ContextFilter"},
    "server_access": {"()": "registry.logs.access.ServerAccessFilter"},
    "beat_ticks": {"()": "registry.logs.celery_output.BeatTicksFilter"},
    "tracebacks": {"()": "registry.logs.tracebacks.TracebackThrottle"},
}

FORMATTERS: dict[str, Any] = {
    # `defaults`: a record that reached the handler some other way still formats.
    "text": {"()": "logging.Formatter", "fmt": TEXT, "defaults": {"request_tag": ""}},
    "json": {
        "()": "pythonjsonlogger.json.JsonFormatter",
        "fmt": JSON_FIELDS,
        "rename_fields": JSON_RENAMED,
        "timestamp": "time",
        # Not data: the text prefix, and uvicorn's copy of its message with colour codes.
        "reserved_attrs": [*RESERVED_ATTRS, "request_tag", "color_message"],
    },
}


def json_formatter() -> Any:
    """A JSON formatter configured as ``FORMATTERS["json"]`` (for handlers made outside
    ``LOGGING``: Celery's)."""
    # lazy: python-json-logger only when JSON lines are asked for
    from pythonjsonlogger.json import JsonFormatter

    options = {key: value for key, value in FORMATTERS["json"].items() if key != "()"}
    return JsonFormatter(**options)


def console_handler(log_format: str) -> dict[str, Any]:
    """The one handler (standard error) in ``log_format``, with the context filter and a
    repeated failure's traceback left out (registry/logs/tracebacks.py)."""
    return {
        "class": "logging.StreamHandler",
        "formatter": log_format,
        "filters": ["context", "tracebacks"],
    }


def server_loggers(log_format: str) -> dict[str, Any]:
    """The web servers' own loggers. uvicorn's access line is kept only for what Django does not
    answer (``/mcp``): Django's answers have the registry's own (``registry.logs.access``). In
    JSON, the servers' loggers (uvicorn's, gunicorn's, granian's in its workers; Django's
    runserver) write through the same handler, so that every line is JSON; in text they keep
    their own formats."""
    uvicorn_access = {"handlers": ["console"], "filters": ["server_access"], "propagate": False}
    if log_format != "json":
        return {"uvicorn.access": uvicorn_access}
    names = ["uvicorn", "uvicorn.error", "gunicorn.error", "gunicorn.access"]
    names += ["_granian", "granian.access", "django.server"]
    loggers: dict[str, Any] = {
        name: {"handlers": ["console"], "propagate": False} for name in names
    }
    loggers["uvicorn.access"] = uvicorn_access
    return loggers
