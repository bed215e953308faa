"""gunicorn settings: compose's protocols service (uvicorn workers on ``registry.asgi``,
``-k registry.asgi_serving.BoundedUvicornWorker``), and the web service under gunicorn
(``gunicorn -c gunicorn.conf.py registry.wsgi``), the measured comparison of
docs/benchmarks.md and a fallback, not a production server: its threads read chunked bodies
themselves (issue 35.5). The image and compose's web service run granian
(``registry.rsgi``: HTTP parsed in Rust; docs/benchmarks.md, "Serving").

The worker is gthread with requests read in the worker's event loop
(:class:`registry.serving.BufferedThreadWorker`): a thread is given a request only once it has
fully arrived, so slow clients cannot starve the threads, and a 413 closes its connection.
Each worker listens on its own socket (``SO_REUSEPORT``): the kernel spreads new connections
over the workers instead of letting the first one to wake up take them all. Measured in
docs/benchmarks.md ("Serving"); every setting here is in docs/configuration.md.

Each worker imports the application and answers one warm-up request before serving, then
freezes the garbage collector's view of everything allocated so far
(:func:`registry.serving.warm_up`).
"""

from __future__ import annotations

import os
from typing import Any

bind = os.environ.get("GUNICORN_BIND", "0.0.0.0:8000")
workers = int(os.environ.get("GUNICORN_WORKERS", "2"))
# Threads give keep-alive connections (a sync worker closes each one after a response).
worker_class = os.environ.get("GUNICORN_WORKER_CLASS", "registry.serving.BufferedThreadWorker")
threads = int(os.environ.get("GUNICORN_THREADS", "4"))
keepalive = 30
reuse_port = os.environ.get("GUNICORN_REUSE_PORT", "true").lower() not in ("0", "false", "no")
accesslog = os.environ.get("GUNICORN_ACCESS_LOG") or None
# Imported once in the master, shared copy-on-write by the workers.
preload_app = True


def post_worker_init(worker: Any) -> None:
    from registry.serving import warm_up

    warm_up(worker.log)


# Metrics with several workers (PROMETHEUS_MULTIPROC_DIR, docs/operations.md): the master
# empties the directory before any worker writes, and marks each worker that exits dead, so its
# live gauges leave the exposition (its counters stay counted).
def on_starting(server: Any) -> None:
    from registry import metrics_dir

    metrics_dir.reset()


def child_exit(server: Any, worker: Any) -> None:
    directory = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if directory:
        from prometheus_client.multiprocess import mark_process_dead

        mark_process_dead(worker.pid, directory)
