"""The HTTP side of ``/mcp``: every error a JSON-RPC object, and the methods a client may send."""

from __future__ import annotations

import json as _json
import typing
from http import HTTPStatus
from typing import Any

from mcp import types


def json_errors(app: Any) -> Any:
    """``app`` with every error it answers in plain text as a JSON-RPC error object.

    The SDK's transport checks answer some refusals as text (a POST without
    ``Content-Type: application/json`` is ``400 Invalid Content-Type header``); a client of
    /mcp gets a JSON-RPC error for every failure, with the same status and the SDK's words."""

    async def wrapped(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        held: dict[str, Any] = {}

        async def relay(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                headers = dict(message.get("headers") or [])
                if message["status"] >= 400 and b"json" not in headers.get(b"content-type", b""):
                    held.update(status=message["status"], body=b"")
                    return
            elif held and message["type"] == "http.response.body":
                held["body"] += message.get("body", b"")
                if message.get("more_body"):
                    return
                status = int(held["status"])
                text = held["body"].decode("utf-8", "replace").strip()
                body = _json.dumps({"jsonrpc": "2.0", "id": None, "error": {
                    "code": -32600, "message": text[:300] or HTTPStatus(status).phrase,
                }}).encode()  # fmt: skip
                await send({"type": "http.response.start", "status": status, "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                ]})  # fmt: skip
                await send({"type": "http.response.body", "body": body})
                return
            await send(message)

        await app(scope, receive, relay)

    return wrapped


def _method_names(union: Any) -> set[str]:
    members = typing.get_args(union.model_fields["root"].annotation)
    return {
        name
        for member in members
        for name in typing.get_args(member.model_fields["method"].annotation)
    }


# Every method a client may send; anything else is answered "Method not found" (-32601).
METHODS = frozenset(_method_names(types.ClientRequest) | _method_names(types.ClientNotification))
