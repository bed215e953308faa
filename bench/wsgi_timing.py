"""registry.wsgi.application with server-side timing headers, for the search benchmark.

Adds ``X-Bench-App-Ms`` (time inside Django), ``X-Bench-Db-Ms`` (time in SQL, measured by a
``connection.execute_wrapper``) and ``X-Bench-Queries``. The wrapper costs a few microseconds
per request; it lets the report split latency into queueing, Python and PostgreSQL.

``BENCH_PROPOSAL_GC_FREEZE=N`` measures a proposed change, not the registry as shipped: after
its first N requests a worker runs ``gc.collect()`` then ``gc.freeze()``, so the objects that
live as long as the process (modules, classes, URL resolvers, serializer fields...) are no
longer traversed by every full collection.

``BENCH_PROPOSAL_INDEXES=1`` makes text and tag search use the columns bench/proposals.py adds
to a copy of a seeded database (run it against that copy only).
"""

from __future__ import annotations

import gc
import os
import time
from typing import Any

from django.db import connection

from registry.wsgi import application as _registry_application

if os.environ.get("BENCH_PROPOSAL_INDEXES") == "1":
    from bench import proposals

    proposals.install()

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
