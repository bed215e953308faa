from __future__ import annotations

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "registry.settings")
django_application = get_wsgi_application()

from registry import hot_reads, request_cycle  # noqa: E402 - needs Django set up

application = hot_reads.wrap(django_application)

request_cycle.trim()
