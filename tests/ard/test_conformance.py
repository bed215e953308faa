"""The official ARD conformance tester (ards-project/ard-spec, conformance/) against a live
registry. The tester is not part of this project: point ARD_CONFORMANCE_REPO at a checkout (or
the bare git directory `fetch` leaves under /work/.mirror) to run it; without one the test skips
and tests/ard/test_api.py still checks the same contract."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CANDIDATES = [
    os.environ.get("ARD_CONFORMANCE_REPO", ""),
    "/work/.mirror/ards-project+ard-spec/repo",
]
FILES = ("conformance/bin/conformance-test", "spec/schemas/ai-catalog.schema.json")


def _extract(repo: Path, into: Path) -> Path | None:
    """The tester and the schema it reads, from a work tree or a bare git directory."""
    for name in FILES:
        target = into / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if (repo / name).exists():
            target.write_bytes((repo / name).read_bytes())
            continue
        shown = subprocess.run(
            ["git", "--git-dir", str(repo), "show", f"HEAD:{name}"],
            capture_output=True,
            check=False,
        )
        if shown.returncode != 0:
            return None
        target.write_bytes(shown.stdout)
    return into / FILES[0]


@pytest.fixture
def tester(tmp_path: Path) -> Iterator[Path]:
    for candidate in filter(None, CANDIDATES):
        if Path(candidate).exists():
            found = _extract(Path(candidate), tmp_path)
            if found is not None:
                yield found
                return
    pytest.skip("the ARD conformance tester is not here: set ARD_CONFORMANCE_REPO to a checkout")


def _run(tester: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(tester), *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.django_db(transaction=True)
def test_registry_mode_passes_with_zero_failures(tester: Path, live_server: Any, demo: Any) -> None:
    run = _run(tester, "registry", f"{live_server.url}/ard")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "✗" not in run.stdout


@pytest.mark.django_db(transaction=True)
def test_own_manifest_passes_manifest_mode(tester: Path, live_server: Any) -> None:
    run = _run(tester, "manifest", f"{live_server.url}/.well-known/ard.json")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "✗" not in run.stdout
