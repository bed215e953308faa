"""registry.wsgi.application with server-side timing headers, for the search benchmark.

Adds ``X-Bench-App-Ms`` (time inside Django), ``X-Bench-Db-Ms`` (time in SQL, measured by a
``connection.execute_wrapper``) and ``X-Bench-Queries``. The wrapper costs a few microseconds
per request; it lets the report split latency into queueing, Python and PostgreSQL.
"""

from __future__ import annotations

import time
from typing import Any

from django.db import connection

from registry.wsgi import application as _registry_application


def application(environ: dict[str, Any], start_response: Any) -> Any:
    db = [0.0, 0]

    def timed(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        started = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            db[0] += time.perf_counter() - started
            db[1] += 1

    started = time.perf_counter()

    def start(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
        headers.append(("X-Bench-App-Ms", f"{(time.perf_counter() - started) * 1000:.3f}"))
        headers.append(("X-Bench-Db-Ms", f"{db[0] * 1000:.3f}"))
        headers.append(("X-Bench-Queries", str(db[1])))
        return start_response(status, headers, exc_info)

    with connection.execute_wrapper(timed):
        return _registry_application(environ, start)
