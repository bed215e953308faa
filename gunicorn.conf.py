"""gunicorn settings for the web service (``gunicorn -c gunicorn.conf.py registry.wsgi``).

Each worker imports the application and answers one warm-up request before serving, then
freezes the garbage collector's view of everything allocated so far (``gc.freeze()``): the
long-lived objects (modules, URLconf, settings, serializers) are never scanned again, which
takes the collector's pauses out of request latency (docs/benchmarks.md).
"""

from __future__ import annotations

import gc
import os
from typing import Any

bind = os.environ.get("GUNICORN_BIND", "0.0.0.0:8000")
workers = int(os.environ.get("GUNICORN_WORKERS", "2"))
# Threads give keep-alive connections (a sync worker closes each one after a response).
worker_class = "gthread"
threads = int(os.environ.get("GUNICORN_THREADS", "4"))
keepalive = 30
accesslog = os.environ.get("GUNICORN_ACCESS_LOG") or None
# Imported once in the master, shared copy-on-write by the workers.
preload_app = True


def post_worker_init(worker: Any) -> None:
    from django.test import Client

    try:
        Client(raise_request_exception=False).get("/healthz")  # warm the request path
    except Exception:  # a warm-up failure must not keep the worker from serving
        worker.log.warning("warm-up request failed", exc_info=True)
    gc.collect()
    gc.freeze()
