"""The gunicorn worker of the web service: gthread, but no thread waits on a slow client.

gunicorn's gthread worker hands a connection to a thread as soon as its first bytes arrive; the
thread then blocks reading the rest of the request. Eight clients that send half a header block
and stop hold eight threads (2 workers x 4) and nobody else is served (issue 17.5). This worker
reads each request in the worker's event loop instead (non-blocking, on the poller that already
watches kept-alive connections) and gives it to a thread only when the header block is complete
and, for a body with a ``Content-Length`` up to :data:`BODY_BUFFER_BYTES`, the body too. A
client that never finishes is closed after ``keepalive`` seconds without having held a thread.
Chunked bodies and larger ones are still read by the thread (the API caps bodies well below).

It also closes the connection after a 413: the application refused the body without reading it,
and the rest of that body must not be taken for the next request.

Measured against gthread and uvicorn workers in docs/benchmarks.md ("Serving"). The image and
compose's web service now run granian (registry/rsgi.py), which reads requests in Rust and is
the only production server of the web service: this worker is the measured comparison and a
fallback, since its threads still read chunked bodies themselves (twelve sent slowly stop every
thread; issue 35.5). :func:`warm_up` is shared by both.
"""

from __future__ import annotations

import errno
import gc
import logging
import re
import selectors
from collections.abc import Callable, Iterable
from functools import partial
from typing import Any

from gunicorn.workers.gthread import TConn, ThreadWorker

logger = logging.getLogger(__name__)

# A body up to this size is read before a thread is given the request; the REST API's largest
# accepted body (an inline import) is 2.5 MB.
BODY_BUFFER_BYTES = 4 * 1024 * 1024
# Header blocks longer than this go to the parser as they are (it answers 431/400).
HEADER_LIMIT_BYTES = 64 * 1024


def _problem(slug: str, title: str, status: int, detail: str) -> bytes:
    return (
        f'{{"type":"/problems/{slug}","title":"{title}","status":{status},"detail":"{detail}"}}'
    ).encode()


# The servers' own refusals of a body (registry/rsgi.py, registry/asgi_serving.py), answered
# before Django sees the request, in its problem+json shape.
BODY_TOO_LARGE = _problem(
    "body-too-large", "Request body too large", 413,
    "The request body is larger than the registry accepts.",
)  # fmt: skip
BODY_TOO_SLOW = _problem(
    "body-timeout", "Request body too slow", 408,
    "The request body did not arrive in time; send it again.",
)  # fmt: skip
BODIES_TOO_MANY = _problem(
    "server-busy", "Server busy", 503,
    "The registry is reading too many request bodies at once; retry in a moment.",
)  # fmt: skip
_CONTENT_LENGTH = re.compile(rb"\r\ncontent-length[ \t]*:[ \t]*(\d+)[ \t]*(?=\r\n)", re.IGNORECASE)
_TRANSFER_ENCODING = re.compile(rb"\r\ntransfer-encoding[ \t]*:", re.IGNORECASE)


def request_is_complete(buffer: bytes | bytearray) -> bool:
    """Whether ``buffer`` holds a whole request (or as much as should be read before a thread)."""
    end = buffer.find(b"\r\n\r\n")
    if end < 0:
        return len(buffer) > HEADER_LIMIT_BYTES
    head = bytes(buffer[: end + 2])
    if _TRANSFER_ENCODING.search(head):
        return True
    lengths = _CONTENT_LENGTH.findall(head)
    if len(lengths) != 1:  # no body, or a malformed request the parser will refuse
        return True
    length = int(lengths[0])
    return length > BODY_BUFFER_BYTES or len(buffer) >= end + 4 + length


def close_after_413(app: Callable[..., Iterable[bytes]]) -> Callable[..., Iterable[bytes]]:
    """A WSGI wrapper: a 413 response closes the connection (gunicorn ignores an application's
    ``Connection`` header; its response object's ``must_close`` does it)."""

    def wrapped(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        def start(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
            if status.startswith("413"):
                response = getattr(start_response, "__self__", None)
                if response is not None and hasattr(response, "must_close"):
                    response.must_close = True
            return start_response(status, headers, exc_info)

        return app(environ, start)

    return wrapped


class BufferedThreadWorker(ThreadWorker):
    """gthread with requests read in the event loop (see the module's docstring)."""

    wsgi: Any

    def load_wsgi(self) -> None:
        super().load_wsgi()
        self.wsgi = close_after_413(self.wsgi)

    def accept(self, listener: Any) -> None:
        if self.cfg.is_ssl:  # TLS is terminated in front of this service
            super().accept(listener)
            return
        try:
            client, address = listener.accept()
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.ECONNABORTED, errno.EWOULDBLOCK):
                raise
            return
        self.nr_conns += 1
        self._read_request(TConn(self.cfg, client, address, listener.getsockname()))

    def on_client_socket_readable(self, conn: Any, client: Any) -> None:
        """A kept-alive connection has bytes: its next request is read the same way."""
        self.poller.unregister(client)
        self.keepalived_conns.remove(conn)
        if self.cfg.is_ssl:
            self.enqueue_req(conn)
            return
        self._read_request(conn)
        self._on_bytes(conn, client)

    def _read_request(self, conn: Any) -> None:
        conn.sock.setblocking(False)
        conn.pending_bytes = bytearray()
        conn.set_timeout()  # closed by murder_pending() if the request is not complete in time
        self.pending_conns.append(conn)
        self.poller.register(conn.sock, selectors.EVENT_READ, partial(self._on_bytes, conn))

    def _on_bytes(self, conn: Any, client: Any) -> None:
        try:
            data = conn.sock.recv(65536)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if not data:  # the client went away before finishing its request
            self._forget(conn)
            self.nr_conns -= 1
            conn.close()
            return
        conn.pending_bytes += data
        if not request_is_complete(conn.pending_bytes):
            return
        self._forget(conn)
        conn.data_ready = True
        conn.pushback = bytes(conn.pending_bytes)
        conn.pending_bytes = None
        self.enqueue_req(conn)

    def _forget(self, conn: Any) -> None:
        try:
            self.poller.unregister(conn.sock)
        except (KeyError, ValueError, OSError):
            pass
        try:
            self.pending_conns.remove(conn)
        except ValueError:
            pass

    def handle(self, conn: Any) -> Any:
        pushback = getattr(conn, "pushback", None)
        if pushback:
            conn.pushback = None
            conn.sock.setblocking(True)
            conn.init()
            conn.parser.unreader.unread(pushback)
        return super().handle(conn)


def warm_up_host(allowed_hosts: list[str]) -> str:
    """A Host header ALLOWED_HOSTS accepts, for the warm-up request."""
    for host in allowed_hosts:
        if host == "*":
            return "localhost"
        if host:
            return host.lstrip(".")
    return "localhost"


def warm_up(log: Any = logger) -> None:
    """Before a worker serves: one request (``/healthz``: imports, URLconf, first-use caches),
    then ``gc.freeze()``, so the long-lived objects allocated so far (modules, URLconf,
    settings, serializers) are never scanned again and the collector's pauses leave request
    latency (docs/benchmarks.md)."""
    # lazy: the warm-up only: django.test is not loaded by a serving process otherwise
    from django.conf import settings
    from django.test import Client

    from registry.metrics_requests import UNCOUNTED  # lazy: Django is set up by now

    try:
        host = warm_up_host(list(settings.ALLOWED_HOSTS))
        # Not traffic: left out of the request series and the access log (UNCOUNTED).
        environ: dict[str, Any] = {"HTTP_HOST": host, UNCOUNTED: "1"}
        client = Client(raise_request_exception=False, **environ)
        response = client.get("/healthz")
        if response.status_code != 200:
            log.warning("warm-up request answered %s", response.status_code)
    except Exception:  # a warm-up failure must not keep the worker from serving
        log.warning("warm-up request failed", exc_info=True)
    gc.collect()
    gc.freeze()
