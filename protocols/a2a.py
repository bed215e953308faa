"""The A2A JSON-RPC endpoint at ``/a2a``: v1.0 method names and the v0.3 spellings.

Seed 000 section 3, for the registry's own schemas (``agentQuery`` in, ``agentQueryResult`` out):

- the first data part whose media type is ``application/json;schema=<name>`` is flagged;
- an undeclared name or data that does not validate is a structured input error: JSON-RPC
  Invalid params (-32602) with ``data.errors`` as ``{pointer, message}``;
- a structured part in a message for an existing task is rejected (task already running);
- a valid query becomes a completed task whose artifact is a data part with media type
  ``application/json;schema=agentQueryResult`` and seed 002 progress in the task metadata;
- plain text is answered by the natural-language search, the same way.

Tasks are kept for ``GetTask`` and ``CancelTask`` within bounds (protocols/a2a_store.py). A task
that is not kept is still answered; ``GetTask`` then says it is not found. Without Redis the
answer is the same (nothing kept, nothing raised); ``GetTask`` answers -32603 "task store
unavailable". Every task is complete when it is answered, so ``CancelTask`` of a kept task is
TaskNotCancelableError (-32002). A request whose ``A2A-Version`` names a version this endpoint
does not speak (it speaks 1.0 and, by the v0.3 method names, 0.3) is VersionNotSupportedError
(-32009). Bad JSON-RPC gets the protocol's error objects, never a 500.
"""

from __future__ import annotations

import json
import logging
import re
import uuid
from datetime import UTC, datetime
from typing import Any

from a2a.server.jsonrpc_models import (
    InternalError,
    InvalidParamsError,
    InvalidRequestError,
    JSONParseError,
    JSONRPCError,
    MethodNotFoundError,
)
from django.core.exceptions import RequestDataTooBig
from django.db import DatabaseError, DataError
from django.http import HttpRequest, JsonResponse
from django.views.decorators.csrf import csrf_exempt

from cards.progress import EXTENSION_URI as PROGRESS_URI
from cards.reads.gate import ANONYMOUS
from cards.reads.params import MAX_LENGTH
from protocols import a2a_store, agent_query
from protocols.asgi_app import INVALID_REQUEST as INVALID_REQUEST_MESSAGE
from protocols.asgi_app import (
    MAX_BODY,
    MAX_DEPTH,
    nesting_depth,
    parse_error_message,
    surrogate_message,
    surrogate_pointer,
)
from protocols.own_card import QUERY, QUERY_MODE, RESULT_MODE
from registry.errors import ProblemError
from registry.limits import client_address
from registry.mediatypes import MediaTypeError, parse_media_type

logger = logging.getLogger(__name__)

SEND = {"SendMessage": "1.0", "message/send": "0.3"}
GET = {"GetTask": "1.0", "tasks/get": "0.3"}
CANCEL = {"CancelTask": "1.0", "tasks/cancel": "0.3"}
# The A2A-Version values (major.minor; a patch is ignored) this endpoint answers. An absent
# header means 0.3 (specification section 3.6), which the v0.3 method names still serve.
VERSIONS = ("1.0", "0.3")
_VERSION = re.compile(r"(\d{1,4})\.(\d{1,4})(?:\.\d{1,4})?")
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
STATES = {"completed": "TASK_STATE_COMPLETED"}


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


def _reply(rpc_id: Any, *, result: Any = None, error: RpcError | None = None) -> JsonResponse:
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": rpc_id}
    if error is not None:
        body["error"] = error.error.model_dump(exclude_none=True)
    else:
        body["result"] = result
    return JsonResponse(body)


def _flagged(parts: list[Any]) -> tuple[int, str, Any] | None:
    """``(index, schema name, data)`` of the first part flagged for structured processing."""
    for index, part in enumerate(parts):
        if not isinstance(part, dict) or "data" not in part:
            continue
        raw = part.get("metadata")
        metadata: dict[str, Any] = raw if isinstance(raw, dict) else {}
        for text in (metadata.get("mimeType"), metadata.get("mediaType"), part.get("mediaType")):
            if not isinstance(text, str):
                continue
            try:
                media = parse_media_type(text)
            except MediaTypeError:
                continue
            if media.essence == "application/json" and media.schema is not None:
                return index, media.schema, part["data"]
    return None


def _unread(parts: list[Any]) -> int | None:
    """The index of the first part this endpoint cannot read (a file, or data without the
    agentQuery flag) in a message with no text: answering it as an empty query would drop it."""
    if _text(parts):
        return None
    for index, part in enumerate(parts):
        if not isinstance(part, dict) or not isinstance(part.get("text"), str):
            return index
    return None


def _text(parts: list[Any]) -> str:
    return " ".join(
        p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)
    ).strip()


def _structured_query(parts: list[Any]) -> dict[str, Any] | None:
    found = _flagged(parts)
    if found is None:
        return None
    index, name, data = found
    pointer = f"/message/parts/{index}"
    if name != QUERY:
        raise RpcError(
            INVALID_PARAMS,
            f"Structured input error: this agent declares no schema named {name!r}",
            {"errors": [{"pointer": pointer + "/metadata/mimeType",
                         "message": f"undeclared schema {name!r}; declared: agentQuery"}]},
        )  # fmt: skip
    errors = agent_query.query_errors(data)
    if errors:
        for error in errors:
            error["pointer"] = pointer + "/data" + error["pointer"]
        # a2a-sdk's client keeps only the message (not data.errors): it names the first error.
        raise RpcError(
            INVALID_PARAMS,
            _naming_first("Structured input error: the data does not match agentQuery", errors),
            {"errors": errors},
        )
    return dict(data)


def _naming_first(summary: str, errors: list[dict[str, str]]) -> str:
    """``summary`` with the first error's pointer and reason (and how many more there are), so
    a client that shows only the message still learns what to change."""
    if not errors:
        return summary
    first = errors[0]
    more = f" (and {len(errors) - 1} more in data.errors)" if len(errors) > 1 else ""
    return f"{summary}: {first['pointer'] or '/'}: {first['message']}{more}"


def _unavailable() -> RpcError:
    return RpcError(InternalError, "The task store is unavailable; retry in a moment.")


def _stored_task(task_id: Any) -> dict[str, Any] | None:
    try:
        return a2a_store.stored_task(task_id)
    except a2a_store.StoreUnavailable:
        raise _unavailable() from None


def _task(
    version: str, message: dict[str, Any], result: dict[str, Any], total: int, client: str
) -> dict[str, Any]:
    now = datetime.now(UTC).isoformat().replace("+00:00", "Z")
    task_id, context_id = str(uuid.uuid4()), message.get("contextId") or str(uuid.uuid4())
    # v1.0 names a part's media type in ``mediaType``; seed 000 in ``metadata.mimeType``.
    data_part: dict[str, Any] = {
        "data": result,
        "mediaType": RESULT_MODE,
        "metadata": {"mimeType": RESULT_MODE},
    }
    summary = f"{len(result['agents'])} agent(s) found"
    progress = {
        "trackers": [
            {"id": "agent-query", "progress": total, "total": total, "status": "completed",
             "message": summary, "startedAt": now, "updatedAt": now}
        ],
    }  # fmt: skip
    task: dict[str, Any] = {
        "id": task_id,
        "contextId": context_id,
        "status": {"state": STATES["completed"], "timestamp": now},
        "artifacts": [
            {
                "artifactId": "agent-query-result",
                "name": "agentQueryResult",
                "parts": [data_part, {"text": summary}],
            }
        ],
        "history": [{**message, "taskId": task_id, "contextId": context_id}],
        "metadata": {PROGRESS_URI: progress},
    }
    a2a_store.keep(task, client)
    return _spelled(version, task)


def _spelled(version: str, task: dict[str, Any]) -> dict[str, Any]:
    """v1.0 wraps the task (``{"task": ...}``); v0.3 answers it bare, with ``kind`` fields."""
    if version == "1.0":
        return {"task": task}
    old = json.loads(json.dumps(task))
    old["kind"] = "task"
    old["status"]["state"] = "completed"
    for artifact in old["artifacts"]:
        for part in artifact["parts"]:
            part["kind"] = "data" if "data" in part else "text"
            part.pop("mediaType", None)  # a v1.0 member: v0.3 parts say it in their metadata
    return old


def _send(version: str, params: dict[str, Any], request: HttpRequest) -> dict[str, Any]:
    message = params.get("message")
    if not isinstance(message, dict) or not isinstance(message.get("parts"), list):
        raise RpcError(INVALID_PARAMS, "params.message needs a parts array")
    parts = message["parts"]
    query = _structured_query(parts)
    task_id = message.get("taskId")
    if task_id:
        if _stored_task(task_id) is None:
            raise RpcError(TASK_NOT_FOUND, f"Task not found: {task_id}")
        if query is not None or _flagged(parts) is not None:
            raise RpcError(
                INVALID_PARAMS,
                f"Structured input rejected: task {task_id} is already running; send a new "
                "message without a taskId",
            )
        raise RpcError(INVALID_PARAMS, f"Task {task_id} is complete; start a new task")
    if query is None:
        unread = _unread(parts)
        if unread is not None:
            raise RpcError(
                INVALID_PARAMS,
                f"part {unread} is neither text nor an agentQuery data part; send text, or data "
                f"with metadata.mimeType {QUERY_MODE}",
                {"errors": [{"pointer": f"/message/parts/{unread}",
                             "message": "neither text nor an agentQuery data part"}]},
            )  # fmt: skip
        # Blank or absent text asks for nothing in particular: every agent, in the API's list
        # order, as an empty query does at every door (docs/orchestrators.md).
        text = _text(parts)
        if len(text) > MAX_LENGTH:
            # The limit of the API's q, ARD's query.text, MCP's text and agentQuery's text.
            message_text = f"text is longer than {MAX_LENGTH} characters"
            raise RpcError(
                INVALID_PARAMS, message_text,
                {"errors": [{"pointer": "/message/parts", "message": message_text}]},
            )  # fmt: skip
        query = {"text": text}
    try:
        result = agent_query.answer(query, viewer=ANONYMOUS, request=request)
    except ProblemError as exc:
        raise RpcError(INVALID_PARAMS, exc.detail, {"errors": exc.errors or []}) from None
    except DataError:
        # A value PostgreSQL refuses (a NUL character in a payload's key, say).
        raise RpcError(
            INVALID_PARAMS, "The message holds a value the database cannot take (a NUL character?)"
        ) from None
    except DatabaseError:
        logger.warning("A2A message not answered: the database is unavailable", exc_info=True)
        raise RpcError(
            InternalError, "The registry's database is unavailable; retry in a moment."
        ) from None
    return _task(
        version, message, result, total=len(result["agents"]), client=client_address(request)
    )


def _get(version: str, params: dict[str, Any]) -> dict[str, Any]:
    task_id = params.get("id")
    task = _stored_task(task_id)
    if task is None:
        raise RpcError(TASK_NOT_FOUND, f"Task not found: {task_id}")
    return task if version == "1.0" else _spelled("0.3", task)


def _cancel_refusal(params: dict[str, Any]) -> RpcError:
    """Why ``CancelTask`` cannot cancel: every task this endpoint makes is complete when it is
    answered, so there is never anything left to stop."""
    task_id = params.get("id")
    task = _stored_task(task_id)
    if task is None:
        return RpcError(TASK_NOT_FOUND, f"Task not found: {task_id}")
    return RpcError(TASK_NOT_CANCELABLE, f"Task {task_id} is complete; it cannot be canceled")


def _version_refused(request: HttpRequest) -> RpcError | None:
    """VersionNotSupportedError when the request asks for a version this endpoint does not
    speak (the header, else the ``A2A-Version`` query parameter; section 3.6.1)."""
    asked = request.headers.get("A2A-Version") or request.GET.get("A2A-Version") or ""
    asked = asked.strip()
    if not asked:
        return None  # an empty value means 0.3 (section 3.6.2), which is spoken
    # Major.Minor decides; a patch number is ignored (section 3.6).
    found = _VERSION.fullmatch(asked)
    if found and f"{int(found[1])}.{int(found[2])}" in VERSIONS:
        return None
    return RpcError(
        VERSION_NOT_SUPPORTED,
        f"A2A-Version {asked[:40]!r} is not supported; this endpoint speaks "
        + " and ".join(VERSIONS),
    )


def _declared_length(request: HttpRequest) -> int:
    try:
        return int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return 0


def _parse(body: bytes) -> dict[str, Any]:
    if len(body) > MAX_BODY:
        raise RpcError(INVALID_REQUEST, f"Request too large (limit {MAX_BODY} bytes)")
    try:
        call = json.loads(body)
    except RecursionError:
        raise RpcError(INVALID_REQUEST, f"Request nested deeper than {MAX_DEPTH} levels") from None
    except ValueError:
        raise RpcError(PARSE_ERROR, parse_error_message(body)) from None
    if nesting_depth(call, MAX_DEPTH) > MAX_DEPTH:
        raise RpcError(INVALID_REQUEST, f"Request nested deeper than {MAX_DEPTH} levels")
    pointer = surrogate_pointer(call)
    if pointer is not None:
        raise RpcError(INVALID_PARAMS, surrogate_message(pointer))
    if (
        not isinstance(call, dict)
        or call.get("jsonrpc") != "2.0"
        or not isinstance(call.get("method"), str)
    ):
        raise RpcError(INVALID_REQUEST, INVALID_REQUEST_MESSAGE)
    if not isinstance(call.get("params", {}), dict):
        raise RpcError(INVALID_PARAMS, "params must be an object")
    return call


@csrf_exempt
def a2a_endpoint(request: HttpRequest) -> JsonResponse:
    """One JSON-RPC call (per-client limits: registry/limits.py's middleware).

    Every answer is a JSON-RPC object: another method than POST is a 405 with an invalid-request
    error, a body past ``MAX_BODY`` an invalid-request error read no further than its length."""
    rpc_id = None
    if request.method != "POST":
        response = _reply(None, error=RpcError(INVALID_REQUEST, "Use POST: /a2a is JSON-RPC 2.0"))
        response.status_code, response["Allow"] = 405, "POST"
        return response
    try:
        if _declared_length(request) > MAX_BODY:
            raise RpcError(INVALID_REQUEST, f"Request too large (limit {MAX_BODY} bytes)")
        try:
            body = request.body
        except RequestDataTooBig:  # past DATA_UPLOAD_MAX_MEMORY_SIZE with no Content-Length
            raise RpcError(INVALID_REQUEST, f"Request too large (limit {MAX_BODY} bytes)") from None
        call = _parse(body)
        rpc_id = call.get("id")
        refused = _version_refused(request)
        if refused is not None:
            raise refused
        method, params = call["method"], call.get("params", {})
        if method in SEND:
            return _reply(rpc_id, result=_send(SEND[method], params, request))
        if method in GET:
            return _reply(rpc_id, result=_get(GET[method], params))
        if method in CANCEL:
            raise _cancel_refusal(params)
        raise RpcError(NOT_FOUND, f"Method not found: {method}")
    except RpcError as error:
        return _reply(rpc_id, error=error)
