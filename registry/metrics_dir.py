"""The node's metrics directory (``PROMETHEUS_MULTIPROC_DIR``), emptied when its servers start.

Each process of a node writes its series to files of its own in that directory (named by its
pid); a scrape adds them up (registry/metrics_exposition.py). Files left by an earlier run
would be added to the new run's, and would pile up: the process that starts a node's workers
empties the directory first, before any worker writes:

* gunicorn: its ``on_starting`` hook (gunicorn.conf.py);
* a Celery worker: its main process, on ``worker_init`` (registry/metrics_worker.py);
* granian and uvicorn, which have no such hook on their command line: this module run before
  them, ``python -m registry.metrics_dir`` (the image's entrypoint runs it, then the command:
  ``python -m registry.metrics_dir granian ...``).

One directory per group of processes started together: a web server and a Celery worker on
the same machine each need their own (each would empty the other's).

A management command is not one of the node's servers: ``manage.py`` drops the variable for
every command but ``runserver`` (:func:`for_command`), so the command keeps its series in its
own memory and writes nothing into the directory. Compose's web service runs ``migrate`` in
the web container, after the entrypoint emptied the directory and before granian starts: its
500 queries and its series were added to the node's first scrapes as if the web tier had made
them (issue 46, section 3).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path


def reset(directory: str | None = None) -> Path | None:
    """Remove prometheus_client's files (``*.db``) from the metrics directory, made if missing;
    None when multiprocess metrics are off. Nothing else in it is touched: a directory set by
    mistake to one that holds other things loses none of them."""
    directory = directory or os.environ.get("PROMETHEUS_MULTIPROC_DIR") or None
    if directory is None:
        return None
    path = Path(directory)
    path.mkdir(parents=True, exist_ok=True)
    for entry in path.glob("*.db"):
        if entry.is_file():
            entry.unlink(missing_ok=True)
    return path


# manage.py commands that serve requests, and so count into the node's directory.
SERVING_COMMANDS = frozenset({"runserver"})


def for_command(argv: list[str]) -> None:
    """Before ``manage.py`` loads Django (prometheus_client reads the variable once, at its
    import): a command that does not serve leaves the node's metrics directory alone."""
    command = argv[1] if len(argv) > 1 else ""
    if command not in SERVING_COMMANDS:
        os.environ.pop("PROMETHEUS_MULTIPROC_DIR", None)


def main(argv: list[str]) -> None:
    """Empty the directory, then become ``argv`` (when given): an entrypoint before a server."""
    reset()
    if argv:
        os.execvp(argv[0], argv)


if __name__ == "__main__":
    main(sys.argv[1:])
