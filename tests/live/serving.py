"""Serving a test agent: an ASGI app under uvicorn in a background thread on a loopback
address, every request it gets written down before the app sees it (so a test can prove
that an address received nothing, or that no SendMessage arrived)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import uvicorn
from starlette.types import ASGIApp, Message, Receive, Scope, Send


@dataclass
class SeenRequest:
    """One request as it arrived: method, path, query string, headers (lower-case names)
    and body."""

    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: bytearray = field(default_factory=bytearray)


class RequestLog:
    """The requests one listener received, in order."""

    def __init__(self) -> None:
        self.entries: list[SeenRequest] = []

    def count(self, *, method: str | None = None, path: str | None = None) -> int:
        return sum(
            1
            for seen in list(self.entries)
            if (method is None or seen.method == method) and (path is None or seen.path == path)
        )

    def __len__(self) -> int:
        return len(self.entries)

    def middleware(self, app: ASGIApp) -> ASGIApp:
        """``app`` with each HTTP request recorded here first."""

        async def logged(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] != "http":
                await app(scope, receive, send)
                return
            seen = SeenRequest(
                method=scope["method"],
                path=scope["path"],
                query=scope["query_string"].decode("latin-1"),
                headers={
                    name.decode("latin-1").lower(): value.decode("latin-1")
                    for name, value in scope["headers"]
                },
            )
            self.entries.append(seen)
            # The whole body is read here, before the app: an agent that answers without
            # reading it (an HTML page, a 401) still shows what it was sent.
            more = True
            while more:
                message = await receive()
                if message["type"] != "http.request":
                    break
                seen.body.extend(message.get("body", b""))
                more = bool(message.get("more_body"))
            replayed = False

            async def replay() -> Message:
                nonlocal replayed
                if replayed:
                    return await receive()
                replayed = True
                return {"type": "http.request", "body": bytes(seen.body), "more_body": False}

            await app(scope, replay, send)

        return logged


@contextmanager
def serving(app_for: Callable[[str], ASGIApp], host: str = "127.0.0.1") -> Iterator[str]:
    """Serve ``app_for(origin)`` on ``host`` at a free port; yields the origin
    (``http://host:port``). The socket is bound before the app is built, so the app (its
    card) knows its own address and no other process can take the port in between."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind((host, 0))
    origin = f"http://{host}:{sock.getsockname()[1]}"
    config = uvicorn.Config(
        app_for(origin),
        lifespan="off",
        log_level="error",
        # A slow agent may still be sleeping on a request when the test ends.
        timeout_graceful_shutdown=1,
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 15
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            sock.close()
            raise RuntimeError(f"the test agent on {origin} did not start")
        time.sleep(0.02)
    try:
        yield origin
    finally:
        server.should_exit = True
        thread.join(5)
        if thread.is_alive():
            server.force_exit = True
            thread.join(5)
        sock.close()


def with_files(agent: ASGIApp, files: dict[str, bytes]) -> ASGIApp:
    """``agent``, also answering each path of ``files`` (read at each request, so files added
    later are served) with its bytes as text/plain: a proof's challenge, for one."""
    from starlette.responses import Response

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] in files:
            await Response(files[scope["path"]], media_type="text/plain")(scope, receive, send)
            return
        await agent(scope, receive, send)

    return app
