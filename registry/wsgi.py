from __future__ import annotations

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "registry.settings")
application = get_wsgi_application()

from registry import request_cycle  # noqa: E402 - needs Django set up

request_cycle.trim()
