"""A tiny A2A agent to try the registry with: a2a-sdk's own server, one echo skill.

    .venv/bin/python scripts/demo_agent.py            # http://127.0.0.1:9999
    .venv/bin/python scripts/demo_agent.py --port 9100

It serves its card at ``/.well-known/agent-card.json`` (A2A v1.0, with a JSON-RPC and an
HTTP+JSON interface, both on this origin) and answers every message with the text it was sent.
It needs only the registry's runtime (a2a-sdk, starlette, uvicorn: requirements.txt) and listens
on loopback only. `make run` fetches loopback agents over plain http, so submitting
``http://127.0.0.1:9999`` to it brings this card, and its live checks, within seconds
(README.md, "Try your own agent"; docs/development.md).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
from typing import Any

import uvicorn
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.request_handlers.response_helpers import agent_card_to_dict
from a2a.server.routes import create_jsonrpc_routes, create_rest_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types.a2a_pb2 import AgentCard, Part, Task, TaskState, TaskStatus
from google.protobuf.json_format import ParseDict
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

CARD_PATH = "/.well-known/agent-card.json"
JSONRPC_PATH = "/a2a/jsonrpc"
REST_PATH = "/a2a/rest"


def card_document(origin: str) -> dict[str, Any]:
    """The agent's card (A2A v1.0) for an agent served at ``origin``."""
    return {
        "name": "Echo (local demo)",
        "description": "Answers every message with the text it was sent. A demo agent run "
        "beside the registry (scripts/demo_agent.py).",
        "supportedInterfaces": [
            {"url": origin + JSONRPC_PATH, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
            {"url": origin + REST_PATH, "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
        ],
        "provider": {"organization": "Local demo", "url": origin},
        "version": "1.0.0",
        "capabilities": {"streaming": False, "pushNotifications": False},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [
            {
                "id": "echo",
                "name": "Echo",
                "description": "Answers the text it is sent.",
                "tags": ["echo", "demo"],
                "examples": ["Hello, agent"],
            }
        ],
    }


class EchoExecutor(AgentExecutor):
    """Completes each task with one artifact and a reply: the text of the message's parts."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.task_id and context.context_id
        message = context.message
        if context.current_task is None:  # the SDK wants the task before its updates
            submitted = TaskStatus(state=TaskState.TASK_STATE_SUBMITTED)
            history = [message] if message is not None else []
            await event_queue.enqueue_event(
                Task(
                    id=context.task_id,
                    context_id=context.context_id,
                    status=submitted,
                    history=history,
                )
            )
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        text = " ".join(part.text for part in message.parts if part.text) if message else ""
        await updater.add_artifact([Part(text=text)], name="echo")
        reply = updater.new_agent_message([Part(text=text or "(no text)")])
        await updater.update_status(TaskState.TASK_STATE_COMPLETED, message=reply)

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.task_id and context.context_id
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


def app(origin: str) -> Starlette:
    """The agent as an ASGI application for ``origin`` (``http://127.0.0.1:<port>``)."""
    document = card_document(origin)
    card = ParseDict(document, AgentCard())
    handler = DefaultRequestHandler(
        agent_executor=EchoExecutor(), task_store=InMemoryTaskStore(), agent_card=card
    )
    served = agent_card_to_dict(card)
    body = json.dumps(served).encode()
    # The caching headers the live checks look for (CARD-CACHE-001, -002).
    headers = {
        "Cache-Control": "public, max-age=300",
        "ETag": '"' + hashlib.sha256(body).hexdigest()[:32] + '"',
    }

    async def card_endpoint(request: Request) -> Response:
        if request.headers.get("If-None-Match") == headers["ETag"]:
            return Response(status_code=304, headers=headers)
        return Response(body, media_type="application/json", headers=headers)

    # The card and JSON-RPC routes first: the REST routes end with a catch-all mount.
    routes: list[BaseRoute] = [
        Route(CARD_PATH, card_endpoint, methods=["GET"]),
        *create_jsonrpc_routes(handler, JSONRPC_PATH),
        *create_rest_routes(handler, path_prefix=REST_PATH),
    ]
    return Starlette(routes=routes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=9999, help="the port on 127.0.0.1 (9999)")
    parser.add_argument(
        "--verbose", action="store_true", help="log every request and the SDK's error answers"
    )
    args = parser.parse_args()
    port = args.port
    if not args.verbose:
        # The live checks ask for tasks that cannot exist, on purpose: the SDK logs each of its
        # (correct) error answers, which would fill the terminal the agent runs in.
        logging.getLogger("a2a").setLevel(logging.CRITICAL)
    origin = f"http://127.0.0.1:{port}"
    print(f"Demo agent: its card is at {origin}{CARD_PATH}; submit {origin} to the registry.")
    level = "info" if args.verbose else "warning"
    uvicorn.run(app(origin), host="127.0.0.1", port=port, log_level=level)


if __name__ == "__main__":
    main()
