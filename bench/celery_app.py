"""The registry's Celery app, on a queue of the benchmark's own (BENCH_CELERY_QUEUE).

Redis may be shared with other workers (tests, other checkouts); a private default queue keeps
them from taking the benchmark's tasks and the benchmark's worker from taking theirs. Tasks
re-queued by the crawler itself (politeness deferrals, retries) follow the default queue too.

``BENCH_PROPOSAL_DB_REUSE=1`` keeps the worker's database connection across tasks (Celery 5.7's
Django fixup closes it after every task unless CELERY_DB_REUSE_MAX is set) and checks it before
each task the way Django does between requests (``close_old_connections``). This was measured
as a proposal; registry/celery.py does the same since commit 5b0dc56, so on later checkouts the
flag changes nothing.
"""

from __future__ import annotations

import os

from registry.celery import app

_queue = os.environ.get("BENCH_CELERY_QUEUE")
if _queue:
    app.conf.task_default_queue = _queue

if os.environ.get("BENCH_PROPOSAL_DB_REUSE") == "1":
    from celery.signals import task_prerun
    from django.db import close_old_connections

    app.conf.update(CELERY_DB_REUSE_MAX=1_000_000)

    @task_prerun.connect(weak=False)
    def _check_connections(**kwargs: object) -> None:
        close_old_connections()


__all__ = ["app"]
