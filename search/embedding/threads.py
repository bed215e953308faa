"""How many threads numpy's matrix products use in a process: ``REGISTRY_EMBEDDING_THREADS``.

numpy's wheels carry OpenBLAS, which runs each matrix product on a thread per core and keeps the
threads spinning a while after it, waiting for the next product. A search by meaning multiplies
the query by every vector a node holds outside its snapshot's graph (search/index/:
all of them before the node's first snapshot, the rows written since the last one after): with
two threads on the 2-core machine such a search cost twice its CPU (22 against 11 ms in-process
at 10,000 agents; 16 to 20 against 7 to 11 ms a request under load, docs/benchmarks.md
"Requests per web core, by door") for no shorter answer under load, where the requests
themselves fill the cores. With the graph it changes little. The
limit is threadpoolctl's (it finds the BLAS numpy loaded and calls its own setter), set once per
process; a fork (Celery's prefork children) keeps it.
"""

from __future__ import annotations

from django.conf import settings
from threadpoolctl import threadpool_limits

_set: list[int] = []


def limit_blas() -> None:
    """Limit numpy's BLAS to ``REGISTRY_EMBEDDING_THREADS`` threads in this process (once)."""
    limit = int(settings.REGISTRY_EMBEDDING_THREADS)
    if _set == [limit]:
        return
    threadpool_limits(limits=limit, user_api="blas")
    _set[:] = [limit]
