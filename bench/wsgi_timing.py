"""registry.wsgi.application with server-side timing headers, for the search benchmark.

Adds ``X-Bench-App-Ms`` (time inside Django), ``X-Bench-Db-Ms`` (time in SQL, measured by a
``connection.execute_wrapper``) and ``X-Bench-Queries``. The wrapper costs a few microseconds
per request; it lets the report split latency into queueing, Python and PostgreSQL.

``BENCH_PROPOSAL_GC_FREEZE=N``: after its first N requests a worker runs ``gc.collect()`` then
``gc.freeze()``, as gunicorn.conf.py does after its warm-up request (for servers started
without that file).
"""

from __future__ import annotations

import gc
import os
import time
from typing import Any

from django.db import connection

from registry.wsgi import application as _registry_application

_FREEZE_AFTER = int(os.environ.get("BENCH_PROPOSAL_GC_FREEZE") or 0)
_served = [0]


def application(environ: dict[str, Any], start_response: Any) -> Any:
    _served[0] += 1
    if _FREEZE_AFTER and _served[0] == _FREEZE_AFTER:
        gc.collect()
        gc.freeze()
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
