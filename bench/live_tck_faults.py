"""Broken variants for bench/live_tck_compare.py: a loopback proxy in front of a real agent that
breaks one rule each and passes everything else through unchanged.

The proxy serves the agent's card with the agent's origin replaced by its own, so every client
(the registry, both TCKs) reaches the agent through it. Each fault names the check ids it should
make fail; the comparison reports whether the registry and the TCK named them.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx

from bench.live_tck_agents import CARD_PATH

_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "host", "te", "upgrade"}
_SEND_METHODS = {"SendMessage", "message/send"}
_CANCEL_METHODS = {"CancelTask", "tasks/cancel"}


@dataclass
class Exchange:
    """What the proxy saw: the client's request and the agent's answer (which a fault edits)."""

    method: str
    path: str
    request_headers: dict[str, str]
    request_body: bytes
    status: int = 0
    headers: dict[str, str] | None = None
    body: bytes = b""

    def rpc_method(self) -> str | None:
        try:
            data = json.loads(self.request_body)
        except ValueError:
            return None
        return data.get("method") if isinstance(data, dict) else None

    def answer_json(self) -> Any:
        try:
            return json.loads(self.body)
        except ValueError:
            return None

    def set_json(self, data: Any) -> None:
        self.body = json.dumps(data).encode()


def _rpc_error(exchange: Exchange) -> dict[str, Any] | None:
    data = exchange.answer_json()
    if isinstance(data, dict) and isinstance(data.get("error"), dict):
        return data
    return None


def _rest_error(exchange: Exchange) -> dict[str, Any] | None:
    data = exchange.answer_json()
    if exchange.status >= 400 and isinstance(data, dict) and isinstance(data.get("error"), dict):
        return data
    return None


def _recode(old: int, new: int) -> Callable[[Exchange], None]:
    def fault(exchange: Exchange) -> None:
        data = _rpc_error(exchange)
        if data is not None and data["error"].get("code") == old:
            data["error"]["code"] = new
            exchange.set_json(data)

    return fault


def not_found_as_internal(exchange: Exchange) -> None:
    _recode(-32001, -32603)(exchange)
    data = _rest_error(exchange)
    if data is not None and exchange.status == 404:
        exchange.status = 500
        data["error"].update(code=500, status="INTERNAL")
        exchange.set_json(data)


def no_error_info(exchange: Exchange) -> None:
    data = _rpc_error(exchange)
    if data is not None and "data" in data["error"]:
        del data["error"]["data"]
        exchange.set_json(data)
    data = _rest_error(exchange)
    if data is not None and "details" in data["error"]:
        del data["error"]["details"]
        exchange.set_json(data)


def error_id_null(exchange: Exchange) -> None:
    data = _rpc_error(exchange)
    if data is not None and data.get("id") is not None:
        data["id"] = None
        exchange.set_json(data)


def rest_error_not_aip193(exchange: Exchange) -> None:
    data = _rest_error(exchange)
    if data is not None:
        exchange.set_json({"message": data["error"].get("message", "error")})


def send_fails(exchange: Exchange) -> None:
    if exchange.rpc_method() in _SEND_METHODS:
        request = json.loads(exchange.request_body)
        error = {"code": -32603, "message": "internal error"}
        exchange.set_json({"jsonrpc": "2.0", "id": request.get("id"), "error": error})
        exchange.status = 200
        exchange.headers = {"Content-Type": "application/json"}
    elif exchange.method == "POST" and exchange.path.split("?")[0].endswith("/message:send"):
        error = {"code": 500, "status": "INTERNAL", "message": "internal error"}
        exchange.set_json({"error": error})
        exchange.status = 500
        exchange.headers = {"Content-Type": "application/json"}


def card_cache_without_max_age(exchange: Exchange) -> None:
    if exchange.path.split("?")[0] == CARD_PATH and exchange.headers is not None:
        dropped = ("etag", "cache-control")
        exchange.headers = {k: v for k, v in exchange.headers.items() if k.lower() not in dropped}
        exchange.headers["Cache-Control"] = "no-store"
        exchange.headers["ETag"] = '"proxy-card"'


def _is_cancel(exchange: Exchange) -> bool:
    path = exchange.path.split("?")[0]
    return exchange.rpc_method() in _CANCEL_METHODS or path.endswith(":cancel")


def slow_cancel(exchange: Exchange) -> None:
    """CancelTask answered after 10 s: slower than the registry waits (5 s for data, 8 s in
    all), sooner than the TCK's 30 s; the specification sets no time."""
    if _is_cancel(exchange):
        time.sleep(10)


def large_cancel_answer(exchange: Exchange) -> None:
    """CancelTask's answer followed by 300 KiB of JSON white space: still the same JSON, over
    the registry's 256 KiB; the specification sets no size."""
    if _is_cancel(exchange):
        exchange.body += b" " * (300 * 1024)


def ignore_version(request_headers: dict[str, str]) -> None:
    """Before forwarding: any A2A-Version other than the ones spoken becomes 1.0."""
    for name in list(request_headers):
        if name.lower() == "a2a-version" and request_headers[name] not in ("1.0", "0.3", ""):
            request_headers[name] = "1.0"


@dataclass
class Fault:
    name: str
    what: str
    expected: tuple[str, ...]  # the ids it should make fail (TCK ids where one exists)
    answer: Callable[[Exchange], None] | None = None
    request: Callable[[dict[str, str]], None] | None = None
    spared: tuple[str, ...] = ()  # ids it must NOT make fail (a limit of the registry's own)


FAULTS = [
    Fault(
        "not-found-as-internal",
        "TaskNotFoundError answered as -32603 / HTTP 500",
        ("CORE-GET-002", "CORE-CANCEL-003"),
        answer=not_found_as_internal,
    ),
    Fault(
        "no-error-info",
        "error.data (JSON-RPC) and error.details (HTTP+JSON) dropped",
        ("JSONRPC-ERR-003", "HTTP_JSON-ERR-002"),
        answer=no_error_info,
    ),
    Fault(
        "error-id-null",
        "JSON-RPC error answers carry id null",
        ("JSONRPC-ERR-001",),
        answer=error_id_null,
    ),
    Fault(
        "parse-error-as-invalid-request",
        "-32700 answered as -32600",
        ("REG-JSONRPC-PARSE",),
        answer=_recode(-32700, -32600),
    ),
    Fault(
        "unknown-method-as-invalid-request",
        "-32601 answered as -32600",
        ("REG-JSONRPC-METHOD",),
        answer=_recode(-32601, -32600),
    ),
    Fault(
        "rest-errors-not-aip193",
        "HTTP+JSON errors as {message} instead of AIP-193",
        ("HTTP_JSON-ERR-001",),
        answer=rest_error_not_aip193,
    ),
    Fault(
        "version-ignored",
        "an unsupported A2A-Version is served as 1.0",
        ("VER-SERVER-002",),
        request=ignore_version,
    ),
    Fault(
        "send-fails",
        "SendMessage answered with an internal error",
        ("CORE-SEND-001",),
        answer=send_fails,
    ),
    Fault(
        "card-cache-without-max-age",
        "the card with Cache-Control: no-store and an ETag",
        ("CARD-CACHE-001",),
        answer=card_cache_without_max_age,
    ),
    Fault(
        "slow-cancel",
        "CancelTask answered after 10 s (no rule broken)",
        (),
        answer=slow_cancel,
        spared=("CORE-CANCEL-003",),
    ),
    Fault(
        "large-cancel-answer",
        "CancelTask's answer padded to over 300 KiB (no rule broken)",
        (),
        answer=large_cancel_answer,
        spared=("CORE-CANCEL-003",),
    ),
]


class FaultProxy:
    """Forwards every request to ``upstream`` (an origin) and applies ``fault``."""

    def __init__(self, upstream: str, fault: Fault) -> None:
        self.upstream = upstream
        self.fault = fault
        self.client = httpx.Client(base_url=upstream, timeout=60.0)
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _any(self) -> None:
                owner.handle(self)

            do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _any  # noqa: N815
            do_HEAD = do_OPTIONS = _any  # noqa: N815

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def handle(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        body = handler.rfile.read(length) if length else b""
        headers = {k: v for k, v in handler.headers.items() if k.lower() not in _HOP}
        if self.fault.request is not None:
            self.fault.request(headers)
        exchange = Exchange(handler.command, handler.path, headers, body)
        try:
            answer = self.client.request(
                handler.command, handler.path, headers=headers, content=body
            )
        except httpx.HTTPError as error:
            handler.send_error(502, str(error))
            return
        exchange.status = answer.status_code
        exchange.headers = {k: v for k, v in answer.headers.items() if k.lower() not in _HOP}
        exchange.body = answer.content
        if handler.path.split("?")[0] == CARD_PATH:
            exchange.body = self._card(exchange.body)
        if self.fault.answer is not None:
            self.fault.answer(exchange)
        try:
            handler.send_response(exchange.status)
            for name, value in (exchange.headers or {}).items():
                if name.lower() != "content-encoding":
                    handler.send_header(name, value)
            handler.send_header("Content-Length", str(len(exchange.body)))
            handler.end_headers()
            if handler.command != "HEAD":
                handler.wfile.write(exchange.body)
        except (BrokenPipeError, ConnectionResetError):
            handler.close_connection = True  # the client stopped waiting (slow-cancel)

    def _card(self, body: bytes) -> bytes:
        """The agent's card with its origin (either spelling) replaced by the proxy's."""
        port = self.upstream.rsplit(":", 1)[1]
        mine = self.origin
        text = body.decode()
        for spelling in (f"http://127.0.0.1:{port}", f"http://localhost:{port}"):
            text = text.replace(spelling, mine)
        return text.encode()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.client.close()
