"""The production server command (gunicorn -c gunicorn.conf.py registry.wsgi) on a free port:
slow clients cannot starve it, a 413 closes its connection, the warm-up is not refused."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from registry.serving import request_is_complete
from tests.support import free_port

ROOT = Path(__file__).resolve().parents[1]


def _get(port: int, path: str = "/healthz", timeout: float = 2.0) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(
            f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode()
        )
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
        return answer


@pytest.fixture(scope="module")
def gunicorn(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, Path]]:
    """``gunicorn -c gunicorn.conf.py registry.wsgi:application`` as compose runs it (2 workers,
    4 threads), on SQLite: /healthz needs no database."""
    port = free_port()
    directory = tmp_path_factory.mktemp("gunicorn")
    log = directory / "gunicorn.log"
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL", "DJANGO_DEBUG")
    }
    env.update(
        GUNICORN_BIND=f"127.0.0.1:{port}",
        ALLOWED_HOSTS="127.0.0.1,localhost",
        DJANGO_SECRET_KEY="serving-test-" + "x" * 40,
        REGISTRY_SQLITE_PATH=str(directory / "db.sqlite3"),
        REGISTRY_ANON_RATE="off",
    )
    with log.open("wb") as out:
        server = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py",
             "registry.wsgi:application"],
            cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        booted = 0
        while booted < 2:  # both workers warmed up and serving
            assert server.poll() is None, log.read_text()
            assert time.monotonic() < deadline, log.read_text()
            booted = log.read_text().count("Booting worker")
            time.sleep(0.2)
        while True:
            try:
                if _get(port).startswith(b"HTTP/1.1 200"):
                    break
            except OSError:
                pass
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
        time.sleep(1.0)  # the second worker's warm-up
        yield port, log
    finally:
        server.terminate()
        try:
            server.wait(15)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(5)


@pytest.mark.parametrize("slow_clients", [8, 24])
def test_slow_clients_do_not_starve_fresh_requests(
    gunicorn: tuple[int, Path], slow_clients: int
) -> None:
    port, _ = gunicorn
    slow = []
    try:
        for _ in range(slow_clients):
            sock = socket.create_connection(("127.0.0.1", port), timeout=5)
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: slo")
            slow.append(sock)
        time.sleep(0.5)
        for _ in range(6):
            started = time.monotonic()
            assert _get(port, timeout=2.0).startswith(b"HTTP/1.1 200")
            assert time.monotonic() - started < 2.0
        # A slow client that finishes its request is answered.
        slow[0].sendall(b"w\r\nConnection: close\r\n\r\n")
        assert slow[0].recv(100).startswith(b"HTTP/1.1 200")
    finally:
        for sock in slow:
            sock.close()


def test_a_slow_body_does_not_hold_a_thread(gunicorn: tuple[int, Path]) -> None:
    port, _ = gunicorn
    slow = []
    try:
        for _ in range(10):
            sock = socket.create_connection(("127.0.0.1", port), timeout=5)
            sock.sendall(
                b"POST /api/v1/validate HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                b'Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"card":'
            )
            slow.append(sock)
        time.sleep(0.5)
        for _ in range(4):
            assert _get(port, timeout=2.0).startswith(b"HTTP/1.1 200")
    finally:
        for sock in slow:
            sock.close()


def test_an_early_413_closes_the_connection(gunicorn: tuple[int, Path]) -> None:
    port, _ = gunicorn
    body = b'{"card": "' + b"a" * (3 * 1024 * 1024) + b'"}'
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(
            b"POST /api/v1/validate HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Content-Type: application/json\r\n"
            + f"Content-Length: {len(body)}\r\n\r\n".encode()
            + body
            + b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
        )
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    head = answer.split(b"\r\n\r\n", 1)[0].lower()
    assert head.startswith(b"http/1.1 413")
    assert b"connection: close" in head
    # The connection was closed after the 413: nothing else was answered on it.
    assert answer.count(b"HTTP/1.1 ") == 1


def test_the_warm_up_request_is_not_refused(gunicorn: tuple[int, Path]) -> None:
    _, log = gunicorn
    text = log.read_text()
    assert "DisallowedHost" not in text and "Invalid HTTP_HOST" not in text, text
    assert "warm-up" not in text, text


@pytest.mark.parametrize(
    ("buffer", "complete"),
    [
        (b"GET / HTTP/1.1\r\nHost: a\r\n", False),
        (b"GET / HTTP/1.1\r\nHost: a\r\n\r\n", True),
        (b"POST / HTTP/1.1\r\nContent-Length: 4\r\n\r\nab", False),
        (b"POST / HTTP/1.1\r\ncontent-length:4\r\n\r\nabcd", True),
        (b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", True),
        (b"POST / HTTP/1.1\r\nContent-Length: 99999999\r\n\r\n", True),
        (b"POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", True),
        (b"GET / HTTP/1.1\r\nX: " + b"a" * 70000, True),
    ],
)
def test_when_a_request_is_complete(buffer: bytes, complete: bool) -> None:
    assert request_is_complete(buffer) is complete


def _compose_environment() -> dict[str, str]:
    """The environment docker-compose.yml gives the web service, its ${VAR:-default}s resolved."""
    import re

    import yaml

    document = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    environment = document["services"]["web"]["environment"]
    return {
        name: re.sub(r"\$\{[A-Z_]+:-([^}]*)\}", r"\1", str(value))
        for name, value in environment.items()
    }


def test_check_deploy_passes_on_the_https_settings_of_compose(tmp_path: Path) -> None:
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("DATABASE_URL", "REDIS_URL", "DJANGO_DEBUG")
    }
    env.update(_compose_environment())
    # Compose's database and Redis host names do not resolve here; `check` needs neither.
    env.pop("DATABASE_URL")
    env.pop("REDIS_URL")
    env["DJANGO_SECRET_KEY"] = "deploy-check-" + "k7Qz" * 16
    env["REGISTRY_SQLITE_PATH"] = str(tmp_path / "db.sqlite3")
    done = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    output = done.stdout + done.stderr
    for warning in ("security.W004", "security.W008", "security.W012", "security.W016"):
        assert warning not in output, output
    # Without those settings (the defaults, for plain-HTTP development) Django says so.
    for name in [name for name in env if name.startswith(("REGISTRY_SSL", "REGISTRY_HSTS"))]:
        env.pop(name)
    env.pop("REGISTRY_SECURE_COOKIES")
    plain = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert "security.W004" in plain.stdout + plain.stderr
