"""Hand-made agents that each break one rule, and only that one: each is the conformant
HandAgent with one method of its rules replaced. Options come from ``broken_agent(kind,
**options)`` (agents.py) and are read from ``self.options``."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response, StreamingResponse

from tests.live.cards import JSONRPC_PATH, REST_PATH, card_v1
from tests.live.handmade import ERRORS, JSON, Fault, HandAgent
from tests.live.skills import Outcome, answer


class MessageInsteadOfTask(HandAgent):
    """Answers SendMessage with a Message, even for a structured input (seed 000 says a
    valid structured input MUST give a task)."""

    kind = "message_instead_of_task"

    def reply(self, message: JSON) -> JSON:
        outcome = self.outcome(message)
        parts = outcome.parts or [{"text": outcome.reply}]
        return {"message": {"messageId": str(uuid.uuid4()), "role": "ROLE_AGENT", "parts": parts}}


class BadOutput(HandAgent):
    """Completes with a data artifact labelled fightVerdict that breaks fightVerdict: the
    winner is a number, the probability above 1 and the explanation missing."""

    kind = "bad_output"

    def outcome(self, message: JSON) -> Outcome:
        return answer(message, verdict=lambda data: {"winner": 42, "probability": 7})


class AcceptsInvalid(HandAgent):
    """Skips validation: a payload missing a required member still completes."""

    kind = "accepts_invalid"

    def outcome(self, message: JSON) -> Outcome:
        return answer(message, validate=False)


class WrongErrorCode(HandAgent):
    """A task it does not know is an internal error (-32603, HTTP 500) instead of
    TaskNotFoundError; with ``answer="result"`` it answers a made-up task instead."""

    kind = "wrong_error_code"

    def get_task(self, task_id: str) -> JSON:
        if task_id in self.tasks:
            return self.tasks[task_id]
        if self.options.get("answer") == "result":
            return {"id": task_id, "contextId": task_id, "status": {"state": "TASK_STATE_WORKING"}}
        raise Fault("InternalError", "Internal error")


class HtmlEndpoint(HandAgent):
    """Every request to its interfaces answers 200 with an HTML page (its card is fine)."""

    kind = "html_endpoint"

    async def intercept(self, request: Request) -> Response | None:
        return HTMLResponse("<!doctype html><html><body><h1>Welcome!</h1></body></html>")


class Slow(HandAgent):
    """Sleeps ``delay`` seconds (default 5) before answering each interface request, or with
    ``only="cancel"`` each CancelTask only (JSON-RPC or REST). The sleep is asynchronous: other
    requests, and its card, are answered meanwhile."""

    kind = "slow"

    async def intercept(self, request: Request) -> Response | None:
        if self.options.get("only") == "cancel":
            body = await request.body()
            if b'"CancelTask"' not in body and not request.url.path.endswith(":cancel"):
                return None
        await asyncio.sleep(float(self.options.get("delay", 5.0)))
        return None


class Huge(HandAgent):
    """Answers every interface request with a JSON body of ``size`` bytes (default 8 MiB),
    with a Content-Length, or streamed in chunks without one if ``chunked=True``."""

    kind = "huge"

    async def intercept(self, request: Request) -> Response | None:
        size = int(self.options.get("size", 8 * 1024 * 1024))
        head, tail = b'{"jsonrpc": "2.0", "id": 1, "result": {"padding": "', b'"}}'
        padding = max(size - len(head) - len(tail), 0)
        if not self.options.get("chunked"):
            return Response(head + b"x" * padding + tail, media_type="application/json")

        async def chunks() -> AsyncIterator[bytes]:
            yield head
            for start in range(0, padding, 65536):
                yield b"x" * min(65536, padding - start)
            yield tail

        return StreamingResponse(chunks(), media_type="application/json")


class NoVersionCheck(HandAgent):
    """Serves any A2A-Version (or none) as if it were 1.0."""

    kind = "no_version_check"

    def supports(self, version: str) -> bool:
        return True


class BadErrorShape(HandAgent):
    """Its errors lack ``code`` (default; REST errors too) or, with ``missing="jsonrpc"``,
    the JSON-RPC response lacks its ``jsonrpc`` member."""

    kind = "bad_error_shape"

    def jsonrpc_error(self, request_id: Any, fault: Fault) -> JSON:
        body = super().jsonrpc_error(request_id, fault)
        if self.options.get("missing", "code") == "jsonrpc":
            del body["jsonrpc"]
        else:
            del body["error"]["code"]
        return body

    def rest_error(self, fault: Fault) -> Response:
        response = super().rest_error(fault)
        if self.options.get("missing", "code") == "jsonrpc":
            return response
        return JSONResponse({"error": {"message": fault.message}}, status_code=response.status_code)


class NoErrorInfo(HandAgent):
    """Its A2A errors are right in code, status and shape but carry no google.rpc.ErrorInfo:
    no ``error.data`` (JSON-RPC) and no ``error.details`` (HTTP+JSON)."""

    kind = "no_error_info"

    def jsonrpc_error(self, request_id: Any, fault: Fault) -> JSON:
        body = super().jsonrpc_error(request_id, fault)
        del body["error"]["data"]
        return body

    def rest_error(self, fault: Fault) -> Response:
        _, status, grpc_status, _ = ERRORS[fault.name]
        error = {"code": status, "status": grpc_status, "message": fault.message}
        return JSONResponse({"error": error}, status_code=status)


class ManyInterfaces(HandAgent):
    """A conformant agent whose card declares ``count`` interfaces (default 2,000), all on its
    own origin: JSON-RPC and HTTP+JSON in ``versions`` protocol versions (default 10: 1.0 to
    1.9) in turn, so interface n has version 1.((n // 2) % versions), each on a URL of its
    own (a query or a path segment), some with the origin spelled otherwise (``HTTP://``)."""

    kind = "many_interfaces"

    def card(self) -> JSON:
        document = super().card()
        count = int(self.options.get("count", 2000))
        versions = int(self.options.get("versions", 10))
        interfaces = []
        for n in range(count):
            binding = ("JSONRPC", "HTTP+JSON")[n % 2]
            path = f"{JSONRPC_PATH}?n={n}" if binding == "JSONRPC" else f"{REST_PATH}/n{n}"
            origin = "HTTP" + self.origin[4:] if n % 7 == 3 else self.origin
            interfaces.append(
                {
                    "url": origin + path,
                    "protocolBinding": binding,
                    "protocolVersion": f"1.{(n // 2) % versions}",
                }
            )
        document["supportedInterfaces"] = interfaces
        return document


class RefusedInterface(HandAgent):
    """Its card (on 127.0.0.1) declares its interfaces at ``interface_origin``, an address the
    registry must refuse; agents.py puts a counting trap there unless told another origin."""

    kind = "refused_interface"

    def card(self) -> JSON:
        return card_v1(
            name=f"hand-made agent ({self.kind})",
            origin=self.origin,
            interface_origin=str(self.options["interface_origin"]),
        )


class AuthRequired(HandAgent):
    """Its card declares a bearer scheme and requires it; its interfaces answer 401 unless
    sent ``Authorization: Bearer <token>`` (option ``token``, default ``let-me-in``)."""

    kind = "auth_required"

    def card(self) -> JSON:
        return card_v1(name=f"hand-made agent ({self.kind})", origin=self.origin, security=True)

    async def intercept(self, request: Request) -> Response | None:
        token = str(self.options.get("token", "let-me-in"))
        if request.headers.get("Authorization") == f"Bearer {token}":
            return None
        return JSONResponse(
            {"error": {"code": 401, "status": "UNAUTHENTICATED", "message": "Bearer required"}},
            status_code=401,
            headers={"WWW-Authenticate": 'Bearer realm="a2a"'},
        )


BROKEN: dict[str, type[HandAgent]] = {
    agent.kind: agent
    for agent in (
        MessageInsteadOfTask,
        BadOutput,
        AcceptsInvalid,
        WrongErrorCode,
        HtmlEndpoint,
        Slow,
        Huge,
        NoVersionCheck,
        BadErrorShape,
        NoErrorInfo,
        ManyInterfaces,
        RefusedInterface,
        AuthRequired,
    )
}
