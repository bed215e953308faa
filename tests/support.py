"""Pieces the tests share: a real HTTP server on loopback that serves what a test tells it to,
the registry itself served live, and the official MCP client."""

from __future__ import annotations

import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

SHARED = Path(__file__).resolve().parents[2] / "shared"
CORPUS = SHARED / "corpus" / "cards"
SEEDS = SHARED / "seeds"


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=lambda: {"Content-Type": "application/json"})


Handler = Callable[[BaseHTTPRequestHandler], Reply]


class CardServer:
    """A threaded HTTP server on 127.0.0.1; ``routes`` maps a path to a Reply or a function."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        self.routes: dict[str, Reply | Handler] = {}
        self.requests: list[tuple[str, dict[str, str]]] = []
        self.bodies: list[bytes] = []
        server = self

        class _Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                length = int(self.headers.get("Content-Length") or 0)
                server.bodies.append(self.rfile.read(length))
                self.do_GET()

            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                server.requests.append((self.path, dict(self.headers.items())))
                route = server.routes.get(self.path)
                if route is None:
                    reply = Reply(status=404, body=b'{"error": "not found"}')
                elif callable(route):
                    reply = route(self)
                else:
                    reply = route
                self.send_response(reply.status)
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(reply.body)))
                self.end_headers()
                self.wfile.write(reply.body)

            def log_message(self, format: str, *args: object) -> None:
                return

        self.httpd = ThreadingHTTPServer((host, 0), _Handler)
        self.httpd.daemon_threads = True
        self.host = host
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def origin(self) -> str:
        return f"http://{self.host}:{self.port}"

    def url(self, path: str) -> str:
        return self.origin + path

    def serve(
        self,
        path: str,
        body: bytes,
        *,
        status: int = 200,
        content_type: str = "application/json",
        headers: dict[str, str] | None = None,
    ) -> str:
        self.routes[path] = Reply(
            status=status, body=body, headers={"Content-Type": content_type, **(headers or {})}
        )
        return self.url(path)

    def hits(self, path: str) -> int:
        return sum(1 for p, _ in self.requests if p == path)


@contextmanager
def running_server(host: str = "127.0.0.1") -> Iterator[CardServer]:
    server = CardServer(host)
    server.thread.start()
    try:
        yield server
    finally:
        server.httpd.shutdown()
        server.httpd.server_close()


def make_run_environment(directory: Path, **extra: str) -> dict[str, str]:
    """``make run``'s environment for a process started by a test: nothing of this run's
    database, broker, key or registry settings; what the Makefile's run target sets (debug on,
    loopback agents fetched: tests/make_run.py); SQLite in ``directory``; ``extra``."""
    import os

    from tests.make_run import run_environment

    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("DATABASE_URL", "REDIS_URL", "CELERY_", "DJANGO_", "REGISTRY_"))
    }
    env.update(run_environment())
    env.update(REGISTRY_SQLITE_PATH=str(directory / "db.sqlite3"), **extra)
    return env


def free_port() -> int:
    """A TCP port on 127.0.0.1 nobody listens on (as of now)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def serving_asgi(log_level: str = "error") -> Iterator[str]:
    """The registry's ASGI application under uvicorn in a thread; yields its base URL. On exit
    the server stops and the database connections its worker threads held are closed."""
    import asyncio

    import uvicorn
    from asgiref.sync import sync_to_async
    from django.db import connections

    from registry.asgi import application

    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(application, host="127.0.0.1", port=port, lifespan="on", log_level=log_level)
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 15
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the registry did not start")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)
        # The server's database connection lives in asgiref's thread-sensitive executor.
        asyncio.run(sync_to_async(connections.close_all, thread_sensitive=True)())


def mcp_session(base: str, body: Callable[[Any], Awaitable[Any]]) -> Any:
    """Run ``body(session)`` in an initialised session of the official MCP client."""
    import asyncio

    from mcp import ClientSession
    from mcp.client.streamable_http import streamablehttp_client

    async def run() -> Any:
        async with streamablehttp_client(base + "/mcp") as (read, write, _):
            async with ClientSession(read, write) as session:
                await session.initialize()
                return await body(session)

    return asyncio.run(run())


def mcp_call(base: str, tool: str, arguments: dict[str, Any]) -> Any:
    """One MCP tool call through the official client (its ``CallToolResult``)."""
    return mcp_session(base, lambda session: session.call_tool(tool, arguments))


def other_connection() -> Any:
    """A plain psycopg connection (autocommit) to the test database, beside Django's: what
    another process (a migration, a restart) does to the server."""
    import psycopg
    from django.db import connection

    params = connection.get_connection_params()
    params.pop("cursor_factory", None)
    params.pop("context", None)
    return psycopg.connect(**params, autocommit=True)
