"""A2A requests and answers as they cross the wire, per binding and protocol version.

v1.0 (specification section 9 and 11): JSON-RPC methods ``GetTask``, ``CancelTask``,
``SendMessage``; HTTP+JSON ``GET /tasks/{id}``, ``POST /tasks/{id}:cancel``, ``POST
/message:send``; parts carry ``mediaType``; errors map TaskNotFoundError to -32001 / 404 and
VersionNotSupportedError to -32009 / 400. v0.3: ``tasks/get``, ``tasks/cancel``,
``message/send``; ``/v1/`` paths; parts carry ``kind`` and ``metadata.mimeType`` (seed 000).
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from live.interfaces import Interface

TASK_NOT_FOUND = -32001
VERSION_NOT_SUPPORTED = -32009
METHOD_NOT_FOUND = -32601
PARSE_ERROR = -32700

_METHODS = {
    "1.0": {"get": "GetTask", "cancel": "CancelTask", "send": "SendMessage"},
    "0.3": {"get": "tasks/get", "cancel": "tasks/cancel", "send": "message/send"},
}
# Task states that say "the data was not accepted" (v1.0 enum names and v0.3 words).
REFUSING_STATES = frozenset(
    {
        "TASK_STATE_REJECTED",
        "TASK_STATE_FAILED",
        "TASK_STATE_INPUT_REQUIRED",
        "rejected",
        "failed",
        "input-required",
    }
)
# The metadata key every message of the registry carries (docs/live-checks.md).
CHECK_METADATA_KEY = "a2a-registry/live-check"


def method(interface: Interface, operation: str) -> str:
    return _METHODS["0.3" if interface.legacy else "1.0"][operation]


def version_headers(interface: Interface) -> dict[str, str]:
    """v1.0 clients MUST send A2A-Version; a v0.3 server reads an empty one as 0.3."""
    return {} if interface.legacy else {"A2A-Version": interface.version}


def unknown_task_id() -> str:
    return f"registry-live-check-{uuid.uuid4()}"


def rpc(method_name: str, params: dict[str, Any], request_id: str) -> bytes:
    document = {"jsonrpc": "2.0", "id": request_id, "method": method_name, "params": params}
    return json.dumps(document).encode()


def rest_url(interface: Interface, path: str) -> str:
    """``path`` (``tasks/x``, ``message:send``) under the interface URL, ``/v1/`` for v0.3."""
    base = interface.url.rstrip("/")
    return f"{base}/v1/{path}" if interface.legacy else f"{base}/{path}"


# --- JSON-RPC answers -----------------------------------------------------------------------


def rpc_error(document: Any) -> dict[str, Any] | None:
    """The ``error`` member of a JSON-RPC answer, when it has one that is an object."""
    if isinstance(document, dict) and isinstance(document.get("error"), dict):
        return document["error"]
    return None


def rpc_shape_problems(document: Any, request_id: str | None, *, v1: bool) -> list[str]:
    """What keeps ``document`` from being a JSON-RPC 2.0 error response to ``request_id``
    (JSONRPC-ERR-001); ``request_id`` None: the request could not be read (id must be null)."""
    if not isinstance(document, dict):
        return ["the answer is not a JSON object"]
    problems = []
    if document.get("jsonrpc") != "2.0":
        problems.append('"jsonrpc" is not "2.0"')
    if document.get("id") != request_id:
        problems.append(f'"id" is {json.dumps(document.get("id"))}, not {json.dumps(request_id)}')
    if "result" in document:
        problems.append('an error answer has a "result"')
    error = document.get("error")
    if not isinstance(error, dict):
        problems.append('no "error" object')
        return problems
    code = error.get("code")
    if not isinstance(code, int) or isinstance(code, bool):
        problems.append('"error.code" is not an integer')
    if not isinstance(error.get("message"), str):
        problems.append('"error.message" is not a string')
    if v1 and "data" in error and not isinstance(error["data"], list):
        problems.append('"error.data" is not an array (v1.0: google.protobuf.Any messages)')
    return problems


# --- google.rpc.ErrorInfo (spec 9.5, 11.6) -------------------------------------------------

ERROR_INFO_TYPE = "type.googleapis.com/google.rpc.ErrorInfo"
A2A_DOMAIN = "a2a-protocol.org"
# The ErrorInfo reason of each A2A error the checks provoke, by its JSON-RPC code.
REASONS = {TASK_NOT_FOUND: "TASK_NOT_FOUND", VERSION_NOT_SUPPORTED: "VERSION_NOT_SUPPORTED"}
# The HTTP status each of them maps to (spec 5.4).
HTTP_STATUS = {TASK_NOT_FOUND: 404, VERSION_NOT_SUPPORTED: 400}


def a2a_error_details(exchange: Any, expected: int, *, rest: bool) -> Any:
    """The details of an answer that is the A2A error ``expected`` (a JSON-RPC code): its
    ``error.data`` (JSON-RPC) or ``error.details`` (HTTP+JSON), ``[]`` when absent; None when
    the answer is not that error (a wrong code is another check's failure, not judged here)."""
    document = exchange.json()
    error = document.get("error") if isinstance(document, dict) else None
    if not isinstance(error, dict):
        return None
    if rest:
        if exchange.status != HTTP_STATUS[expected]:
            return None
        return error.get("details", [])
    if error.get("code") != expected:
        return None
    return error.get("data", [])


def error_info_problems(details: Any, reason: str) -> list[str]:
    """What keeps ``details`` from carrying the ErrorInfo of the A2A error ``reason``: an
    object with ``"@type"`` ErrorInfo, that ``reason`` and the domain ``a2a-protocol.org``."""
    if not isinstance(details, list):
        return ["the error details are not an array"]
    infos = [d for d in details if isinstance(d, dict) and d.get("@type") == ERROR_INFO_TYPE]
    if not infos:
        return [f"no google.rpc.ErrorInfo among the error details (expected reason {reason})"]
    for info in infos:
        if info.get("reason") == reason and info.get("domain") == A2A_DOMAIN:
            return []
    found = infos[0]
    return [
        f"the ErrorInfo has reason {json.dumps(found.get('reason'))} and domain "
        f"{json.dumps(found.get('domain'))}; expected {json.dumps(reason)} and "
        f"{json.dumps(A2A_DOMAIN)}"
    ]


# --- messages -------------------------------------------------------------------------------


def _check_metadata(check_id: str, registry: str) -> dict[str, Any]:
    return {CHECK_METADATA_KEY: {"check": check_id, "registry": registry}}


def data_message(
    interface: Interface, payload: Any, media_type: str, check_id: str, registry: str
) -> dict[str, Any]:
    """A user message with one structured data part (seed 000 section 2)."""
    message_id = str(uuid.uuid4())
    metadata = _check_metadata(check_id, registry)
    if interface.legacy:
        part = {"kind": "data", "data": payload, "metadata": {"mimeType": media_type}}
        return {
            "kind": "message",
            "messageId": message_id,
            "role": "user",
            "parts": [part],
            "metadata": metadata,
        }
    return {
        "messageId": message_id,
        "role": "ROLE_USER",
        "parts": [{"data": payload, "mediaType": media_type}],
        "metadata": metadata,
    }


def text_message(interface: Interface, text: str, check_id: str, registry: str) -> dict[str, Any]:
    message_id = str(uuid.uuid4())
    metadata = _check_metadata(check_id, registry)
    if interface.legacy:
        return {
            "kind": "message",
            "messageId": message_id,
            "role": "user",
            "parts": [{"kind": "text", "text": text}],
            "metadata": metadata,
        }
    return {
        "messageId": message_id,
        "role": "ROLE_USER",
        "parts": [{"text": text}],
        "metadata": metadata,
    }


def send_params(interface: Interface, message: dict[str, Any]) -> dict[str, Any]:
    if interface.legacy:
        return {"message": message, "configuration": {"blocking": True}}
    return {"message": message}


def task_or_message(result: Any, interface: Interface) -> tuple[str, dict[str, Any] | None]:
    """(``task`` | ``message`` | ``other``, the object) of a SendMessage result."""
    if not isinstance(result, dict):
        return "other", None
    if interface.legacy or "kind" in result:
        kind = result.get("kind")
        if kind in ("task", "message"):
            return str(kind), result
    for kind in ("task", "message"):
        if isinstance(result.get(kind), dict):
            return kind, result[kind]
    if "status" in result and "id" in result:  # a bare v1.0 Task
        return "task", result
    return "other", None


def task_state(task: dict[str, Any]) -> str | None:
    status = task.get("status")
    state = status.get("state") if isinstance(status, dict) else None
    return state if isinstance(state, str) else None


def data_parts(task: dict[str, Any]) -> list[tuple[str | None, Any]]:
    """(media type, data) of every data part of the task's artifacts (``mediaType`` in v1.0,
    ``metadata.mimeType`` in v0.3 and seed 000)."""
    out: list[tuple[str | None, Any]] = []
    for artifact in task.get("artifacts") or []:
        if not isinstance(artifact, dict):
            continue
        for part in artifact.get("parts") or []:
            if not isinstance(part, dict) or "data" not in part:
                continue
            found = part.get("metadata")
            metadata: dict[str, Any] = found if isinstance(found, dict) else {}
            media = part.get("mediaType") or metadata.get("mimeType") or metadata.get("mediaType")
            out.append((media if isinstance(media, str) else None, part["data"]))
    return out
