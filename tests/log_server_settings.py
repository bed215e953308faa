"""Settings of the web servers started by tests/test_request_ids.py: the registry's own, with
the URLconf of tests/log_server.py (imported once Django's apps are ready)."""

from __future__ import annotations

from registry.settings import *  # noqa: F403 - the registry's settings, one changed below

ROOT_URLCONF = "tests.log_server"
