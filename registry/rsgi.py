"""The web service under granian: Django's WSGI application behind granian's RSGI interface.

``granian --interface rsgi registry.rsgi:application`` parses HTTP in Rust (tokio, hyper) and
calls :class:`BufferedWSGI` on its event loop for each request. The request's body is read
there, without a thread, and only then is the WSGI application run on one of
:data:`THREADS` threads with the whole request in hand: a client that sends half a header
block or half a body holds a socket, never a thread (issue 17.5). granian's own WSGI interface
is faster still per request but hands the thread over before the body has arrived, so ten
slow bodies stop every thread (docs/benchmarks.md, "Serving").

A body larger than :data:`BODY_LIMIT` is not read: a declared ``Content-Length`` over it goes to
Django unread (which refuses it, 413, by its length), a chunked one over it is answered 413
here; either way the connection is closed after the answer. Header names with an underscore
are dropped (as gunicorn does), so ``X_Forwarded_For`` cannot pose as ``X-Forwarded-For``.

A body must arrive whole within :data:`BODY_SECONDS` of its header block (else 408, and the
connection is closed), and the bodies a worker holds, from their first byte to their answer, are
:data:`BODY_BUDGET` bytes at most together (a body that would pass it is answered 503 and
closed): sixty clients each sending most of a 4 MB body and stalling held 250 MB for as long as
they liked (issue 35.3). The header block and the idle time between two requests are bounded by
granian itself (``--http 1 --http1-header-read-timeout``, in the Dockerfile and compose; with
``--http auto`` a connection that sends nothing is never closed).

The hand-off to a thread is :class:`Threads`: a queue the threads read and, for the answer,
``call_soon_threadsafe`` on the event loop. ``loop.run_in_executor`` did the same through a
``concurrent.futures`` future chained to an asyncio one, at about 39 µs of CPU a request with 16
requests in flight against 7 (docs/benchmarks.md, "The RSGI hand-off").

Each worker answers one warm-up request before serving and then freezes the garbage
collector's view of what is allocated so far (``gc.freeze()``), as gunicorn.conf.py did.

granian runs its event loop with uvloop when it is installed (``--loop auto``, the default;
uvloop is in requirements.txt): about 10% less CPU a request than asyncio's own loop on a
health check (docs/benchmarks.md, "Serving"). Each worker logs the loop it got.
"""

from __future__ import annotations

import asyncio
import logging
import os
import queue
import sys
import threading
from collections.abc import Callable, Iterable
from io import BytesIO
from typing import Any

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "registry.settings")

from django.core.wsgi import get_wsgi_application  # noqa: E402

from registry import hot_reads, request_cycle  # noqa: E402
from registry.env import env_float, env_int  # noqa: E402
from registry.serving import (  # noqa: E402
    BODIES_TOO_MANY,
    BODY_BUFFER_BYTES,
    BODY_TOO_LARGE,
    BODY_TOO_SLOW,
    warm_up,
)

logger = logging.getLogger(__name__)

THREADS = env_int("REGISTRY_WEB_THREADS", 4, minimum=1)
BODY_LIMIT = BODY_BUFFER_BYTES
# 4 MB in 30 s is 140 KB/s: a slow link finishes, a client that stalls is let go.
BODY_SECONDS = env_float("REGISTRY_WEB_BODY_TIMEOUT", 30.0)
# 8 of the largest bodies at once per worker; the API's own bodies are 2.5 MB at most.
BODY_BUDGET = env_int("REGISTRY_WEB_BODY_BUDGET", 32 * 1024 * 1024, minimum=BODY_LIMIT)
_SPECIAL = {"CONTENT_TYPE", "CONTENT_LENGTH"}


Answer = tuple[int, list[tuple[str, str]], bytes]
WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


def wsgi_environ(scope: Any, body: bytes, base: dict[str, Any]) -> dict[str, Any]:
    """The WSGI environ of an RSGI request (PEP 3333: text is the bytes as latin-1)."""
    environ = dict(base)
    for name, value in scope.headers.items():
        if "_" in name:
            continue
        key = name.upper().replace("-", "_")
        if key not in _SPECIAL:
            key = "HTTP_" + key
        if key in environ:
            environ[key] += ("; " if key == "HTTP_COOKIE" else ",") + value
        else:
            environ[key] = value
    host, _, port = scope.server.rpartition(":")
    environ.update(
        REQUEST_METHOD=scope.method,
        PATH_INFO=scope.path.encode("utf-8", "surrogateescape").decode("latin-1"),
        QUERY_STRING=scope.query_string,
        SERVER_NAME=host.strip("[]"),
        SERVER_PORT=port,
        SERVER_PROTOCOL="HTTP/" + scope.http_version,
        REMOTE_ADDR=scope.client.rpartition(":")[0].strip("[]"),
    )
    environ["wsgi.url_scheme"] = scope.scheme
    environ["wsgi.input"] = BytesIO(body)
    return environ


def declared_length(scope: Any) -> int | None:
    text = scope.headers.get("content-length")
    return int(text) if text is not None and text.isascii() and text.isdigit() else None


class Threads:
    """``count`` threads running calls handed over from an event loop; the answer (or the
    exception) is set on an asyncio future on that loop. A call whose future was cancelled
    still runs to its end (as with ``run_in_executor``); its answer is dropped."""

    def __init__(self, count: int, name: str) -> None:
        self.calls: queue.SimpleQueue[tuple[Any, ...] | None] = queue.SimpleQueue()
        self.threads = [
            threading.Thread(target=self._serve, name=f"{name}_{n}", daemon=True)
            for n in range(count)
        ]
        for thread in self.threads:
            thread.start()

    def run(self, call: Callable[[Any], Any], argument: Any) -> asyncio.Future[Any]:
        """``call(argument)`` on one of the threads; await the returned future."""
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        self.calls.put((loop, future, call, argument))
        return future

    def shutdown(self) -> None:
        for _ in self.threads:
            self.calls.put(None)

    def _serve(self) -> None:
        take = self.calls.get
        while (item := take()) is not None:
            loop, future, call, argument = item
            try:
                answer = call(argument)
            except BaseException as exc:  # handed to the awaiting coroutine, as run_in_executor
                _hand_back(loop, _fail, future, exc)
            else:
                _hand_back(loop, _settle, future, answer)
            # Nothing of the request outlives it on this thread while it waits for the next.
            item = future = call = argument = answer = None


def _hand_back(loop: Any, settle: Callable[..., None], future: Any, value: Any) -> None:
    try:
        loop.call_soon_threadsafe(settle, future, value)
    except RuntimeError:  # the loop is closed: the worker is stopping, nobody awaits it
        pass


def _settle(future: asyncio.Future[Any], answer: Any) -> None:
    if not future.cancelled():
        future.set_result(answer)


def _fail(future: asyncio.Future[Any], exc: BaseException) -> None:
    if not future.cancelled():
        future.set_exception(exc)


class BufferedWSGI:
    """An RSGI application running a WSGI one on a thread pool, each request read in full
    first (see the module's docstring)."""

    def __init__(self, app: WSGIApp, threads: int = THREADS) -> None:
        self.app = app
        self.threads = threads
        self.pool: Threads | None = None
        self.held = 0  # bytes of the bodies of requests in hand (one event loop: no lock)
        self.base: dict[str, Any] = {
            "SCRIPT_NAME": "",
            "wsgi.errors": sys.stderr,
            "wsgi.multithread": True,
            "wsgi.multiprocess": True,
            "wsgi.run_once": False,
            "wsgi.version": (1, 0),
        }

    def __rsgi_init__(self, loop: Any) -> None:
        self.pool = Threads(self.threads, "wsgi")
        warm_up()
        logger.info("web worker ready: %d threads, event loop %s", self.threads, _loop_name(loop))

    def __rsgi_del__(self, loop: Any) -> None:
        if self.pool is not None:
            self.pool.shutdown()

    def call(self, environ: dict[str, Any]) -> Answer:
        """Run the WSGI application (on a pool thread) and collect its answer."""
        started: list[Any] = []

        def start_response(status: str, headers: list[tuple[str, str]], exc: Any = None) -> Any:
            started[:] = [int(status[:3]), headers]
            return None

        result = self.app(environ, start_response)
        try:
            body = b"".join(result)
        finally:
            close = getattr(result, "close", None)
            if close is not None:
                close()
        return started[0], list(started[1]), body

    async def __rsgi__(self, scope: Any, protocol: Any) -> None:
        if scope.proto != "http":  # no websockets here (granian runs with --no-ws)
            return
        length = declared_length(scope)
        if length is not None and length > BODY_LIMIT:
            # Django refuses it by its Content-Length, unread.
            await self._answer(scope, b"", protocol, close=True)
        elif length or "transfer-encoding" in scope.headers:
            body = _Body(self)
            try:  # the body counts against the budget until its answer is sent
                refusal = await body.read(protocol)
                if refusal is None:
                    await self._answer(scope, body.take(), protocol, close=False)
                else:
                    status, problem = refusal
                    headers = _closing()
                    if status == 503:
                        headers.append(("retry-after", "1"))
                    protocol.response_bytes(status, headers, problem)
            finally:
                body.release()
        else:
            await self._answer(scope, b"", protocol, close=False)

    async def _answer(self, scope: Any, body: bytes, protocol: Any, *, close: bool) -> None:
        environ = wsgi_environ(scope, body, self.base)
        assert self.pool is not None, "__rsgi_init__ starts the threads"
        status, headers, content = await self.pool.run(self.call, environ)
        if close or status == 413:  # the rest of a body was not read: it is no next request
            headers.append(("connection", "close"))
        protocol.response_bytes(status, headers, content)


class _Body:
    """A request body as it arrives, under :data:`BODY_LIMIT`, :data:`BODY_SECONDS` and, with
    every other body the worker holds, :data:`BODY_BUDGET`."""

    __slots__ = ("owner", "parts", "size")

    def __init__(self, owner: BufferedWSGI) -> None:
        self.owner = owner
        self.parts: list[bytes] = []
        self.size = 0

    async def read(self, protocol: Any) -> tuple[int, bytes] | None:
        """Read the whole body; the refusal (status, problem) if it is too large, too slow or
        over the worker's budget (the connection is then closed: the rest is not read)."""
        try:
            async with asyncio.timeout(BODY_SECONDS):
                async for chunk in protocol:
                    if self.size + len(chunk) > BODY_LIMIT:
                        return 413, BODY_TOO_LARGE
                    if self.owner.held + len(chunk) > BODY_BUDGET:
                        return 503, BODIES_TOO_MANY
                    self.size += len(chunk)
                    self.owner.held += len(chunk)
                    self.parts.append(chunk)
        except TimeoutError:
            return 408, BODY_TOO_SLOW
        return None

    def take(self) -> bytes:
        body = b"".join(self.parts)
        self.parts = []
        return body

    def release(self) -> None:
        self.owner.held -= self.size
        self.size = 0


def _loop_name(loop: Any) -> str:
    kind = type(loop)
    return f"{kind.__module__}.{kind.__qualname__}"


def _closing() -> list[tuple[str, str]]:
    return [("content-type", "application/problem+json"), ("connection", "close")]


application = BufferedWSGI(hot_reads.wrap(get_wsgi_application()))
request_cycle.trim()
