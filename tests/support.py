"""Pieces the tests share: a real HTTP server on loopback that serves what a test tells it to."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

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
