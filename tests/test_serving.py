"""The web service's server commands on a free port: slow clients cannot starve them, a 413
closes its connection, the warm-up is not refused.

Two commands serve ``registry.wsgi``'s application: the production one (Dockerfile, compose's
web service), ``granian --interface rsgi registry.rsgi:application`` (HTTP in Rust, each
request read in full before a thread runs it), and ``gunicorn -c gunicorn.conf.py
registry.wsgi:application`` (registry.serving.BufferedThreadWorker), kept as the measured
comparison and a fallback, not for public traffic (docs/configuration.md, "Serving"). Every
check runs against both. The bounds on slow and idle clients: tests/test_slow_clients.py."""

from __future__ import annotations

import asyncio
import os
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from io import BytesIO
from pathlib import Path
from typing import Any

import pytest

from registry.rsgi import BufferedWSGI, Threads, wsgi_environ
from registry.serving import request_is_complete
from tests.serving_commands import get, granian_command, running, server_environment
from tests.support import free_port

ROOT = Path(__file__).resolve().parents[1]


def server_command(server: str, port: int) -> list[str]:
    if server == "granian":  # the Dockerfile's CMD (compose's web command), on another port
        return granian_command(port)
    return [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py",
            "registry.wsgi:application"]  # fmt: skip


@pytest.fixture(scope="module", params=["granian", "gunicorn"])
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[int, Path]]:
    """The server as compose runs it (2 workers, 4 threads each), on SQLite: /healthz needs no
    database."""
    port = free_port()
    directory = tmp_path_factory.mktemp(request.param)
    log = directory / "server.log"
    env = server_environment(directory, GUNICORN_BIND=f"127.0.0.1:{port}")
    booting = "Started worker" if request.param == "granian" else "Booting worker"
    with running(server_command(request.param, port), env, log, port=port, booting=booting):
        yield port, log


@pytest.mark.parametrize("slow_clients", [8, 24])
def test_slow_clients_do_not_starve_fresh_requests(
    server: tuple[int, Path], slow_clients: int
) -> None:
    port, _ = server
    slow = []
    try:
        for _ in range(slow_clients):
            sock = socket.create_connection(("127.0.0.1", port), timeout=5)
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: slo")
            slow.append(sock)
        time.sleep(0.5)
        for _ in range(6):
            started = time.monotonic()
            assert get(port, timeout=2.0).startswith(b"HTTP/1.1 200")
            assert time.monotonic() - started < 2.0
        # A slow client that finishes its request is answered.
        slow[0].sendall(b"w\r\nConnection: close\r\n\r\n")
        assert slow[0].recv(100).startswith(b"HTTP/1.1 200")
    finally:
        for sock in slow:
            sock.close()


def test_a_slow_body_does_not_hold_a_thread(server: tuple[int, Path]) -> None:
    port, _ = server
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
            assert get(port, timeout=2.0).startswith(b"HTTP/1.1 200")
    finally:
        for sock in slow:
            sock.close()


def test_an_early_413_closes_the_connection(server: tuple[int, Path]) -> None:
    port, _ = server
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


def test_the_warm_up_request_is_not_refused(server: tuple[int, Path]) -> None:
    _, log = server
    text = log.read_text()
    assert "DisallowedHost" not in text and "Invalid HTTP_HOST" not in text, text
    assert "warm-up" not in text, text


def test_granian_runs_each_worker_on_uvloop(
    server: tuple[int, Path], request: pytest.FixtureRequest
) -> None:
    """uvloop is in the runtime requirements and granian's ``--loop auto`` takes it (about 10%
    less CPU a request than asyncio's loop; docs/benchmarks.md, "Serving")."""
    if request.node.callspec.params["server"] != "granian":
        pytest.skip("gunicorn's workers run no event loop of granian's")
    _, log = server
    text = log.read_text()
    assert text.count("web worker ready: 4 threads, event loop uvloop.Loop") == 2, text


def test_head_has_no_body_and_keep_alive_goes_on(server: tuple[int, Path]) -> None:
    port, _ = server
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(
            b"HEAD /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
            b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
        )
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    head, rest = answer.split(b"\r\n\r\n", 1)
    assert head.startswith(b"HTTP/1.1 200")
    assert rest.startswith(b"HTTP/1.1 200")


def test_a_chunked_body_over_the_limit_is_refused_and_closed(server: tuple[int, Path]) -> None:
    port, _ = server
    chunk = b"a" * (1024 * 1024)
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(
            b"POST /api/v1/validate HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
        )
        try:
            for _ in range(6):
                sock.sendall(b"%x\r\n" % len(chunk) + chunk + b"\r\n")
            sock.sendall(b"0\r\n\r\n")
        except OSError:  # the server answered and closed before the end: as it should
            pass
        answer = b""
        try:
            while data := sock.recv(65536):
                answer += data
        except OSError:
            pass
    assert answer.startswith(b"HTTP/1.1 413") or answer.startswith(b"HTTP/1.1 400"), answer[:200]
    assert answer.count(b"HTTP/1.1 ") == 1


@dataclass
class _Scope:
    """An RSGI request scope as granian gives it (attributes, headers with items() and get())."""

    headers_list: list[tuple[str, str]]
    path: str = "/api/v1/agents"
    query_string: str = ""
    method: str = "GET"
    server: str = "127.0.0.1:8000"
    client: str = "10.0.0.7:51234"
    scheme: str = "http"
    http_version: str = "1.1"
    proto: str = "http"

    @property
    def headers(self) -> Any:
        pairs = self.headers_list

        class Headers:
            def items(self) -> list[tuple[str, str]]:
                return pairs

            def get(self, key: str, default: Any = None) -> Any:
                return next((v for k, v in pairs if k == key), default)

            def __contains__(self, key: str) -> bool:
                return any(k == key for k, _ in pairs)

        return Headers()


def test_the_wsgi_environ_of_an_rsgi_request() -> None:
    scope = _Scope(
        [
            ("host", "registry.example"),
            ("content-type", "application/json"),
            ("content-length", "2"),
            ("cookie", "a=1"),
            ("cookie", "b=2"),
            ("x-forwarded-for", "1.2.3.4"),
            ("x_forwarded_for", "6.6.6.6"),
            ("accept", "text/html"),
            ("accept", "application/json"),
        ],
        path="/agents/é b",
        query_string="q=%20a&tag=x",
        method="POST",
        client="[::1]:4000",
    )
    environ = wsgi_environ(scope, b"{}", {"SCRIPT_NAME": ""})
    assert environ["PATH_INFO"] == "/agents/é b".encode().decode("latin-1")
    assert environ["QUERY_STRING"] == "q=%20a&tag=x"
    assert environ["REQUEST_METHOD"] == "POST"
    assert environ["CONTENT_TYPE"] == "application/json"
    assert environ["CONTENT_LENGTH"] == "2"
    assert environ["HTTP_COOKIE"] == "a=1; b=2"
    assert environ["HTTP_ACCEPT"] == "text/html,application/json"
    assert environ["HTTP_X_FORWARDED_FOR"] == "1.2.3.4"  # the underscore twin is dropped
    assert environ["REMOTE_ADDR"] == "::1"
    assert (environ["SERVER_NAME"], environ["SERVER_PORT"]) == ("127.0.0.1", "8000")
    assert environ["SERVER_PROTOCOL"] == "HTTP/1.1"
    assert environ["wsgi.input"].read() == b"{}"


def test_the_bridge_collects_and_closes_the_wsgi_answer() -> None:
    closed: list[bool] = []

    class Body(list[bytes]):
        def close(self) -> None:
            closed.append(True)

    def app(environ: dict[str, Any], start_response: Any) -> Body:
        start_response("201 Created", [("x-a", "1")])
        return Body([b"he", b"llo", environ["wsgi.input"].read()])

    status, headers, body = BufferedWSGI(app).call({"wsgi.input": BytesIO(b"!")})
    assert (status, headers, body, closed) == (201, [("x-a", "1")], b"hello!", [True])


def test_the_threads_hand_back_answers_and_exceptions_and_drop_cancelled_ones() -> None:
    """registry.rsgi.Threads: a call runs on one of the threads (never on the loop's), its answer
    or exception reaches the awaiting coroutine, many calls in flight each get their own, and a
    call whose future was cancelled runs to its end with its answer dropped."""
    threads = Threads(4, "test")
    release = threading.Event()
    ran: list[str] = []

    def whose(n: int) -> tuple[int, str]:
        return n, threading.current_thread().name

    def fails(_: Any) -> None:
        raise ValueError("told to")

    def slow(_: Any) -> str:
        release.wait(5)
        ran.append("slow")
        return "late"

    async def scenario() -> None:
        answers = await asyncio.gather(*(threads.run(whose, n) for n in range(50)))
        assert [n for n, _ in answers] == list(range(50))
        assert {name for _, name in answers} <= {f"test_{n}" for n in range(4)}
        with pytest.raises(ValueError, match="told to"):
            await threads.run(fails, None)
        pending = threads.run(slow, None)
        pending.cancel()
        release.set()
        assert (await threads.run(whose, 7))[0] == 7
        for _ in range(100):
            if ran:
                break
            await asyncio.sleep(0.01)
        assert ran == ["slow"] and pending.cancelled()

    try:
        asyncio.run(scenario())
    finally:
        threads.shutdown()
    for thread in threads.threads:
        thread.join(5)
        assert not thread.is_alive()


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
    import yaml

    document = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    environment = document["services"]["web"]["environment"]
    return {
        name: re.sub(r"\$\{[A-Z_]+:-([^}]*)\}", r"\1", str(value))
        for name, value in environment.items()
    }


def _deploy_warnings(env: dict[str, str]) -> set[str]:
    done = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    output = done.stdout + done.stderr
    assert "ERRORS" not in output, output
    return set(re.findall(r"\((security\.W\d+)\)", output))


# What `manage.py check --deploy` still says, and why (docs/security.md, "Serving and outages"):
# the plain defaults serve plain HTTP (make run, tests, a first try), compose's add HTTPS but
# leave the HSTS preload list to the operator.
DEPLOY_WARNINGS = {
    "defaults": {"security.W004", "security.W008", "security.W010", "security.W016"},
    "compose": {"security.W021"},
}


def test_check_deploy_says_only_what_the_docs_say_it_says(tmp_path: Path) -> None:
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("DATABASE_URL", "REDIS_URL", "DJANGO_DEBUG")
        and not key.startswith("REGISTRY_")
    }
    env["DJANGO_SECRET_KEY"] = "deploy-check-" + "k7Qz" * 16
    env["REGISTRY_SQLITE_PATH"] = str(tmp_path / "db.sqlite3")
    assert _deploy_warnings(env) == DEPLOY_WARNINGS["defaults"]
    compose = _compose_environment()
    # Compose's database and Redis host names do not resolve here; `check` needs neither.
    compose.pop("DATABASE_URL")
    compose.pop("REDIS_URL")
    compose.pop("DJANGO_SECRET_KEY")
    assert _deploy_warnings({**env, **compose}) == DEPLOY_WARNINGS["compose"]
    section = (ROOT / "docs" / "security.md").read_text().split("## Serving and outages")[1]
    documented = section.split("\n## ")[0]
    for warning in DEPLOY_WARNINGS["defaults"] | DEPLOY_WARNINGS["compose"]:
        assert f"`{warning.split('.')[1]}`" in documented, warning
