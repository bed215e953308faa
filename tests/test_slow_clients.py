"""Slow and idle clients are let go in bounded time by the servers compose runs (issue 35.3).

``web`` is the Dockerfile's granian command (compose's web service runs the same); ``protocols``
is compose's protocols command (gunicorn with ``registry.asgi_serving``'s uvicorn workers). Each
is started with its production flags and its bounds shortened for the test through the same flag
and settings: the header block and the idle time between requests (granian's
``--http1-header-read-timeout``, ``REGISTRY_WEB_HEADER_TIMEOUT`` for uvicorn: 2 s here, 10 s in
production), the body (``REGISTRY_WEB_BODY_TIMEOUT``, 2 s here, 30 s in production) and, for
granian, the bytes of bodies a worker holds at once (``REGISTRY_WEB_BODY_BUDGET``, at its 4 MiB
minimum here, 32 MiB in production). Each case opens a raw socket, does what a slow client does
and requires the server to close it within the bound (plus slack), while clients that keep to
the bounds are served."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator

import pytest

from tests.serving_commands import (
    compose_command,
    dockerfile_command,
    get,
    granian_command,
    protocols_command,
    running,
    server_environment,
)
from tests.support import free_port

BOUND = 2.0  # seconds: the header, idle and body bounds the server is started with
SLACK = 1.5
BUDGET = 4 * 1024 * 1024
POST_HEAD = (
    b"POST /api/v1/validate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
)


@pytest.fixture(scope="module", params=["web", "protocols"])
def port(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    port = free_port()
    directory = tmp_path_factory.mktemp(request.param)
    bound = str(BOUND)
    env = server_environment(
        directory,
        REGISTRY_WEB_HEADER_TIMEOUT=bound,
        REGISTRY_WEB_BODY_TIMEOUT=bound,
        REGISTRY_WEB_BODY_BUDGET=str(BUDGET),
    )
    if request.param == "web":
        command = granian_command(port, http1_header_read_timeout=str(int(BOUND * 1000)))
        booting = "Started worker"
    else:
        command, booting = protocols_command(port), "Booting worker"
    with running(command, env, directory / "server.log", port=port, booting=booting):
        yield port


def connect(port: int) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=BOUND + 10)


def until_closed(sock: socket.socket) -> tuple[float, bytes]:
    """Read until the server closes: the seconds it took and what was answered meanwhile."""
    started = time.monotonic()
    answer = b""
    try:
        while chunk := sock.recv(65536):
            answer += chunk
    except TimeoutError:
        pytest.fail(f"still open after {time.monotonic() - started:.1f} s")
    except ConnectionResetError:
        pass
    return time.monotonic() - started, answer


def one_answer(sock: socket.socket) -> bytes:
    """One whole answer (head and ``Content-Length`` body) off a kept-alive connection."""
    answer = b""
    while b"\r\n\r\n" not in answer:
        answer += sock.recv(65536)
    head, _, body = answer.partition(b"\r\n\r\n")
    length = next(
        int(line.split(b":", 1)[1])
        for line in head.lower().split(b"\r\n")
        if line.startswith(b"content-length:")
    )
    while len(body) < length:
        body += sock.recv(65536)
    return head + b"\r\n\r\n" + body


def test_a_connection_that_sends_nothing_is_closed(port: int) -> None:
    """With granian's ``--http auto`` (its default) such a socket was never closed: the wait
    for the bytes that tell HTTP/2 from HTTP/1 has no bound."""
    with connect(port) as sock:
        elapsed, answer = until_closed(sock)
    assert elapsed < BOUND + SLACK and answer == b""


def test_a_header_block_that_stops_halfway_is_closed(port: int) -> None:
    with connect(port) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: slo")
        elapsed, _ = until_closed(sock)
    assert elapsed < BOUND + SLACK


def test_a_body_that_stops_halfway_is_answered_408_and_closed(port: int) -> None:
    with connect(port) as sock:
        sock.sendall(POST_HEAD + b'Content-Length: 1000\r\n\r\n{"card":')
        elapsed, answer = until_closed(sock)
    assert elapsed < BOUND + SLACK
    assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
    assert b"connection: close" in answer.lower() and b"/problems/body-timeout" in answer


def test_a_chunked_body_that_stops_is_answered_408_and_closed(port: int) -> None:
    with connect(port) as sock:
        sock.sendall(POST_HEAD + b'Transfer-Encoding: chunked\r\n\r\n8\r\n{"card":\r\n')
        elapsed, answer = until_closed(sock)
    assert elapsed < BOUND + SLACK
    assert answer.startswith(b"HTTP/1.1 408"), answer[:200]


def test_a_body_trickled_one_byte_at_a_time_is_cut_at_the_bound(port: int) -> None:
    """The body's bound is on the whole body, not between two reads: a byte every half second
    would pass any idle timeout forever."""
    with connect(port) as sock:
        sock.sendall(POST_HEAD + b"Content-Length: 1000\r\n\r\n")
        started = time.monotonic()
        answer = b""
        try:
            while time.monotonic() - started < BOUND + SLACK:
                sock.sendall(b" ")
                sock.settimeout(0.5)
                try:
                    answer += sock.recv(65536)
                except TimeoutError:
                    continue
                if answer:
                    break
        except (BrokenPipeError, ConnectionResetError):
            pass
        assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
        assert time.monotonic() - started < BOUND + SLACK


def test_an_idle_keep_alive_connection_is_closed_and_a_prompt_one_is_served(port: int) -> None:
    request = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    with connect(port) as sock:
        sock.sendall(request)
        assert one_answer(sock).startswith(b"HTTP/1.1 200")
        time.sleep(BOUND / 2)  # within the bound: the connection is still there for the next
        sock.sendall(request)
        assert one_answer(sock).startswith(b"HTTP/1.1 200")
        elapsed, answer = until_closed(sock)
    assert elapsed < BOUND + SLACK and answer == b""


def test_a_body_sent_in_pieces_within_the_bound_is_served(port: int) -> None:
    body = b'{"card": {"name": "x"}}'
    with connect(port) as sock:
        sock.sendall(
            POST_HEAD + f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
        )
        time.sleep(BOUND / 4)
        sock.sendall(body[:9])
        time.sleep(BOUND / 4)
        sock.sendall(body[9:])
        _, answer = until_closed(sock)
    assert answer.startswith(b"HTTP/1.1 200"), answer[:300]


def test_twelve_slow_chunked_bodies_hold_no_thread(port: int) -> None:
    """Issue 35.5: under gunicorn's WSGI worker twelve of them held its eight threads and
    ``/healthz`` timed out (which is why that server is no longer a production one). Here the
    body is read on the event loop: fresh requests are answered meanwhile."""
    slow = []
    try:
        for _ in range(12):
            sock = connect(port)
            sock.sendall(POST_HEAD + b'Transfer-Encoding: chunked\r\n\r\n8\r\n{"card":\r\n')
            slow.append(sock)
        time.sleep(0.2)
        for _ in range(6):
            assert get(port, timeout=1.0).startswith(b"HTTP/1.1 200")
    finally:
        for sock in slow:
            sock.close()


def test_a_body_over_the_limit_is_answered_413_and_closed_before_the_end(port: int) -> None:
    """A chunked body has no length to refuse it by: it is cut once past 4 MB (under uvicorn
    it used to be read whole, and spooled to disk, before Django could refuse it)."""
    chunk = b" " * (1024 * 1024)
    with connect(port) as sock:
        sock.sendall(POST_HEAD + b"Transfer-Encoding: chunked\r\n\r\n")
        sent = 0
        try:
            for _ in range(64):
                sock.sendall(b"%x\r\n" % len(chunk) + chunk + b"\r\n")
                sent += 1
        except (BrokenPipeError, ConnectionResetError):
            pass
        _, answer = until_closed(sock)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert sent < 64


def test_bodies_over_the_workers_budget_are_refused_503_and_fresh_requests_served(
    port: int, request: pytest.FixtureRequest
) -> None:
    """Six stalled bodies of 1.5 MB against two workers of 4 MiB each: a worker holds two of
    them at most, so two at least are answered 503 at once; the rest are let go at the bound.
    (uvicorn reads a body only as fast as Django's handler takes it, and spools it to disk.)"""
    if request.node.callspec.params["port"] != "web":
        pytest.skip("the budget is registry/rsgi.py's")
    piece = b" " * 1_500_000
    socks = []
    try:
        for _ in range(6):
            sock = connect(port)
            sock.sendall(POST_HEAD + b"Content-Length: 2000000\r\n\r\n" + piece)
            socks.append(sock)
        assert get(port).startswith(b"HTTP/1.1 200")
        answers = [until_closed(sock) for sock in socks]
    finally:
        for sock in socks:
            sock.close()
    statuses = sorted(answer[:12] for _, answer in answers)
    assert statuses.count(b"HTTP/1.1 503") >= 2, statuses
    assert set(statuses) <= {b"HTTP/1.1 503", b"HTTP/1.1 408"}, statuses
    assert max(elapsed for elapsed, _ in answers) < BOUND + SLACK
    # The budget is given back: a whole body is served again.
    with connect(port) as sock:
        body = b'{"card": {"name": "x"}}'
        sock.sendall(
            POST_HEAD + f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode() + body
        )
        _, answer = until_closed(sock)
    assert answer.startswith(b"HTTP/1.1 200"), answer[:300]


def test_compose_runs_the_dockerfiles_command_with_its_bounds() -> None:
    image = dockerfile_command()
    assert compose_command("web") == image
    for flag, value in (("--http", "1"), ("--http1-header-read-timeout", "10000")):
        assert image[image.index(flag) + 1] == value, image
