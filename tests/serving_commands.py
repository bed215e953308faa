"""The commands the image and compose serve the registry with, read from the Dockerfile and
docker-compose.yml, so the tests start the servers with the very flags production uses."""

from __future__ import annotations

import json
import os
import re
import shlex
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def dockerfile_command() -> list[str]:
    """The Dockerfile's ``CMD``, as a list of arguments."""
    text = (ROOT / "Dockerfile").read_text().replace("\\\n", " ")
    match = re.search(r"^CMD\s+(\[.*\])\s*$", text, re.MULTILINE)
    assert match is not None, "the Dockerfile has no CMD in the exec form"
    command = json.loads(match.group(1))
    assert isinstance(command, list)
    return [str(word) for word in command]


def compose_command(service: str) -> list[str]:
    """The server command of a compose service: the last command of its ``sh -c`` script, its
    ``exec`` and variable assignments left out."""
    import yaml

    document: dict[str, Any] = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    words = shlex.split(document["services"][service]["command"])
    if words[:2] == ["sh", "-c"]:
        words = shlex.split(words[2].split("&&")[-1])
    while words and (words[0] == "exec" or re.fullmatch(r"[A-Z_]+=\S*", words[0])):
        words.pop(0)
    return words


def with_options(command: list[str], **options: str) -> list[str]:
    """``command`` with the value of each ``--option`` replaced (``http1_header_read_timeout``
    is ``--http1-header-read-timeout``); an option the command lacks is left out, so a test of a
    bound the command does not set runs with the server's default."""
    words = list(command)
    for name, value in options.items():
        flag = "--" + name.replace("_", "-")
        if flag in words:
            words[words.index(flag) + 1] = value
    return words


def granian_command(port: int, **options: str) -> list[str]:
    """The Dockerfile's granian command on ``127.0.0.1:port`` from this environment."""
    command = with_options(dockerfile_command(), host="127.0.0.1", port=str(port), **options)
    assert command[0] == "granian", command
    return [str(BIN / "granian"), *command[1:]]


def protocols_command(port: int) -> list[str]:
    """compose's protocols command (gunicorn, uvicorn workers) on ``127.0.0.1:port``."""
    command = with_options(compose_command("protocols"), bind=f"127.0.0.1:{port}")
    assert command[0] == "gunicorn", command
    return [sys.executable, "-m", "gunicorn", *command[1:]]


def server_environment(directory: Path, **extra: str) -> dict[str, str]:
    """A server's environment on SQLite in ``directory`` (``/healthz`` and the refusals under
    test need no PostgreSQL), with no anonymous limit."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL", "DJANGO_DEBUG")
    }
    env.update(
        ALLOWED_HOSTS="127.0.0.1,localhost",
        DJANGO_SECRET_KEY="serving-test-" + "x" * 40,
        REGISTRY_SQLITE_PATH=str(directory / "db.sqlite3"),
        REGISTRY_ANON_RATE="off",
    )
    env.update(extra)
    return env


def get(port: int, path: str = "/healthz", timeout: float = 2.0) -> bytes:
    """One ``GET`` on a connection of its own; the whole answer."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(
            f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode()
        )
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
        return answer


@contextmanager
def running(
    command: list[str], env: dict[str, str], log: Path, *, port: int, booting: str, workers: int = 2
) -> Iterator[subprocess.Popen[bytes]]:
    """``command`` started, its ``workers`` booted (``booting`` counted in its log) and
    ``/healthz`` answered on ``port``; stopped at the end."""
    with log.open("wb") as out:
        process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while log.read_text().count(booting) < workers:  # every worker warmed up and serving
            assert process.poll() is None, log.read_text()
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
        while True:
            try:
                if get(port).startswith(b"HTTP/1.1 200"):
                    break
            except OSError:
                pass
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
        time.sleep(1.0)  # the last worker's warm-up
        yield process
    finally:
        process.terminate()
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)
