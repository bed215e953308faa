"""Celery: the broker, in-process tasks without one, time limits, redelivery and priorities.

The beat's schedule is in registry/settings/schedule.py.
"""

from __future__ import annotations

from registry.env import env_bool, env_int, env_optional

REDIS_URL = env_optional("REDIS_URL")
CELERY_BROKER_URL = env_optional("CELERY_BROKER_URL") or REDIS_URL
# Without a broker, tasks run in-process: the no-configuration mode of `make run`.
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", CELERY_BROKER_URL is None)
CELERY_TASK_EAGER_PROPAGATES = False
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SOFT_TIME_LIMIT = env_int("REGISTRY_TASK_SOFT_TIME_LIMIT", 60, minimum=1)
CELERY_TASK_TIME_LIMIT = env_int("REGISTRY_TASK_TIME_LIMIT", 90, minimum=1)
CELERY_TASK_IGNORE_RESULT = True
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# A worker rides out Redis outages of any length: it reconnects forever (the default gives up
# after 100 tries and exits), and tasks running when the connection drops are cancelled and
# redelivered (acks_late) rather than acknowledged on a dead connection. compose restarts a worker
# that exits anyway (restart: unless-stopped; docs/security.md, "Serving and outages").
CELERY_BROKER_CONNECTION_RETRY = True
CELERY_BROKER_CONNECTION_MAX_RETRIES = None
CELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS = True
# A submission must not hang when the broker is down: fail fast and let the sweep pick it up.
# Priorities on the Redis broker (kombu keeps one list per step and reads them in order): a crawl
# someone asked for (submission, owner's re-crawl) runs ahead of the periodic sweep's.
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "max_retries": 1,
    "interval_start": 0,
    "interval_step": 0.2,
    "priority_steps": list(range(10)),
    "sep": ":",
    "queue_order_strategy": "priority",
}
CELERY_TASK_DEFAULT_PRIORITY = 5
