"""`make run`'s commands as the Makefile writes them (``make -n``), and its environment, for the
tests that start the registry as `make run` does (tests/test_make_run.py, the docs examples'
server through tests/support.make_run_environment)."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_commands(port: int | None = None) -> list[str]:
    """The shell lines `make run` would run (``PORT=port`` when given), its install step left
    out (``-o`` the runtime's stamp: this venv is installed)."""
    venv = Path(sys.prefix)
    args = ["make", "--no-print-directory", "-n", "-o", str(venv / ".installed"), "run"]
    args += [f"VENV={venv}", f"PY={sys.executable}"]
    if port is not None:
        args.append(f"PORT={port}")
    env = {k: v for k, v in os.environ.items() if k not in ("PORT", "MAKEFLAGS", "MAKELEVEL")}
    done = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    text = re.sub(r"\\\n\s*", "", done.stdout)  # a line continued with a backslash is one
    return [line for line in text.splitlines() if "manage.py" in line or "uvicorn" in line]


def environment_of(line: str) -> tuple[list[str], dict[str, str]]:
    """A line's ``env -u NAME ... NAME=value`` prefix: the names it unsets, the values it sets."""
    words = shlex.split(line)
    assert words[0] == "env", line
    unset: list[str] = []
    values: dict[str, str] = {}
    index = 1
    while index < len(words):
        word = words[index]
        if word == "-u":
            unset.append(words[index + 1])
            index += 2
        elif re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", word):
            name, _, value = word.partition("=")
            values[name] = value
            index += 1
        else:
            break
    return unset, values


def run_environment() -> dict[str, str]:
    """The variables `make run` sets for the registry (its uvicorn line's)."""
    server = next(line for line in run_commands() if "uvicorn" in line)
    return environment_of(server)[1]
