"""A traceback once a minute, not once a request, while something is down (issue 46).

During a PostgreSQL or Redis outage every request, scrape or task that needs it fails the same
way, and each failure logged with its traceback is some 5 KB of the same text. The handlers'
filter :class:`TracebackThrottle` writes the traceback of a failure the first time it is seen
and then at most once per :data:`WINDOW_SECONDS`; in between, the line is written without it,
saying its exception class (``exception_class``, in the message too) and ``traceback_repeated``.
A failure is "the same" when the logger, the exception's class and the place it was raised
(file and line of the innermost frame) are: another bug still shows its own traceback.
"""

from __future__ import annotations

import logging
import threading
import time
import traceback

WINDOW_SECONDS = 60.0
_MAX_KEYS = 1024  # distinct failures remembered per process (forgotten oldest first)


def _where(error: BaseException) -> tuple[str, int]:
    frames = traceback.extract_tb(error.__traceback__) if error.__traceback__ else []
    if not frames:
        return ("", 0)
    return (frames[-1].filename, frames[-1].lineno or 0)


class TracebackThrottle(logging.Filter):
    """Drops the traceback of a failure already shown in the last minute (the line stays)."""

    def __init__(self, window: float = WINDOW_SECONDS, clock: object = time.monotonic) -> None:
        super().__init__()
        self.window = window
        self.clock = clock
        self._shown: dict[tuple[str, str, str, int], float] = {}
        self._lock = threading.Lock()

    def filter(self, record: logging.LogRecord) -> bool:
        info = record.exc_info
        if not info or info[1] is None:
            return True
        error = info[1]
        kind = type(error).__name__
        key = (record.name, kind, *_where(error))
        now = self.clock()  # type: ignore[operator]
        with self._lock:
            last = self._shown.get(key)
            if last is None or now - last >= self.window:
                self._shown[key] = now
                if len(self._shown) > _MAX_KEYS:
                    del self._shown[next(iter(self._shown))]
                return True
        said = " ".join(str(error).split())[:200]  # one line, however the error spells itself
        text = f" ({kind}: {said}; traceback shown at most once a minute)"
        record.msg = str(record.msg) + (text.replace("%", "%%") if record.args else text)
        record.exc_info = None
        record.exc_text = None
        record.exception_class = kind
        record.traceback_repeated = True
        return True
