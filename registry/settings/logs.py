"""Logs (docs/operations.md, "Logs").

Text for people (`[request id] message`), or one JSON object a line for a log pipeline; every
line says its request id, task and agent where known.
"""

from __future__ import annotations

from registry.env import ConfigError, env_str
from registry.logs import formats as log_formats

REGISTRY_LOG_FORMAT = env_str("REGISTRY_LOG_FORMAT", "text").lower()
if REGISTRY_LOG_FORMAT not in log_formats.FORMATS:
    raise ConfigError(f"REGISTRY_LOG_FORMAT must be text or json (got {REGISTRY_LOG_FORMAT!r})")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": log_formats.FILTERS,
    "formatters": log_formats.FORMATTERS,
    "handlers": {"console": log_formats.console_handler(REGISTRY_LOG_FORMAT)},
    "root": {"handlers": ["console"], "level": env_str("REGISTRY_LOG_LEVEL", "INFO")},
    # One line per outbound request is noise; the crawl outcome is recorded on the agent.
    # The MCP SDK logs "Processing request of type ..." and "Terminating session" per call.
    # Each line once: a 4xx is the access log's line (not also django.request's "Bad Request");
    # a 500 is logged once with its traceback by registry.errors. Celery's "Task ... succeeded:
    # 'error'" is replaced by cards.tasks' own line saying what the crawl recorded. kombu's
    # "No hostname was supplied" is noise when no broker is configured (eager tasks).
    "loggers": {
        "httpx": {"level": "WARNING"},
        "httpcore": {"level": "WARNING"},
        "mcp": {"level": "WARNING"},
        "django.request": {"level": "ERROR"},
        # registry.logs.task_lines writes each task's received/succeeded/retried/failed line
        # (a failure once, with its traceback); Celery's own would repeat them.
        "celery.app.trace": {"level": "CRITICAL"},
        "celery.worker.strategy": {"level": "WARNING"},
        "celery.beat": {"filters": ["beat_ticks"]},  # "Sending due task" every 30 s: DEBUG
        "kombu.connection": {"level": "ERROR"},
        **log_formats.server_loggers(REGISTRY_LOG_FORMAT),
    },
}
