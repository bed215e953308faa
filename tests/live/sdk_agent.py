"""The well-behaved agent: a2a-sdk's own server (JSON-RPC and REST routes, the default
request handler, an in-memory task store, v0.3 compatibility on), with an executor of ours
that runs the two skills of skills.py and writes down every message it is given."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from a2a.compat.v0_3.conversions import to_compat_agent_card
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.request_handlers.response_helpers import agent_card_to_dict
from a2a.server.routes import create_jsonrpc_routes, create_rest_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types.a2a_pb2 import AgentCard, Part, Task, TaskState, TaskStatus
from google.protobuf.json_format import MessageToDict, ParseDict
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp

from tests.live.cards import CARD_PATH, JSONRPC_PATH, REST_PATH, card_v1
from tests.live.skills import answer, progress_metadata

Version = Literal["1.0", "0.3"]


class RecordingExecutor(AgentExecutor):
    """Runs skills.answer on each message; ``received`` holds every message given to it
    (v1.0 ProtoJSON, also for v0.3 requests, which the SDK converts first)."""

    def __init__(self, received: list[dict[str, Any]]) -> None:
        self.received = received

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.message is not None and context.task_id and context.context_id
        message = MessageToDict(context.message)
        self.received.append(message)
        if context.current_task is None:
            await event_queue.enqueue_event(
                Task(
                    id=context.task_id,
                    context_id=context.context_id,
                    status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED),
                    history=[context.message],
                )
            )
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        outcome = answer(message)
        if outcome.progress is not None:
            # Seed 002 section 4 recommends the status message's metadata. Not the event's:
            # the SDK copies event metadata into Task.metadata, where a "running" snapshot
            # would outlive the completed task.
            working = updater.new_agent_message(
                [Part(text="comparing")], metadata=progress_metadata(done=False)
            )
            await updater.update_status(TaskState.TASK_STATE_WORKING, message=working)
        for part in outcome.parts:
            await updater.add_artifact([ParseDict(part, Part())], name="answer")
        metadata = progress_metadata(done=True) if outcome.progress is not None else None
        reply = updater.new_agent_message([Part(text=outcome.reply)], metadata=metadata)
        await updater.update_status(TaskState.Value(outcome.state), message=reply)

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.task_id and context.context_id
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


def served_card(origin: str, version: Version, **options: Any) -> tuple[AgentCard, dict[str, Any]]:
    """The card the SDK handler holds and the document served for it. The SDK's card is a
    protobuf message, which has no room for seed 000's top-level ``schemas``: the document
    is the SDK's own rendering with ``schemas`` added. For 0.3 it is the SDK's v0.3 rendering
    (``url``, ``preferredTransport``, ``protocolVersion`` 0.3.0, ``additionalInterfaces``)."""
    document = card_v1(name=f"a2a-sdk agent (v{version})", origin=origin, **options)
    schemas = document.pop("schemas")
    if version == "0.3":
        for interface in document["supportedInterfaces"]:
            interface["protocolVersion"] = "0.3.0"
    card = ParseDict(document, AgentCard())
    if version == "0.3":
        rendered = to_compat_agent_card(card).model_dump(by_alias=True, exclude_none=True)
    else:
        rendered = agent_card_to_dict(card)
    return card, {**rendered, "schemas": schemas}


def sdk_app(
    origin: str,
    *,
    version: Version,
    received: list[dict[str, Any]],
    interfaces: Callable[[str], list[dict[str, Any]]] | None = None,
    **options: Any,
) -> ASGIApp:
    """The SDK's server for ``card_v1(**options)``; ``interfaces(origin)``, when given, is the
    served document's ``supportedInterfaces`` instead (the SDK serves every version on each
    route, so one URL may be declared in two versions)."""
    card, document = served_card(origin, version, **options)
    if interfaces is not None:
        document = {**document, "supportedInterfaces": interfaces(origin)}
    handler = DefaultRequestHandler(
        agent_executor=RecordingExecutor(received),
        task_store=InMemoryTaskStore(),
        agent_card=card,
    )

    async def card_endpoint(request: Request) -> JSONResponse:
        return JSONResponse(document)

    # The card and JSON-RPC routes come first: the REST routes end with a catch-all
    # ``/{tenant}`` mount that would otherwise take every path.
    routes: list[BaseRoute] = [
        Route(CARD_PATH, card_endpoint, methods=["GET"]),
        *create_jsonrpc_routes(handler, JSONRPC_PATH, enable_v0_3_compat=True),
        *create_rest_routes(handler, enable_v0_3_compat=True, path_prefix=REST_PATH),
    ]
    return Starlette(routes=routes)
