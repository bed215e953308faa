"""A Celery worker's metrics: its node's directory, its children's end, and its own server.

A node that runs only workers has no web server to ask for ``/metrics``, so the worker's main
process serves the node's exposition itself (registry/metrics_exposition.py, with the
dependency gauge of registry/health.py: whether this node reaches PostgreSQL and Redis) with
prometheus_client's HTTP server, on ``REGISTRY_METRICS_PORT`` at ``REGISTRY_METRICS_ADDRESS``
(off unless a port is set). That server has no access control of its own: bind it to an
address only the monitoring can reach (docs/operations.md).

With ``PROMETHEUS_MULTIPROC_DIR`` the main process empties the directory before its pool
starts (``worker_init``), and each prefork child marks itself dead as it exits
(``worker_process_shutdown``), so the live gauges of a child that is gone leave the exposition;
a child killed outright is swept at the next scrape.

Imports of prometheus_client and Django are inside the handlers: registry.celery connects
them, and every process imports registry.celery.
"""

from __future__ import annotations

import logging
import os
from typing import Any

from celery.signals import (
    worker_init,
    worker_process_init,
    worker_process_shutdown,
    worker_shutdown,
)

import registry.metrics_tasks as metrics_tasks  # connects the tasks' and beat's signals on import

logger = logging.getLogger(__name__)


class _Served:
    """The metrics server this process started, and in which process (children inherit it)."""

    server: Any = None
    owner: int = 0


def serve(port: int, address: str) -> Any:
    """Start the node's metrics server in a thread of this process; returns the server.

    Each scrape runs in a thread of its own: the database connection a collector opened there
    is closed when the scrape is done, not left to pile up."""
    # lazy: registry.celery imports this module before Django is set up
    from django.db import connections
    from prometheus_client import CollectorRegistry, start_http_server

    # registry_dependency_up on a worker node too: registered here, not left to whichever
    # task module happens to import the URLconf (which imports it on a web node).
    import registry.health as _health  # noqa: F401  # lazy: needs Django; registers the gauge

    # lazy: needs Django set up
    from registry.metrics_exposition import NodeCollector

    class Closing:
        def collect(self) -> list[Any]:
            try:
                return list(NodeCollector().collect())
            finally:
                connections.close_all()

    registry = CollectorRegistry(auto_describe=False, support_collectors_without_names=True)
    registry.register(Closing())
    server, _thread = start_http_server(port, addr=address, registry=registry)
    _Served.server, _Served.owner = server, os.getpid()
    return server


@worker_init.connect(weak=False)
def _worker_starting(sender: Any = None, **kwargs: Any) -> None:
    """The worker's main process, before its pool: a clean directory, then the server."""
    # lazy: registry.celery imports this module before Django is set up
    from django.conf import settings

    # lazy: needs Django's settings
    import registry.metrics_dir as metrics_dir

    metrics_dir.reset()
    metrics_tasks.init_worker_series()
    port = settings.REGISTRY_METRICS_PORT
    if not port:
        return
    if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        logger.warning(
            "REGISTRY_METRICS_PORT is set without PROMETHEUS_MULTIPROC_DIR: the worker's metrics "
            "server shows its main process only, not the children that run the tasks"
        )
    address = settings.REGISTRY_METRICS_ADDRESS
    try:
        serve(port, address)
    except OSError as exc:  # the port is taken: the worker still works, unobserved
        logger.error("worker metrics server not started on %s:%s: %s", address, port, exc)
        return
    logger.info("worker metrics on http://%s:%s/metrics", address, port)


@worker_process_init.connect(weak=False)
def _child_started(**kwargs: Any) -> None:
    """A prefork child inherits the main process's listening socket: its copy is closed, so
    the port is free once the main process is gone (``--pool=solo`` runs here in the main
    process itself, and keeps it). Then the child's series, at 0."""
    metrics_tasks.init_worker_series()
    server = _Served.server
    if server is not None and _Served.owner != os.getpid():
        server.socket.close()
        _Served.server = None


@worker_process_shutdown.connect(weak=False)
def _child_exiting(pid: int | None = None, **kwargs: Any) -> None:
    # lazy: prometheus_client's multiprocess mode reads its directory on import
    import registry.metrics as metrics

    if metrics.MULTIPROCESS_DIR:
        # lazy: prometheus_client's multiprocess mode reads its directory on import
        from prometheus_client.multiprocess import mark_process_dead

        mark_process_dead(pid or os.getpid(), metrics.MULTIPROCESS_DIR)


@worker_shutdown.connect(weak=False)
def _worker_stopping(**kwargs: Any) -> None:
    server = _Served.server
    if server is not None and _Served.owner == os.getpid():
        server.shutdown()
        server.server_close()
        _Served.server = None
