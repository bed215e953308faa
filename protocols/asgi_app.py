"""The registry as one ASGI application: ``/mcp`` to the MCP SDK, everything else to Django.

Requests for ``/mcp`` are checked against ``ALLOWED_HOSTS`` like every Django view (a 400 with a
JSON-RPC error object otherwise), read (at most ``MAX_BODY`` bytes) and parsed before the SDK sees
them: bodies that are not JSON, nested too deep (even past the parser's own recursion limit) or
holding an unpaired surrogate escape get a JSON-RPC error object, never a 500.
The MCP SDK's session manager needs the ASGI lifespan, which Django does not speak: lifespan
events go to the MCP app only.
"""

from __future__ import annotations

import json
import logging
import math
import re
from collections.abc import Awaitable, Callable
from typing import Any

from asgiref.sync import sync_to_async
from django.core.exceptions import DisallowedHost
from django.http import HttpRequest

from registry.limits import asgi_wait, limited
from registry.logs import context as log_context
from registry.undecodable import body_fault

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

MCP_PATH = "/mcp"


async def _too_many(send: Send, wait: float) -> None:
    """429 with a JSON-RPC error object and Retry-After (the REST API's per-client limit)."""
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": None,
            "error": {
                "code": -32000,
                "message": "Too many requests from this client; retry later.",
            },
        }
    ).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"retry-after", str(math.ceil(wait)).encode()),
        (b"content-length", str(len(body)).encode()),
    ]
    await send({"type": "http.response.start", "status": 429, "headers": headers})
    await send({"type": "http.response.body", "body": body})


MAX_BODY = 256 * 1024
MAX_DEPTH = 32
INVALID_REQUEST = "Invalid Request: a JSON-RPC 2.0 object is expected"


def nesting_depth(value: Any, limit: int) -> int:
    """Depth of a parsed JSON value, counting stops once past ``limit``."""
    depth, level = 0, [value]
    while level and depth <= limit:
        depth += 1
        nxt: list[Any] = []
        for item in level:
            if isinstance(item, dict):
                nxt.extend(v for v in item.values() if isinstance(v, dict | list))
            elif isinstance(item, list):
                nxt.extend(v for v in item if isinstance(v, dict | list))
        level = nxt
    return depth


_SURROGATE = re.compile("[\ud800-\udfff]")


def surrogate_pointer(value: Any) -> str | None:
    """JSON pointer of the first key or string holding an unpaired surrogate (``"\\ud800"``
    decodes to one, and no UTF-8 store or encoder takes it), or None. The value is already
    known to be nested at most ``MAX_DEPTH`` levels."""
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        pointer, item = stack.pop()
        if isinstance(item, str):
            if _SURROGATE.search(item):
                return pointer or "/"
        elif isinstance(item, dict):
            for key, child in item.items():
                step = f"{pointer}/{str(key).replace('~', '~0').replace('/', '~1')}"
                if _SURROGATE.search(key):
                    return _SURROGATE.sub("\ufffd", step)
                stack.append((step, child))
        elif isinstance(item, list):
            stack.extend((f"{pointer}/{index}", child) for index, child in enumerate(item))
    return None


def parse_error_message(body: bytes) -> str:
    """JSON-RPC's -32700 in words a client can act on: where the body stops being UTF-8 (JSON
    must be, RFC 8259 section 8.1), else where it stops being JSON; never the codec's or the
    parser's own text."""
    fault = body_fault(body)
    if fault is not None:
        return f"Parse error: {fault.sentence('the body')}"
    try:
        json.loads(body.decode("utf-8"))
    except json.JSONDecodeError as exc:
        return f"Parse error: the body is not JSON (line {exc.lineno}, column {exc.colno})"
    except (ValueError, RecursionError):
        pass
    return "Parse error: the body is not JSON"


def surrogate_message(pointer: str) -> str:
    return f"Invalid params: {pointer} contains an unpaired surrogate escape"


def host_allowed(scope: Scope) -> bool:
    """Whether the request's Host (``ALLOWED_HOSTS``, Django's own check) may be served."""
    request = HttpRequest()
    for name, value in scope.get("headers") or []:
        if name == b"host":
            request.META["HTTP_HOST"] = value.decode("latin-1")
        elif name == b"x-forwarded-host":
            request.META["HTTP_X_FORWARDED_HOST"] = value.decode("latin-1")
    host, port = scope.get("server") or ("", 0)
    request.META["SERVER_NAME"], request.META["SERVER_PORT"] = host or "", str(port or "")
    try:
        request.get_host()
    except DisallowedHost as exc:
        logging.getLogger("django.security.DisallowedHost").warning("%s", exc)
        return False
    return True


async def json_rpc_error(send: Send, status: int, code: int, message: str) -> None:
    body = json.dumps(
        {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}}
    ).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", b"%d" % len(body)),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def read_body(receive: Receive, cap: int) -> bytes | None:
    """The whole request body, or None once it passes ``cap`` bytes."""
    chunks: list[bytes] = []
    size = 0
    more = True
    while more:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > cap:
            return None
        chunks.append(chunk)
        more = message.get("more_body", False)
    return b"".join(chunks)


def guarded(
    app: App, *, methods: frozenset[str], cap: int = MAX_BODY, depth: int = MAX_DEPTH
) -> App:
    """``app`` behind the size, nesting and method-name checks for JSON-RPC POSTs."""

    async def guard(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await app(scope, receive, send)
            return
        body = await read_body(receive, cap)
        if body is None:
            await json_rpc_error(send, 413, -32600, f"Request too large (limit {cap} bytes)")
            return
        try:
            parsed = json.loads(body)
        except RecursionError:
            await json_rpc_error(send, 400, -32600, f"Request nested deeper than {depth} levels")
            return
        except ValueError:
            await json_rpc_error(send, 400, -32700, parse_error_message(body))
            return
        if nesting_depth(parsed, depth) > depth:
            await json_rpc_error(send, 400, -32600, f"Request nested deeper than {depth} levels")
            return
        if not isinstance(parsed, dict) or not isinstance(parsed.get("id"), str | int | None):
            # A batch, a bare value or an object id: the SDK would answer pydantic's report.
            await json_rpc_error(send, 400, -32600, INVALID_REQUEST)
            return
        pointer = surrogate_pointer(parsed)
        if pointer is not None:
            await json_rpc_error(send, 400, -32602, surrogate_message(pointer))
            return
        method = parsed.get("method") if isinstance(parsed, dict) else None
        if isinstance(method, str) and method not in methods:
            await json_rpc_error(send, 404, -32601, f"Method not found: {method}")
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await app(scope, replay, send)

    return guard


def _request_id(scope: Scope) -> str:
    """The request's id as the middleware takes it for Django's views: the client's
    ``X-Request-ID`` when it is safe to keep, else a new one."""
    for name, value in scope.get("headers") or []:
        if name == b"x-request-id":
            kept = log_context.accepted_request_id(value.decode("latin-1"))
            if kept:
                return kept
    return log_context.new_request_id()


def with_request_id(app: App) -> App:
    """``app`` with a request id, as Django's views get from registry.logs.middleware (``/mcp``
    does not pass through Django's middleware): set for every log line the request writes
    (tool calls run in threads that copy it) and returned in ``X-Request-ID``."""

    async def tagged(scope: Scope, receive: Receive, send: Send) -> None:
        rid = _request_id(scope)
        header = (b"x-request-id", rid.encode())

        async def send_tagged(message: Message) -> None:
            if message["type"] == "http.response.start":
                kept = [h for h in message.get("headers") or [] if h[0].lower() != header[0]]
                message = {**message, "headers": [*kept, header]}
            await send(message)

        token = log_context.request_id.set(rid)
        try:
            await app(scope, receive, send_tagged)
        finally:
            log_context.request_id.reset(token)

    return tagged


def registry_application(
    django_app: App, make_mcp_app: Callable[[], App], methods: frozenset[str]
) -> App:
    """Dispatch on the path: ``/mcp`` to the MCP app, the rest to ``django_app``.

    The SDK's session manager runs once per instance, so each lifespan (each server started in
    this process, as the tests do) gets a fresh MCP app from ``make_mcp_app``.
    """
    current: list[App] = [guarded(make_mcp_app(), methods=methods)]

    async def application(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            mcp_app = make_mcp_app()
            current[0] = guarded(mcp_app, methods=methods)
            await mcp_app(scope, receive, send)
        elif scope["type"] == "http" and (
            scope["path"] == MCP_PATH or scope["path"].startswith(MCP_PATH + "/")
        ):
            await mcp(scope, receive, send)
        else:
            await django_app(scope, receive, send)

    @with_request_id
    async def mcp(scope: Scope, receive: Receive, send: Send) -> None:
        if not host_allowed(scope):
            await json_rpc_error(send, 400, -32600, "Invalid Host header: not allowed")
            return
        # The limiter's cache call is blocking: a worker thread of its own, not the thread
        # Django's sync views share (that one may be busy serving a tool call).
        wait = await sync_to_async(asgi_wait, thread_sensitive=False)(scope) if limited() else 0
        if wait:
            await _too_many(send, wait)
            return
        await current[0](scope, receive, send)

    return application
