"""The A2A endpoint's JSON-RPC errors (a2a-sdk's error models and A2A's own codes), and replies."""

from __future__ import annotations

from typing import Any

from a2a.server.jsonrpc_models import (
    InvalidParamsError,
    InvalidRequestError,
    JSONParseError,
    JSONRPCError,
    MethodNotFoundError,
)
from django.http import JsonResponse

# JSON-RPC error objects are a2a-sdk's server models (a2a.server.jsonrpc_models); -32001 is
# A2A's TaskNotFoundError.
PARSE_ERROR, INVALID_REQUEST, NOT_FOUND, INVALID_PARAMS = (
    JSONParseError,
    InvalidRequestError,
    MethodNotFoundError,
    InvalidParamsError,
)
TASK_NOT_FOUND, TASK_NOT_CANCELABLE, VERSION_NOT_SUPPORTED = -32001, -32002, -32009
# Each A2A error names itself in a google.rpc.ErrorInfo in ``error.data`` (spec 9.5).
_REASONS = {
    TASK_NOT_FOUND: "TASK_NOT_FOUND",
    TASK_NOT_CANCELABLE: "TASK_NOT_CANCELABLE",
    VERSION_NOT_SUPPORTED: "VERSION_NOT_SUPPORTED",
}


class RpcError(Exception):
    """A JSON-RPC error: ``kind`` is one of a2a-sdk's error models or an A2A error code."""

    def __init__(self, kind: type[JSONRPCError] | int, message: str, data: Any = None) -> None:
        super().__init__(message)
        if isinstance(kind, int):
            if data is None and kind in _REASONS:
                data = [
                    {
                        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                        "reason": _REASONS[kind],
                        "domain": "a2a-protocol.org",
                    }
                ]
            self.error = JSONRPCError(code=kind, message=message, data=data)
        else:
            self.error = kind.model_validate({"message": message, "data": data})


def reply(rpc_id: Any, *, result: Any = None, error: RpcError | None = None) -> JsonResponse:
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": rpc_id}
    if error is not None:
        body["error"] = error.error.model_dump(exclude_none=True)
    else:
        body["result"] = result
    return JsonResponse(body)
