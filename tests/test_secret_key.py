"""The secret key: nothing starts without a real one unless debug is explicitly on.

Each case runs `manage.py` in a fresh process with a controlled environment, as a user would.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]


def manage(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("DATABASE_URL", "REDIS_URL", "CELERY_", "DJANGO_", "REGISTRY_"))
    }
    clean.update({"REGISTRY_SQLITE_PATH": str(tmp_path / "db.sqlite3"), **env})
    return subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), *args],
        env=clean,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def assert_refused(done: subprocess.CompletedProcess[str], words: str) -> None:
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr  # one line saying what to do, no traceback
    assert lines[0].startswith("error: DJANGO_SECRET_KEY") and words in lines[0]
    assert "DJANGO_DEBUG=true" in lines[0] and "secrets.token_urlsafe" in lines[0]


def test_without_a_key_or_debug_nothing_starts(tmp_path: Path) -> None:
    assert_refused(manage(tmp_path, "check"), "is not set")


@pytest.mark.parametrize(
    "key", ["change-me-in-production", "CHANGEME", "django-insecure-abc123", "secret"]
)
def test_a_published_placeholder_key_is_refused(tmp_path: Path, key: str) -> None:
    assert_refused(manage(tmp_path, "check", DJANGO_SECRET_KEY=key), "placeholder")


def test_debug_on_runs_with_the_development_key_and_a_real_key_runs(tmp_path: Path) -> None:
    debug = manage(tmp_path, "check", DJANGO_DEBUG="true")
    assert debug.returncode == 0, debug.stderr
    real = manage(tmp_path, "check", DJANGO_SECRET_KEY="k3Vq-0a9Zx_long-random-value-for-tests")
    assert real.returncode == 0, real.stderr


def test_issue_token_with_a_database_url_but_no_key_says_what_to_do_in_one_line(
    tmp_path: Path,
) -> None:
    done = manage(
        tmp_path,
        "issue_token",
        "me",
        DATABASE_URL="postgres://postgres@127.0.0.1:5432/registry_never_used",
    )
    assert_refused(done, "is not set")
    assert done.stdout == ""


def test_compose_requires_a_key_and_every_make_command_passes_one() -> None:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    value = compose["x-app"]["environment"]["DJANGO_SECRET_KEY"]
    assert value.startswith("${DJANGO_SECRET_KEY:?"), value  # no default: compose refuses
    assert "change-me" not in (ROOT / "docker-compose.yml").read_text()
    for line in (ROOT / "Makefile").read_text().replace("\\\n", " ").splitlines():
        if re.search(r"manage\.py|-m pytest|-m uvicorn|/mypy", line):
            assert "DJANGO_DEBUG=true" in line or "DJANGO_SECRET_KEY=" in line, line


def test_issue_token_without_a_usable_database_says_so_in_one_line(tmp_path: Path) -> None:
    done = manage(
        tmp_path,
        "issue_token",
        "me",
        DJANGO_SECRET_KEY="k3Vq-0a9Zx_long-random-value-for-tests",
        DATABASE_URL="postgres://postgres@127.0.0.1:1/registry_never_used",
    )
    assert done.returncode == 1 and done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "the database is not usable" in lines[0], done.stderr
    assert "DATABASE_URL" in lines[0]
