"""`make test` must never stop or restart a service: every fault test is ``disruptive`` and the
README's test command leaves those out (they run under `make test-faults`)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _collected(*args: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *args],
        cwd=ROOT, env=os.environ.copy(), capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    return [line for line in done.stdout.splitlines() if "::" in line]


def test_every_fault_test_is_disruptive_and_left_out_of_make_test() -> None:
    faults = _collected("tests/faults")
    assert faults, "tests/faults has no tests"
    assert _collected("-m", "not disruptive", "tests/faults") == []
    assert sorted(_collected("-m", "disruptive", "tests/faults")) == sorted(faults)


def test_the_make_targets_split_the_suite() -> None:
    makefile = (ROOT / "Makefile").read_text()
    test = re.search(r"^test:.*?(?=^\S)", makefile, re.S | re.M)
    faults = re.search(r"^test-faults:.*?(?=^\S|\Z)", makefile, re.S | re.M)
    assert test is not None and '-m "not disruptive"' in test.group(0)
    assert faults is not None and "-m disruptive tests/faults" in faults.group(0)
    assert "make test\nmake test-faults" in (ROOT / ".ci" / "run").read_text()
