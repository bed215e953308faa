"""A hand-made A2A v1.0 agent (JSON-RPC and HTTP+JSON on Starlette, no a2a-sdk server),
conformant on every point the live checks probe. Each broken agent (broken.py) is a subclass
overriding exactly one of the methods in "The rules" below.

Answers follow the specification's tables (spec 5.4 error mappings, 9.5 JSON-RPC errors,
11.6 google.rpc.Status bodies) and, where the spec leaves room, what a2a-sdk 1.3.0's server
does: a missing A2A-Version header means 0.3, and the REST binding checks the version before
it reads the body.
"""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp

from tests.live.cards import CARD_PATH, JSONRPC_PATH, PROGRESS_EXTENSION, REST_PATH, card_v1
from tests.live.skills import Outcome, answer, fair_verdict

JSON = dict[str, Any]


class Fault(Exception):
    """An A2A error, by the name the specification gives it (``TaskNotFoundError``)."""

    def __init__(self, name: str, message: str) -> None:
        super().__init__(message)
        self.name = name
        self.message = message


# name -> (JSON-RPC code, HTTP status, google.rpc status, ErrorInfo reason): spec 5.4, 9.5
# and 11.6 (the reasons of the non-A2A errors are a2a-sdk's).
ERRORS: dict[str, tuple[int, int, str, str]] = {
    "JSONParseError": (-32700, 400, "INVALID_ARGUMENT", "INVALID_REQUEST"),
    "InvalidRequestError": (-32600, 400, "INVALID_ARGUMENT", "INVALID_REQUEST"),
    "MethodNotFoundError": (-32601, 404, "NOT_FOUND", "METHOD_NOT_FOUND"),
    "InvalidParamsError": (-32602, 400, "INVALID_ARGUMENT", "INVALID_PARAMS"),
    "InternalError": (-32603, 500, "INTERNAL", "INTERNAL"),
    "TaskNotFoundError": (-32001, 404, "NOT_FOUND", "TASK_NOT_FOUND"),
    "TaskNotCancelableError": (-32002, 400, "FAILED_PRECONDITION", "TASK_NOT_CANCELABLE"),
    "VersionNotSupportedError": (-32009, 400, "FAILED_PRECONDITION", "VERSION_NOT_SUPPORTED"),
}

_JSONRPC_METHODS = ("SendMessage", "GetTask", "CancelTask")
_FINAL_STATES = {
    "TASK_STATE_COMPLETED",
    "TASK_STATE_FAILED",
    "TASK_STATE_REJECTED",
    "TASK_STATE_CANCELED",
}


def _info(fault: Fault) -> JSON:
    """The google.rpc.ErrorInfo naming the error (spec 11.6)."""
    return {
        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
        "reason": ERRORS[fault.name][3],
        "domain": "a2a-protocol.org",
    }


def _now() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


class HandAgent:
    """The conformant hand-made agent. ``received`` holds the message of every SendMessage
    it was sent (before any check, so nothing sent escapes it); ``tasks`` its tasks."""

    kind = "handmade"

    def __init__(self, origin: str, received: list[JSON], **options: Any) -> None:
        self.origin = origin
        self.received = received
        self.options = options
        self.tasks: dict[str, JSON] = {}

    # --- The rules (a broken agent overrides one) -------------------------------------

    def card(self) -> JSON:
        return card_v1(name=f"hand-made agent ({self.kind})", origin=self.origin)

    def supports(self, version: str) -> bool:
        """Spec 3.6: Major.Minor must match; a missing header means 0.3."""
        return version.split(".")[:2] == ["1", "0"]

    def outcome(self, message: JSON) -> Outcome:
        return answer(message, validate=True, verdict=fair_verdict)

    def reply(self, message: JSON) -> JSON:
        """The SendMessageResponse: a Task, since every skill starts one."""
        outcome = self.outcome(message)
        task_id, context_id = str(uuid.uuid4()), str(message.get("contextId") or uuid.uuid4())
        status_message: JSON = {
            "messageId": str(uuid.uuid4()),
            "contextId": context_id,
            "taskId": task_id,
            "role": "ROLE_AGENT",
            "parts": [{"text": outcome.reply}],
        }
        if outcome.progress is not None:
            status_message["metadata"] = {PROGRESS_EXTENSION: outcome.progress}
        task: JSON = {
            "id": task_id,
            "contextId": context_id,
            "status": {"state": outcome.state, "message": status_message, "timestamp": _now()},
            "history": [{**message, "taskId": task_id, "contextId": context_id}],
        }
        if outcome.parts:
            task["artifacts"] = [
                {"artifactId": str(uuid.uuid4()), "name": "answer", "parts": outcome.parts}
            ]
        self.tasks[task_id] = task
        return {"task": task}

    def jsonrpc_error(self, request_id: Any, fault: Fault) -> JSON:
        """Spec 9.5: code, message, and the details in ``data``."""
        error = {"code": ERRORS[fault.name][0], "message": fault.message}
        return {"jsonrpc": "2.0", "id": request_id, "error": {**error, "data": [_info(fault)]}}

    def rest_error(self, fault: Fault) -> Response:
        """Spec 11.6: a google.rpc.Status body, the HTTP status in ``code`` as well."""
        _, status, grpc_status, _ = ERRORS[fault.name]
        error = {"code": status, "status": grpc_status, "message": fault.message}
        return JSONResponse({"error": {**error, "details": [_info(fault)]}}, status_code=status)

    async def intercept(self, request: Request) -> Response | None:
        """An answer given before the protocol is looked at, or None (the rule: none)."""
        return None

    # --- Operations ---------------------------------------------------------------------

    def get_task(self, task_id: str) -> JSON:
        if task_id not in self.tasks:
            raise Fault("TaskNotFoundError", "Task not found")
        return self.tasks[task_id]

    def cancel_task(self, task_id: str) -> JSON:
        task = self.get_task(task_id)
        if task["status"]["state"] in _FINAL_STATES:
            raise Fault("TaskNotCancelableError", "Task is in a final state")
        task["status"] = {"state": "TASK_STATE_CANCELED", "timestamp": _now()}
        return task

    def send_message(self, params: Any) -> JSON:
        message = params.get("message") if isinstance(params, dict) else None
        if isinstance(message, dict):
            self.received.append(message)
        if not isinstance(message, dict) or not isinstance(message.get("parts"), list):
            raise Fault("InvalidParamsError", "params.message with parts is required")
        return self.reply(message)

    # --- Bindings -----------------------------------------------------------------------

    def version_of(self, request: Request) -> str:
        return (
            request.headers.get("A2A-Version") or request.query_params.get("A2A-Version") or "0.3"
        )

    def check_version(self, request: Request) -> None:
        version = self.version_of(request)
        if not self.supports(version):
            raise Fault("VersionNotSupportedError", f"A2A version {version!r} is not supported")

    async def jsonrpc(self, request: Request) -> Response:
        early = await self.intercept(request)
        if early is not None:
            return early
        request_id: Any = None
        try:
            try:
                body = json.loads(await request.body())
            except ValueError as error:
                raise Fault("JSONParseError", f"Invalid JSON payload: {error}") from None
            if isinstance(body, dict) and isinstance(body.get("id"), str | int):
                request_id = body["id"]
            if not isinstance(body, dict) or body.get("jsonrpc") != "2.0":
                raise Fault("InvalidRequestError", "Request payload validation error")
            method = body.get("method")
            if method not in _JSONRPC_METHODS:
                raise Fault("MethodNotFoundError", "Method not found")
            self.check_version(request)
            params = body.get("params") or {}
            if method == "SendMessage":
                result = self.send_message(params)
            elif not isinstance(params, dict) or not isinstance(params.get("id"), str):
                raise Fault("InvalidParamsError", "params.id is required")
            elif method == "GetTask":
                result = self.get_task(params["id"])
            else:
                result = self.cancel_task(params["id"])
        except Fault as fault:
            return JSONResponse(self.jsonrpc_error(request_id, fault))
        return JSONResponse({"jsonrpc": "2.0", "id": request_id, "result": result})

    async def rest(self, request: Request, route: str) -> Response:
        early = await self.intercept(request)
        if early is not None:
            return early
        try:
            self.check_version(request)
            if route == "send":
                try:
                    body = json.loads(await request.body())
                except ValueError as error:
                    raise Fault("JSONParseError", f"Invalid JSON payload: {error}") from None
                return JSONResponse(self.send_message(body))
            task_id = request.path_params["id"]
            task = self.get_task(task_id) if route == "get" else self.cancel_task(task_id)
            return JSONResponse(task)
        except Fault as fault:
            return self.rest_error(fault)

    async def elsewhere(self, request: Request) -> Response:
        early = await self.intercept(request)
        return early if early is not None else Response("Not Found", status_code=404)

    def app(self) -> ASGIApp:
        document = self.card()

        headers = dict(self.options.get("card_headers") or {})

        async def card_endpoint(request: Request) -> JSONResponse:
            return JSONResponse(document, headers=headers)

        def rest_route(path: str, method: str, name: str) -> Route:
            async def endpoint(request: Request) -> Response:
                return await self.rest(request, name)

            return Route(REST_PATH + path, endpoint, methods=[method])

        return Starlette(
            routes=[
                Route(CARD_PATH, card_endpoint, methods=["GET"]),
                Route(JSONRPC_PATH, self.jsonrpc, methods=["POST"]),
                rest_route("/message:send", "POST", "send"),
                rest_route("/tasks/{id}:cancel", "POST", "cancel"),
                rest_route("/tasks/{id}", "GET", "get"),
                Route("/{path:path}", self.elsewhere, methods=["GET", "POST", "PUT", "DELETE"]),
            ]
        )
