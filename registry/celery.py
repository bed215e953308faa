"""The Celery application; configuration comes from Django settings (CELERY_* names)."""

from __future__ import annotations

import os
from typing import Any

from celery import Celery
from celery.signals import task_prerun
from django.db import close_old_connections

import registry.metrics_worker  # noqa: F401 - connects the worker's metrics signals
from registry.heartbeat_celery import install as install_heartbeats
from registry.logs import task_signals
from registry.redis_broker_close import install as keep_workers_through_broker_loss

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "registry.settings")

app = Celery("registry")
app.config_from_object("django.conf:settings", namespace="CELERY")
# Celery's Django fixup closes the database connection after every task unless this is set;
# a new connection per crawl costs more than the crawl's own queries. Keep it, and check it
# before each task the way Django does between requests (below).
app.conf.update(CELERY_DB_REUSE_MAX=1_000_000)
app.autodiscover_tasks()
# The worker and the beat write heartbeats an orchestrator checks (registry/heartbeat.py).
install_heartbeats(app)
# The web request's id goes along with the tasks it queues; each task's lines say which
# (registry/logs/task_signals.py).
task_signals.connect()
# A worker that loses Redis with a message unacknowledged keeps running (kombu's cleanup crashed
# it: registry/redis_broker_close.py).
keep_workers_through_broker_loss()


@task_prerun.connect(weak=False)
def _check_database_connections(task: Any = None, **kwargs: Any) -> None:
    """Drop a connection that is too old or broken (a PostgreSQL restart) before a task runs.

    Not for a task run in-process (eager): it shares the caller's connection and transaction.
    """
    if task is not None and getattr(task.request, "is_eager", False):
        return
    close_old_connections()
