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

from registry import request_cycle  # noqa: E402
from registry.env import env_int  # noqa: E402
from registry.serving import BODY_BUFFER_BYTES, warm_up  # noqa: E402

logger = logging.getLogger(__name__)

THREADS = env_int("REGISTRY_WEB_THREADS", 4, minimum=1)
BODY_LIMIT = BODY_BUFFER_BYTES
_SPECIAL = {"CONTENT_TYPE", "CONTENT_LENGTH"}
_TOO_LARGE = (
    b'{"type":"/problems/body-too-large","title":"Request body too large","status":413,'
    b'"detail":"The request body is larger than the registry accepts."}'
)

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
        body, over = b"", False
        length = declared_length(scope)
        if length is not None and length > BODY_LIMIT:
            over = True  # Django refuses it by its Content-Length, unread
        elif length or "transfer-encoding" in scope.headers:
            parts, size = [], 0
            async for chunk in protocol:
                parts.append(chunk)
                size += len(chunk)
                if size > BODY_LIMIT:
                    protocol.response_bytes(413, _closing(), _TOO_LARGE)
                    return
            body = b"".join(parts)
        environ = wsgi_environ(scope, body, self.base)
        assert self.pool is not None, "__rsgi_init__ starts the threads"
        status, headers, content = await self.pool.run(self.call, environ)
        if over or status == 413:  # the rest of a body was not read: it is no next request
            headers.append(("connection", "close"))
        protocol.response_bytes(status, headers, content)


def _loop_name(loop: Any) -> str:
    kind = type(loop)
    return f"{kind.__module__}.{kind.__qualname__}"


def _closing() -> list[tuple[str, str]]:
    return [("content-type", "application/problem+json"), ("connection", "close")]


application = BufferedWSGI(get_wsgi_application())
request_cycle.trim()
