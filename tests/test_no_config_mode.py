"""The first README command must keep working: SQLite, in-process tasks, demo agents, port 8000.

Runs the same steps as `make run` in a subprocess with nothing configured (a free port instead
of 8000 so a running registry does not collide), then searches the demo agents over HTTP.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_the_registry_runs_with_nothing_configured(tmp_path: Path) -> None:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("DATABASE_URL", "REDIS_URL", "CELERY_", "DJANGO_", "REGISTRY_"))
    }
    env.update(
        {
            "REGISTRY_SQLITE_PATH": str(tmp_path / "db.sqlite3"),
            "DJANGO_DEBUG": "true",
            "DJANGO_SETTINGS_MODULE": "registry.settings",
        }
    )
    manage = [sys.executable, str(ROOT / "manage.py")]
    subprocess.run(
        [*manage, "migrate", "--noinput"], env=env, cwd=ROOT, check=True, capture_output=True
    )
    loaded = subprocess.run(
        [*manage, "load_demo"], env=env, cwd=ROOT, check=True, capture_output=True
    )
    assert loaded.stdout.count(b"stored") >= 4
    port = free_port()
    server = subprocess.Popen(
        [*manage, "runserver", f"127.0.0.1:{port}", "--noreload"],
        env=env,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        body = None
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(
                    f"http://127.0.0.1:{port}/api/v1/agents?tag=translation", timeout=2
                ) as r:
                    body = json.load(r)
                break
            except OSError:
                time.sleep(0.3)
        assert body is not None, "runserver did not answer"
        assert [row["name"] for row in body["results"]] == ["Polyglot Translator"]
        with urllib.request.urlopen(
            f"http://127.0.0.1:{port}/api/v1/agents?input_mode=application/json;schema=fightComparison",
            timeout=5,
        ) as r:
            assert [row["name"] for row in json.load(r)["results"]] == ["Fight Club Oracle"]
    finally:
        server.terminate()
        server.wait(timeout=10)
