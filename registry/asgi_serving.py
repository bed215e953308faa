"""The protocols service's server: uvicorn's HTTP/1.1 protocol with bounds on slow clients.

Compose's ``protocols`` service (``/mcp`` and the site under ASGI) runs gunicorn with uvicorn
workers. uvicorn closes a kept-alive connection after ``keepalive`` seconds, and nothing else: a
connection that sends nothing, half a header block or half a body stays open for as long as the
client likes, and a body of any size is taken in (Django's ASGI handler spools it to disk before
a view can refuse it by its length). :class:`BoundedH11Protocol` adds what granian and
``registry/rsgi.py`` do for the web service (issue 35.3):

- the header block must arrive within :data:`HEADER_SECONDS` of the connection's opening or of
  the previous answer (so an idle connection is closed then too);
- the body within :data:`BODY_SECONDS` of its header block (else 408 and the connection is
  closed), and at most ``BODY_BUFFER_BYTES`` of it (else 413 and closed).

:class:`BoundedUvicornWorker` is the gunicorn worker that serves with it.
"""

from __future__ import annotations

import asyncio
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn_worker import UvicornWorker  # type: ignore[import-untyped]  # no py.typed

from registry.env import env_float
from registry.serving import BODY_BUFFER_BYTES, BODY_TOO_LARGE, BODY_TOO_SLOW

HEADER_SECONDS = env_float("REGISTRY_WEB_HEADER_TIMEOUT", 10.0)
BODY_SECONDS = env_float("REGISTRY_WEB_BODY_TIMEOUT", 30.0)
# The bytes of a body's framing (chunk sizes) are counted too: a little room over the limit.
_BODY_BYTES = BODY_BUFFER_BYTES + 64 * 1024


def _answer(status: int, reason: str, body: bytes) -> bytes:
    head = (
        f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/problem+json\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    )
    return head.encode() + body


_TOO_SLOW = _answer(408, "Request Timeout", BODY_TOO_SLOW)
_TOO_LARGE = _answer(413, "Content Too Large", BODY_TOO_LARGE)


class BoundedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a deadline on each request's header block and body (see the
    module's docstring). The deadline follows h11's view of the client: waiting for a request
    (``IDLE``), sending its body (``SEND_BODY``), or done (no deadline while the answer is
    made)."""

    _phase: Any = None  # the h11 state the deadline runs for
    _deadline: asyncio.TimerHandle | None = None
    _body_bytes = 0

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._follow()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._phase is h11.SEND_BODY:
            self._body_bytes += len(data)
            if self._body_bytes > _BODY_BYTES:
                self._refuse(_TOO_LARGE)
                return
        super().data_received(data)
        self._follow()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._follow()

    def _follow(self) -> None:
        if self.transport.is_closing():
            self._disarm()
            return
        state = self.conn.their_state
        phase = state if state in (h11.IDLE, h11.SEND_BODY) else None
        if phase is self._phase:
            return
        self._disarm()
        self._phase = phase
        if phase is h11.IDLE:
            self._deadline = self.loop.call_later(HEADER_SECONDS, self._expire)
        elif phase is h11.SEND_BODY:
            self._body_bytes = 0
            self._deadline = self.loop.call_later(BODY_SECONDS, self._expire)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None
        self._phase = None

    def _expire(self) -> None:
        self._deadline = None
        self._refuse(_TOO_SLOW if self._phase is h11.SEND_BODY else b"")

    def _refuse(self, answer: bytes) -> None:
        """Answer (unless the application has begun its own) and close the connection; the
        application, if it is waiting for the body, is told the client went away."""
        if self.transport.is_closing():
            return
        if answer and (self.cycle is None or not self.cycle.response_started):
            self.transport.write(answer)
        self._disarm()
        self.transport.close()


class BoundedUvicornWorker(UvicornWorker):
    """gunicorn's uvicorn worker serving with :class:`BoundedH11Protocol`."""

    CONFIG_KWARGS: dict[str, Any] = {
        "loop": "auto",
        "http": "registry.asgi_serving:BoundedH11Protocol",
    }
