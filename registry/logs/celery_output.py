"""What Celery writes besides its log records, made to fit the registry's log (issue 46).

- The worker's and beat's banners are printed (``print``), not logged: with
  ``REGISTRY_LOG_FORMAT=json`` they would be the only lines that are not JSON. There they are
  logged instead, once, as one record whose message is the banner's text (the worker's through
  ``celeryd_after_setup``, sent just before it prints; beat's, which has no such signal, by the
  beat program class the app is given: :func:`use_json_beat`). In text they are left as they are.
- The worker's words on shutdown ("worker: Warm shutdown (MainProcess)") are printed from its
  signal handlers, where taking logging's locks could deadlock: in JSON they are printed as
  one JSON object (:func:`say_json`), still without logging.
- A Python warning raised before Celery or Django set up logging (the worker's warning about
  running as root) has no handler yet; in JSON one is set on the root logger at import
  (:func:`early_json_handler`), replaced as soon as Celery or Django configures logging.
- beat logs "Scheduler: Sending due task ..." at INFO for every run of every schedule (every
  30 s and more); :class:`BeatTicksFilter` makes those DEBUG (written only at that level). The
  worker's ``received`` line (registry.logs.task_lines) and the metrics of beat's last run per
  schedule tell the same.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from datetime import UTC, datetime
from typing import IO, Any

from celery import signals

BEAT_TICK = "Scheduler: Sending due task"
banner_logger = logging.getLogger("celery.banner")


def json_wanted() -> bool:
    """Whether the lines are JSON (read from the environment: beat's program class is chosen
    before Django's settings are loaded)."""
    return os.environ.get("REGISTRY_LOG_FORMAT", "text").strip().lower() == "json"


class BeatTicksFilter(logging.Filter):
    """On ``celery.beat``: its per-run "Sending due task" lines become DEBUG records, kept only
    when that logger is enabled for DEBUG."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno == logging.INFO and str(record.msg).startswith(BEAT_TICK):
            record.levelno, record.levelname = logging.DEBUG, "DEBUG"
            return logging.getLogger(record.name).isEnabledFor(logging.DEBUG)
        return True


def _worker_banner(sender: Any = None, instance: Any = None, **_: Any) -> None:
    """Log the worker's banner instead of printing it, in JSON."""
    if instance is None or not json_wanted() or getattr(instance, "quiet", True):
        return
    instance.quiet = True  # read just after this signal: the banner is not printed
    text = instance.startup_info(artlines=False) + (instance.extra_info() or "")
    banner_logger.info("%s", text.strip("\n"), extra={"hostname": sender})


def use_json_beat() -> None:
    """In JSON, have ``celery beat`` log its banner rather than print it (its program class
    is looked up by name when the app first makes one, ``app.Beat``)."""
    if not json_wanted():
        return
    # lazy: celery's beat and worker programs only in those processes
    from celery import beat as beat_service
    from celery.apps import beat as beat_program

    if getattr(beat_program.Beat, "registry_json", False):
        return
    printing: Any = beat_program.Beat

    class LoggingBeat(printing):
        """Celery's beat program, its banner logged once logging is set up, not printed."""

        registry_json = True

        def __init__(self, *args: Any, quiet: bool = False, **kwargs: Any) -> None:
            super().__init__(*args, quiet=True, **kwargs)
            self.banner_wanted = not quiet
            self.made_service: Any = None

        def Service(self, **kwargs: Any) -> Any:  # noqa: N802 - the name Celery calls
            self.made_service = beat_service.Service(**kwargs)
            return self.made_service

        def setup_logging(self, colorize: bool | None = None) -> None:
            super().setup_logging(colorize)
            if self.banner_wanted and self.made_service is not None:
                self.banner_wanted = False
                info = self.startup_info(self.made_service)
                banner_logger.info("celery beat is starting.\n%s", info)

    beat_program.Beat = LoggingBeat


def say_json(msg: str, f: IO[str] = sys.__stderr__) -> None:  # type: ignore[assignment]
    """Celery's ``safe_say`` (a print from a signal handler), as one JSON object a line."""
    line = {
        "time": datetime.now(UTC).isoformat(),
        "level": "INFO",
        "logger": "celery.apps.worker",
        "message": msg.strip(),
        "request_id": None,
        "task_name": None,
        "agent_id": None,
    }
    print(json.dumps(line), file=f, flush=True)


def early_json_handler() -> None:
    """In JSON: Python warnings logged, and a JSON handler on a root logger that has none yet
    (Celery's and Django's set-up replace it)."""
    if not json_wanted():
        return
    logging.captureWarnings(True)
    root = logging.getLogger()
    if root.handlers:
        return
    # lazy: logging is configured before this package finishes importing
    from registry.logs import context, formats

    handler = logging.StreamHandler()
    handler.addFilter(context.ContextFilter())
    handler.setFormatter(formats.json_formatter())
    root.addHandler(handler)


def connect() -> None:
    """Connect the receivers (once: ``dispatch_uid``); in JSON, the printing replaced."""
    signals.celeryd_after_setup.connect(
        _worker_banner, weak=False, dispatch_uid="registry.logs.worker_banner"
    )
    if json_wanted():
        # lazy: celery's worker program only in the worker process
        from celery.apps import worker as worker_program

        worker_program.safe_say = say_json
    early_json_handler()
    use_json_beat()
