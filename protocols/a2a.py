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

The call is read in protocols/a2a_calls.py, the message's parts in protocols/a2a_parts.py, the
tasks made in protocols/a2a_tasks.py, the errors are protocols/a2a_errors.py's.
"""

from __future__ import annotations

import logging
from typing import Any

from a2a.server.jsonrpc_models import InternalError
from django.core.exceptions import RequestDataTooBig
from django.db import DatabaseError, DataError
from django.http import HttpRequest, JsonResponse
from django.views.decorators.csrf import csrf_exempt

from cards.reads.gate import ANONYMOUS
from cards.reads.params import MAX_LENGTH
from protocols import agent_query
from protocols.a2a_calls import declared_length, parse_call, version_refused
from protocols.a2a_errors import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    NOT_FOUND,
    TASK_NOT_CANCELABLE,
    TASK_NOT_FOUND,
    RpcError,
    reply,
)
from protocols.a2a_parts import flagged, structured_query, text_of, unread_part
from protocols.a2a_tasks import completed_task, spelled, stored_task
from protocols.asgi_app import MAX_BODY
from protocols.own_card import QUERY_MODE
from registry.errors import ProblemError
from registry.limits import client_address

logger = logging.getLogger(__name__)

SEND = {"SendMessage": "1.0", "message/send": "0.3"}
GET = {"GetTask": "1.0", "tasks/get": "0.3"}
CANCEL = {"CancelTask": "1.0", "tasks/cancel": "0.3"}


def _send(version: str, params: dict[str, Any], request: HttpRequest) -> dict[str, Any]:
    message = params.get("message")
    if not isinstance(message, dict) or not isinstance(message.get("parts"), list):
        raise RpcError(INVALID_PARAMS, "params.message needs a parts array")
    parts = message["parts"]
    query = structured_query(parts)
    task_id = message.get("taskId")
    if task_id:
        if stored_task(task_id) is None:
            raise RpcError(TASK_NOT_FOUND, f"Task not found: {task_id}")
        if query is not None or flagged(parts) is not None:
            raise RpcError(
                INVALID_PARAMS,
                f"Structured input rejected: task {task_id} is already running; send a new "
                "message without a taskId",
            )
        raise RpcError(INVALID_PARAMS, f"Task {task_id} is complete; start a new task")
    if query is None:
        unread = unread_part(parts)
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
        text = text_of(parts)
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
    return completed_task(
        version, message, result, total=len(result["agents"]), client=client_address(request)
    )


def _get(version: str, params: dict[str, Any]) -> dict[str, Any]:
    task_id = params.get("id")
    task = stored_task(task_id)
    if task is None:
        raise RpcError(TASK_NOT_FOUND, f"Task not found: {task_id}")
    return task if version == "1.0" else spelled("0.3", task)


def _cancel_refusal(params: dict[str, Any]) -> RpcError:
    """Why ``CancelTask`` cannot cancel: every task this endpoint makes is complete when it is
    answered, so there is never anything left to stop."""
    task_id = params.get("id")
    task = stored_task(task_id)
    if task is None:
        return RpcError(TASK_NOT_FOUND, f"Task not found: {task_id}")
    return RpcError(TASK_NOT_CANCELABLE, f"Task {task_id} is complete; it cannot be canceled")


@csrf_exempt
def a2a_endpoint(request: HttpRequest) -> JsonResponse:
    """One JSON-RPC call (per-client limits: registry/limits.py's middleware).

    Every answer is a JSON-RPC object: another method than POST is a 405 with an invalid-request
    error, a body past ``MAX_BODY`` an invalid-request error read no further than its length."""
    rpc_id = None
    if request.method != "POST":
        response = reply(None, error=RpcError(INVALID_REQUEST, "Use POST: /a2a is JSON-RPC 2.0"))
        response.status_code, response["Allow"] = 405, "POST"
        return response
    try:
        if declared_length(request) > MAX_BODY:
            raise RpcError(INVALID_REQUEST, f"Request too large (limit {MAX_BODY} bytes)")
        try:
            body = request.body
        except RequestDataTooBig:  # past DATA_UPLOAD_MAX_MEMORY_SIZE with no Content-Length
            raise RpcError(INVALID_REQUEST, f"Request too large (limit {MAX_BODY} bytes)") from None
        call = parse_call(body)
        rpc_id = call.get("id")
        refused = version_refused(request)
        if refused is not None:
            raise refused
        method, params = call["method"], call.get("params", {})
        if method in SEND:
            return reply(rpc_id, result=_send(SEND[method], params, request))
        if method in GET:
            return reply(rpc_id, result=_get(GET[method], params))
        if method in CANCEL:
            raise _cancel_refusal(params)
        raise RpcError(NOT_FOUND, f"Method not found: {method}")
    except RpcError as error:
        return reply(rpc_id, error=error)
