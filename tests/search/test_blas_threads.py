"""numpy's BLAS runs on ``REGISTRY_EMBEDDING_THREADS`` threads once the vectors module is loaded
(search/embedding/threads.py): OpenBLAS's own default, a spinning thread per core, cost a
search by meaning twice its CPU. Each case is a fresh interpreter: the limit is per process."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.workers import ROOT

BLAS = """[p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"]"""
# numpy alone, as it would run without the limit.
NUMPY = f"""
import json, numpy
from threadpoolctl import threadpool_info
print(json.dumps({BLAS}))
"""
# A process of the registry's that searches.
REGISTRY = f"""
import json, django
django.setup()
import search.index.vectors  # noqa: F401
from threadpoolctl import threadpool_info
print(json.dumps({BLAS}))
"""


def _blas_threads(probe: str, **env: str) -> list[int]:
    # OpenBLAS's own variable would set the count before the registry does.
    environment = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    environment.update(DJANGO_SETTINGS_MODULE="registry.settings", **env)
    done = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return list(json.loads(done.stdout.strip().splitlines()[-1]))


@pytest.mark.parametrize("threads", [1, 2])
def test_the_vectors_module_limits_numpys_blas_to_the_setting(threads: int) -> None:
    seen = _blas_threads(REGISTRY, REGISTRY_EMBEDDING_THREADS=str(threads))
    assert seen and set(seen) == {threads}


def test_without_the_limit_numpys_blas_takes_every_core() -> None:
    """What the limit changes: numpy on its own starts a BLAS thread per core."""
    cores = len(os.sched_getaffinity(0))
    if cores < 2:
        pytest.skip("one core: OpenBLAS's default is one thread here too")
    assert set(_blas_threads(NUMPY)) == {cores}
