"""granian's own log lines in the registry's format (issue 46; docs/operations.md, "Logs").

granian's main process (``[INFO] Started worker-1``, ``Respawning worker-1``) never loads the
application, so Django's ``LOGGING`` never reaches it; ``--log-config granian-logging.json``
gives it this formatter instead, which follows ``REGISTRY_LOG_FORMAT`` as the application's
lines do: granian's own text (``[INFO] message``), or one JSON object a line, the same
fields as every other line (registry/logs/formats.py, loaded by path here: importing the
``registry`` package would load the Celery app into the server's main process). Python
warnings are logged too (``py.warnings``), so that they are JSON when the lines are. The
workers load the application, whose ``LOGGING`` takes these loggers over the same way.
"""

from __future__ import annotations

import importlib.util
import logging
import os
from pathlib import Path
from types import ModuleType

TEXT = "[%(levelname)s] %(message)s"  # granian's own


def _formats() -> ModuleType:
    path = Path(__file__).resolve().parent / "registry" / "logs" / "formats.py"
    spec = importlib.util.spec_from_file_location("_registry_log_formats", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def formatter() -> logging.Formatter:
    """The formatter of granian's handlers: JSON when ``REGISTRY_LOG_FORMAT`` is json."""
    logging.captureWarnings(True)
    if os.environ.get("REGISTRY_LOG_FORMAT", "text").strip().lower() == "json":
        made: logging.Formatter = _formats().json_formatter()
        return made
    return logging.Formatter(TEXT)
