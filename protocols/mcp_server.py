"""The MCP server at ``/mcp`` (streamable HTTP, official ``mcp`` SDK).

Stateless and JSON-answering: every POST is one JSON-RPC exchange, so any worker can answer it.
Each tool wraps one read in :mod:`protocols.queries` (the visibility gate, anonymous viewer);
a ``ProblemError`` becomes an MCP tool error carrying the API's own ``detail`` message.
"""

from __future__ import annotations

import logging
import typing
from importlib.metadata import version as _pkg_version
from typing import Annotated, Any, Literal

import jsonschema  # type: ignore[import-untyped]  # the SDK's own dependency
import mcp.server.lowlevel.server as _lowlevel
from asgiref.sync import sync_to_async
from mcp import types
from mcp.server.fastmcp import Context, FastMCP
from mcp.server.fastmcp.exceptions import ToolError
from mcp.server.transport_security import TransportSecuritySettings
from pydantic import BaseModel, Field

from cards.reads.gate import ANONYMOUS
from protocols import queries
from registry.errors import ProblemError

INSTRUCTIONS = (
    "An index of A2A agents. search_agents finds agents by need and filters; "
    "find_agents_accepting finds agents whose input schemas accept a JSON payload; get_agent "
    "and the agent-card resource describe one agent; check_message judges an A2A message for an "
    "agent by the input/output-schemas extension flow."
)


def _not_closed_stream_noise(record: logging.LogRecord) -> bool:
    """mcp 1.22 in stateless JSON mode logs a ClosedResourceError traceback after every
    request once the response is sent; it is not an error, so it is dropped."""
    exc = record.exc_info[1] if record.exc_info else None
    return not (record.getMessage() == "Error in message router" and exc is not None
                and type(exc).__name__ == "ClosedResourceError")  # fmt: skip


logging.getLogger("mcp.server.streamable_http").addFilter(_not_closed_stream_noise)

server = FastMCP(
    name="a2a-agent-registry",
    instructions=INSTRUCTIONS,
    stateless_http=True,
    json_response=True,
    streamable_http_path="/mcp",
    # Host checks are Django's job (ALLOWED_HOSTS) for the rest of the site; the MCP SDK's own
    # DNS-rebinding guard only knows localhost, so it is off and /mcp stays read-only.
    transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
)
# Stateless mode builds initialisation options on every request; without a version the SDK
# reads its own from the package metadata each time (about a millisecond, measured).
server._mcp_server.version = _pkg_version("mcp")


class _CompiledSchemas:
    """Stands in for the ``jsonschema`` module inside the SDK's low-level server, which calls
    ``jsonschema.validate(instance, schema)`` on every tool result: that checks the schema
    against its metaschema and builds a validator each call. Here each tool's schema is
    compiled once (same draft, same errors)."""

    ValidationError = jsonschema.ValidationError

    def __init__(self) -> None:
        self._compiled: dict[int, tuple[Any, Any]] = {}

    def validate(self, instance: Any, schema: dict[str, Any]) -> None:
        held = self._compiled.get(id(schema))
        if held is None or held[0] is not schema:
            validator_class = jsonschema.validators.validator_for(schema)
            validator_class.check_schema(schema)
            held = self._compiled[id(schema)] = (schema, validator_class(schema))
        error = jsonschema.exceptions.best_match(held[1].iter_errors(instance))
        if error is not None:
            raise error


_lowlevel.jsonschema = _CompiledSchemas()


class AgentList(BaseModel):
    results: list[dict[str, Any]] = Field(
        description="Agent summaries: best first with a score (0-100) for text, else newest first."
    )
    truncated: bool = Field(description="More agents matched than the limit.")


class AgentMatches(BaseModel):
    agents: list[dict[str, Any]] = Field(
        description="Agents with the skills and schemas that accept the payload."
    )
    candidates: int
    accepted: int
    truncated: bool


class MessageVerdict(BaseModel):
    outcome: Literal[
        "structured-input", "structured-input-error", "no-structured-part", "rejected-task-exists"
    ]
    action: str
    part: dict[str, Any] | None
    schema_: dict[str, Any] | None = Field(alias="schema")
    errors: list[dict[str, str]]
    warnings: list[dict[str, str]]
    ignored_parts: list[int]
    available_schemas: list[str]
    task_id: str | None
    structured_outcome: str | None
    agent: dict[str, str]

    model_config = {"populate_by_name": True, "serialize_by_alias": True}


class SchemaList(BaseModel):
    results: list[dict[str, Any]] = Field(
        description="name, and the number of agents declaring, accepting, producing it."
    )


def _base(ctx: Context[Any, Any, Any]) -> str:
    request = ctx.request_context.request
    if request is None:
        return "http://localhost"
    return f"{request.url.scheme}://{request.headers.get('host', request.url.netloc)}"


async def _run(fn: Any, **kwargs: Any) -> Any:
    try:
        return await sync_to_async(fn, thread_sensitive=True)(**kwargs)
    except ProblemError as exc:
        errors = "; ".join(f"{e['pointer']}: {e['message']}" for e in exc.errors or [])
        raise ToolError(f"{exc.detail} {errors}".strip()) from None


Limit = Annotated[int, Field(ge=1, le=100, description="At most this many results (1-100).")]


@server.tool(structured_output=True)
async def search_agents(
    ctx: Context[Any, Any, Any],
    text: Annotated[
        str, Field(max_length=500, description="A need in words: ranked by meaning.")
    ] = "",
    tag: Annotated[list[str] | None, Field(description="Skill tags; all must match.")] = None,
    skill: str | None = None,
    input_mode: Annotated[str | None, Field(description="e.g. application/json;schema=X")] = None,
    output_mode: str | None = None,
    schema: Annotated[str | None, Field(description="Schema name in a mode.")] = None,
    extension: Annotated[str | None, Field(description="Extension URI.")] = None,
    verified: bool | None = None,
    health: Annotated[
        list[Literal["healthy", "degraded", "unreachable", "gone", "unknown"]] | None,
        Field(description="Any of these health states; gone agents are left out otherwise."),
    ] = None,
    provider: str | None = None,
    streaming: bool | None = None,
    limit: Limit = 20,
) -> AgentList:
    """Find agents by text and the registry's v1 search filters (the same as GET /api/v1/agents)."""
    filters = {
        "tag": tag, "skill": skill, "input_mode": input_mode, "output_mode": output_mode,
        "schema": schema, "extension": extension, "verified": verified, "health": health,
        "provider": provider, "streaming": streaming,
    }  # fmt: skip
    data = await _run(
        queries.search_agents,
        text=text,
        filters=filters,
        limit=limit,
        viewer=ANONYMOUS,
        request=queries.base_request(_base(ctx)),
    )
    return AgentList(**data)


@server.tool(structured_output=True)
async def get_agent(
    ctx: Context[Any, Any, Any],
    id: Annotated[
        str,
        Field(max_length=600, description="The agent's id (UUID) or ARD identifier (urn:air:...)."),
    ],
) -> dict[str, Any]:
    """One agent: card summary, skills, modes, schemas, signature, validation and health."""
    return dict(
        await _run(
            queries.get_agent, ident=id, viewer=ANONYMOUS, request=queries.base_request(_base(ctx))
        )
    )


@server.tool(structured_output=True)
async def find_agents_accepting(
    payload: Annotated[Any, Field(description="Any JSON value an agent should accept.")],
    limit: Limit = 20,
) -> AgentMatches:
    """The agents and skills whose declared input JSON Schemas accept this payload."""
    data = await _run(queries.find_accepting, payload=payload, limit=limit, viewer=ANONYMOUS)
    return AgentMatches(**data)


@server.tool(structured_output=True)
async def check_message(
    agent_id: Annotated[str, Field(max_length=200, description="The agent's id.")],
    message: Annotated[dict[str, Any], Field(description="An A2A Message (with parts).")],
) -> MessageVerdict:
    """Judge an A2A message for one agent by the input/output-schemas extension flow (seed 000)."""
    data = await _run(
        queries.check_agent_message, ident=agent_id, message=message, viewer=ANONYMOUS
    )
    return MessageVerdict.model_validate(data)


@server.tool(structured_output=True)
async def list_schemas(
    prefix: Annotated[str, Field(max_length=200)] = "", limit: Limit = 50
) -> SchemaList:
    """Named JSON Schemas in agent cards, with how many agents declare, accept, produce each."""
    data = await _run(queries.list_schemas, prefix=prefix, limit=limit, viewer=ANONYMOUS)
    return SchemaList(**data)


@server.resource(
    "agent://{agent_id}/card", mime_type="application/json", name="agent-card",
    description="An agent's latest card, exactly as fetched.",
)  # fmt: skip
async def agent_card(agent_id: str) -> str:
    import json

    data = await _run(queries.card, ident=agent_id, viewer=ANONYMOUS)
    return json.dumps(data)


def make_app() -> Any:
    """A fresh Starlette app (and session manager) for one server lifespan."""
    server._session_manager = None
    return server.streamable_http_app()


def _method_names(union: Any) -> set[str]:
    members = typing.get_args(union.model_fields["root"].annotation)
    return {
        name
        for member in members
        for name in typing.get_args(member.model_fields["method"].annotation)
    }


# Every method a client may send; anything else is answered "Method not found" (-32601).
METHODS = frozenset(_method_names(types.ClientRequest) | _method_names(types.ClientNotification))
