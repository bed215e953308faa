"""ASGI entry point: Django for every path, and the MCP server (protocols app) at /mcp.

Served by uvicorn (``make run``; gunicorn with uvicorn workers in docker compose; the tests).
See docs/orchestrators.md ("Serving") and docs/benchmarks-protocols.md for the measured cost of
plain Django views under this handler.
"""

from __future__ import annotations

import os
import warnings
from typing import Any, cast

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "registry.settings")
django_application = get_asgi_application()

from registry import request_cycle  # noqa: E402 - needs Django set up

request_cycle.trim()

# The MCP SDK's settings model warns about its own field at import: noise in every start's log.
warnings.filterwarnings("ignore", message="Field 'lifespan' has an incomplete definition")

from protocols.asgi_app import registry_application  # noqa: E402 - needs Django set up
from protocols.mcp_http import METHODS  # noqa: E402
from protocols.mcp_server import make_app  # noqa: E402
from registry.schedule_in_process import with_schedule  # noqa: E402

# Django's handler takes Mapping messages; the dispatcher is typed with dicts: the same calls.
# With nothing configured (`make run`), the server also runs the periodic schedule.
application = with_schedule(registry_application(cast(Any, django_application), make_app, METHODS))
