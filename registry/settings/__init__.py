"""Settings of the registry, every one read from the environment (see docs/configuration.md).

With nothing set the registry runs on SQLite with tasks executed in-process, so that
``make run`` works on a fresh machine. ``DATABASE_URL`` and ``REDIS_URL`` switch it to
PostgreSQL and a Celery worker.

One module a concern, read in this order (a later one may import an earlier one's values, never
the other way round); ``DJANGO_SETTINGS_MODULE`` is this package, ``registry.settings``.
"""

from __future__ import annotations

# In the order they are read: the first bad value stops the process at start-up.
# isort: off
from registry.settings.base import *  # noqa: F403
from registry.settings.security import *  # noqa: F403
from registry.settings.database import *  # noqa: F403
from registry.settings.api import *  # noqa: F403
from registry.settings.cache import *  # noqa: F403
from registry.settings.rate_limits import *  # noqa: F403
from registry.settings.task_queue import *  # noqa: F403
from registry.settings.fetch_policy import *  # noqa: F403
from registry.settings.live import *  # noqa: F403
from registry.settings.crawling import *  # noqa: F403
from registry.settings.search import *  # noqa: F403
from registry.settings.metrics import *  # noqa: F403
from registry.settings.attestations import *  # noqa: F403
from registry.settings.publishing import *  # noqa: F403
from registry.settings.schedule import *  # noqa: F403
from registry.settings.logs import *  # noqa: F403
from registry.settings.accounts import *  # noqa: F403
# isort: on
