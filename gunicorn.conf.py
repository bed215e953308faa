"""gunicorn settings for the web service (``gunicorn -c gunicorn.conf.py registry.wsgi``).

The worker is gthread with requests read in the worker's event loop
(:class:`registry.serving.BufferedThreadWorker`): a thread is given a request only once it has
fully arrived, so slow clients cannot starve the threads, and a 413 closes its connection.
Each worker listens on its own socket (``SO_REUSEPORT``): the kernel spreads new connections
over the workers instead of letting the first one to wake up take them all. Measured in
docs/benchmarks.md ("Serving"); every setting here is in docs/configuration.md.

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
worker_class = os.environ.get("GUNICORN_WORKER_CLASS", "registry.serving.BufferedThreadWorker")
threads = int(os.environ.get("GUNICORN_THREADS", "4"))
keepalive = 30
reuse_port = os.environ.get("GUNICORN_REUSE_PORT", "true").lower() not in ("0", "false", "no")
accesslog = os.environ.get("GUNICORN_ACCESS_LOG") or None
# Imported once in the master, shared copy-on-write by the workers.
preload_app = True


def warm_up_host(allowed_hosts: list[str]) -> str:
    """A Host header ALLOWED_HOSTS accepts, for the warm-up request."""
    for host in allowed_hosts:
        if host == "*":
            return "localhost"
        if host:
            return host.lstrip(".")
    return "localhost"


def post_worker_init(worker: Any) -> None:
    from django.conf import settings
    from django.test import Client

    try:
        host = warm_up_host(list(settings.ALLOWED_HOSTS))
        response = Client(raise_request_exception=False, HTTP_HOST=host).get("/healthz")
        if response.status_code != 200:
            worker.log.warning("warm-up request answered %s", response.status_code)
    except Exception:  # a warm-up failure must not keep the worker from serving
        worker.log.warning("warm-up request failed", exc_info=True)
    gc.collect()
    gc.freeze()
