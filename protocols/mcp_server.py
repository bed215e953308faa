"""The MCP server at ``/mcp`` (streamable HTTP, official ``mcp`` SDK).

Stateless and JSON-answering: every POST is one JSON-RPC exchange, so any worker can answer it.
Each tool wraps one read in :mod:`protocols.queries` (the visibility gate, anonymous viewer);
a ``ProblemError`` becomes an MCP tool error carrying the API's own ``detail`` message.

One contract with the REST API: arguments are checked before the SDK's own pydantic model sees
them, in the API's words (:mod:`protocols.mcp_arguments`); each read runs in a worker thread the
way Django runs a request (:mod:`protocols.mcp_errors`); the tools' results are
:mod:`protocols.mcp_results`, checked against schemas compiled once
(:mod:`protocols.mcp_validation`); errors of the HTTP transport are JSON-RPC objects
(:mod:`protocols.mcp_http`).
"""

from __future__ import annotations

import json
import logging
from typing import Annotated, Any, Literal

from mcp import types
from mcp.server.fastmcp import Context, FastMCP
from mcp.server.fastmcp.exceptions import ToolError
from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import McpError
from pydantic import AnyUrl, Field

from cards.reads.gate import ANONYMOUS
from cards.reads.params import MAX_LENGTH
from protocols import mcp_validation, queries
from protocols.mcp_arguments import argument_problem
from protocols.mcp_errors import (
    INTERNAL_ERROR,
    RESOURCE_NOT_FOUND,
    ApiError,
    api_error_in,
    run_read,
)
from protocols.mcp_http import json_errors
from protocols.mcp_results import AgentList, AgentMatches, MessageVerdict, SchemaList
from registry.about import REGISTRY_NAME, REGISTRY_VERSION
from search import door_metrics

logger = logging.getLogger(__name__)

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


def _not_unknown_tool_noise(record: logging.LogRecord) -> bool:
    """An unknown tool name is the caller's mistake, answered as a tool error; the SDK's warning
    about it would let any anonymous caller write to the log."""
    return not str(record.msg).startswith("Tool '%s' not listed")


logging.getLogger("mcp.server.lowlevel.server").addFilter(_not_unknown_tool_noise)


class RegistryMCP(FastMCP[Any]):
    """FastMCP whose errors are the REST API's: arguments checked first in the API's words, a
    tool's ApiError passed on as is (not "Error executing tool ..."), and resource errors as
    MCP error objects with one message (not "Error creating resource from template: ..."
    twice)."""

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> Any:
        tool = self._tool_manager.get_tool(name)
        if tool is not None:
            problem = argument_problem(tool, arguments)
            if problem is not None:
                raise ApiError(problem)
        try:
            return await super().call_tool(name, arguments)
        except ToolError as exc:
            api = api_error_in(exc)
            if api is not None:
                raise ToolError(str(api)) from None
            raise

    async def read_resource(self, uri: AnyUrl | str) -> Any:
        try:
            contents: list[ReadResourceContents] = list(await super().read_resource(uri))
        except Exception as exc:
            api = api_error_in(exc)
            if api is not None:
                code = (
                    RESOURCE_NOT_FOUND if api.status in (404, 409)
                    else INTERNAL_ERROR if api.status >= 500 else types.INVALID_PARAMS
                )  # fmt: skip
                error = types.ErrorData(code=code, message=str(api), data={"uri": str(uri)})
            elif str(exc).startswith("Unknown resource"):
                error = types.ErrorData(
                    code=RESOURCE_NOT_FOUND, message=f"Unknown resource: {uri}",
                    data={"uri": str(uri)},
                )  # fmt: skip
            else:
                logger.error("MCP resource %s failed", uri, exc_info=exc)
                error = types.ErrorData(code=INTERNAL_ERROR, message="Internal error")
            raise McpError(error) from None
        return contents


server = RegistryMCP(
    name=REGISTRY_NAME,
    instructions=INSTRUCTIONS,
    stateless_http=True,
    json_response=True,
    streamable_http_path="/mcp",
    # Host checks are Django's job (ALLOWED_HOSTS) for the rest of the site; the MCP SDK's own
    # DNS-rebinding guard only knows localhost, so it is off and /mcp stays read-only.
    transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
)
# serverInfo names the registry and its version (pyproject.toml), not the MCP SDK's. Stateless
# mode builds initialisation options on every request; without a version set here the SDK would
# read its own package's from the metadata each time (about a millisecond, measured).
server._mcp_server.version = REGISTRY_VERSION
# The SDK validates each tool result against a schema compiled once per tool.
mcp_validation.install()


def _base(ctx: Context[Any, Any, Any]) -> str:
    request = ctx.request_context.request
    if request is None:
        return "http://localhost"
    return f"{request.url.scheme}://{request.headers.get('host', request.url.netloc)}"


Limit = Annotated[int, Field(ge=1, le=100, description="At most this many results (1-100).")]


@server.tool(structured_output=True)
async def search_agents(
    ctx: Context[Any, Any, Any],
    text: Annotated[
        str, Field(max_length=MAX_LENGTH, description="A need in words: ranked by meaning.")
    ] = "",
    tag: Annotated[list[str] | None, Field(description="Skill tags; all must match.")] = None,
    skill: str | None = None,
    input_mode: Annotated[str | None, Field(description="e.g. application/json;schema=X")] = None,
    output_mode: str | None = None,
    schema: Annotated[str | None, Field(description="Schema name in a mode.")] = None,
    extension: Annotated[str | None, Field(description="Extension URI.")] = None,
    verified: Annotated[
        bool | None, Field(description="A verified publisher: its owner proved the origin.")
    ] = None,
    signed: Annotated[
        bool | None, Field(description="Signed by a key bound to the card's origin.")
    ] = None,
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
        "schema": schema, "extension": extension, "verified": verified, "signed": signed,
        "health": health, "provider": provider, "streaming": streaming,
    }  # fmt: skip
    with door_metrics.searched("mcp", text):
        data = await run_read(
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
    """One agent: card summary, skills, modes, schemas, signature, validation, health and the
    report of the registry's live checks of its endpoint (live)."""
    return dict(
        await run_read(
            queries.get_agent, ident=id, viewer=ANONYMOUS, request=queries.base_request(_base(ctx))
        )
    )


@server.tool(structured_output=True)
async def find_agents_accepting(
    payload: Annotated[
        Any,
        Field(
            description="A JSON value an agent should accept (the value, not its JSON text).",
            json_schema_extra={"type": ["object", "array", "number", "boolean", "null"]},
        ),
    ],
    limit: Limit = 20,
) -> AgentMatches:
    """The agents and skills whose declared input JSON Schemas accept this payload."""
    data = await run_read(queries.find_accepting, payload=payload, limit=limit, viewer=ANONYMOUS)
    return AgentMatches(**data)


@server.tool(structured_output=True)
async def check_message(
    agent_id: Annotated[str, Field(max_length=200, description="The agent's id.")],
    message: Annotated[dict[str, Any], Field(description="An A2A Message (with parts).")],
) -> MessageVerdict:
    """Judge an A2A message for one agent by the input/output-schemas extension flow (seed 000)."""
    data = await run_read(
        queries.check_agent_message, ident=agent_id, message=message, viewer=ANONYMOUS
    )
    return MessageVerdict.model_validate(data)


@server.tool(structured_output=True)
async def list_schemas(
    prefix: Annotated[str, Field(max_length=200)] = "", limit: Limit = 50
) -> SchemaList:
    """Named JSON Schemas in agent cards, with how many agents declare, accept, produce each."""
    data = await run_read(queries.list_schemas, prefix=prefix, limit=limit, viewer=ANONYMOUS)
    return SchemaList(**data)


@server.resource(
    "agent://{agent_id}/card", mime_type="application/json", name="agent-card",
    description="An agent's latest card, exactly as fetched.",
)  # fmt: skip
async def agent_card(agent_id: str) -> str:
    data = await run_read(queries.card, ident=agent_id, viewer=ANONYMOUS)
    return json.dumps(data)


def make_app() -> Any:
    """A fresh Starlette app (and session manager) for one server lifespan."""
    server._session_manager = None
    return json_errors(server.streamable_http_app())
