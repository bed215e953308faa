"""`make test` must never stop or restart a service: every fault test is ``disruptive`` and the
README's test command leaves those out (they run under `make test-faults`)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _collect(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *args],
        cwd=ROOT, env=os.environ.copy(), capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def _collected(*args: str) -> list[str]:
    return [line for line in _collect(*args).stdout.splitlines() if "::" in line]


def test_every_fault_test_is_disruptive_and_left_out_of_make_test() -> None:
    """One collection (a pytest start is most of this test's time): tests/faults without the
    disruptive tests leaves none, and leaves some out; an empty folder or a collection error
    would leave none out."""
    done = _collect("-m", "not disruptive", "tests/faults")
    assert [line for line in done.stdout.splitlines() if "::" in line] == [], done.stdout
    deselected = re.search(r"\((\d+) deselected\)", done.stdout)
    assert deselected is not None and int(deselected.group(1)) > 0, done.stdout + done.stderr
    assert done.returncode == 5, done.stdout + done.stderr  # no tests collected, no errors


def _target(makefile: str, name: str) -> str:
    found = re.search(rf"^{re.escape(name)}:.*?(?=^\S|\Z)", makefile, re.S | re.M)
    assert found is not None, f"the Makefile has no {name} target"
    return found.group(0)


def test_the_make_targets_split_the_suite() -> None:
    """`make test` and `make test-slow` run every test that is not disruptive, each once (the
    two marker expressions cover them and do not overlap), `make test-faults` the fault tests;
    CI runs the three."""
    makefile = (ROOT / "Makefile").read_text()
    assert '-m "not disruptive and not slow"' in _target(makefile, "test")
    assert '-m "slow and not disruptive"' in _target(makefile, "test-slow")
    assert "-m disruptive tests/faults" in _target(makefile, "test-faults")
    assert "make test\nmake test-slow\nmake test-faults" in (ROOT / ".ci" / "run").read_text()


def test_every_multihost_test_is_disruptive_and_run_by_its_own_target() -> None:
    """tests/multihost pulls hosts off a private network: never under `make test`, always under
    `make test-multihost`, which CI runs after the fault tests."""
    multihost = _collected("tests/multihost")
    assert multihost, "tests/multihost has no tests"
    assert _collected("-m", "not disruptive", "tests/multihost") == []
    makefile = (ROOT / "Makefile").read_text()
    assert "-m disruptive tests/multihost" in _target(makefile, "test-multihost")
    assert "make test-faults\nmake test-multihost" in (ROOT / ".ci" / "run").read_text()
