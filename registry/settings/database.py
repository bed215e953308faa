"""The database: SQLite with nothing set, else DATABASE_URL (PostgreSQL: registry.postgresql)."""

from __future__ import annotations

from typing import Any

import dj_database_url

from registry.env import ConfigError, env_bool, env_optional, env_str
from registry.settings.base import BASE_DIR

_database_url = env_optional("DATABASE_URL")
DATABASES: dict[str, dict[str, Any]]
REGISTRY_DB_POOL = env_bool("REGISTRY_DB_POOL", False)
if _database_url is None:
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": env_str("REGISTRY_SQLITE_PATH", str(BASE_DIR / "db.sqlite3")),
        }
    }
else:
    try:
        DATABASES = {"default": dict(dj_database_url.parse(_database_url, conn_max_age=60))}
    except Exception as exc:  # the library raises several types for a bad URL
        raise ConfigError(f"DATABASE_URL is not a usable database URL: {exc}") from None
    # A reused connection is checked at the start of each request, so a restarted database costs
    # no failed request: registry.postgresql polls its socket (no round trip) and sends a
    # `SELECT 1` only when the server has written something; REGISTRY_DB_HEALTH_CHECKS=false
    # skips the check.
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = env_bool("REGISTRY_DB_HEALTH_CHECKS", True)
    if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
        DATABASES["default"]["ENGINE"] = "registry.postgresql"
    # The reads compiled once (registry/compiled.py) run as prepared statements: PostgreSQL plans
    # them once per connection (registry/postgresql/base.py). Off behind a pooler in transaction
    # mode, which does not keep a client's statements.
    DATABASES["default"]["PREPARED"] = env_bool("REGISTRY_DB_PREPARED", True)
    # Under ASGI (registry.asgi: uvicorn, and gunicorn's uvicorn workers) Django runs each
    # request's sync code in a fresh thread, so per-thread persistent connections are never
    # reused; a psycopg connection pool keeps them (docs/benchmarks-protocols.md).
    if REGISTRY_DB_POOL and DATABASES["default"]["ENGINE"].endswith("postgresql"):
        DATABASES["default"]["CONN_MAX_AGE"] = 0
        # A pooled connection is tested as it is handed out (Django passes psycopg_pool's
        # `check=ConnectionPool.check_connection` itself when CONN_HEALTH_CHECKS is on; giving it
        # here too is a TypeError on every query), so connections broken by a database restart
        # are replaced instead of failing a request (docs/security.md; tests/faults/).
        DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {"min_size": 1, "max_size": 8}

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
