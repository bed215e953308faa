"""The MCP server at ``/mcp`` (streamable HTTP, official ``mcp`` SDK).

Stateless and JSON-answering: every POST is one JSON-RPC exchange, so any worker can answer it.
Each tool wraps one read in :mod:`protocols.queries` (the visibility gate, anonymous viewer);
a ``ProblemError`` becomes an MCP tool error carrying the API's own ``detail`` message.

One contract with the REST API: arguments are checked before the SDK's own pydantic model sees
them, so a mistake is answered in the API's words ("limit must be an integer from 1 to 100",
"text is longer than 1000 characters", "Unknown argument: x. Known: ..."), never pydantic's
report. Each read runs in a worker thread outside Django's request cycle, so the database
connection is checked before and released after each one (Django's request signals do that for
views): a restarted PostgreSQL costs no failed call.
"""

from __future__ import annotations

import json as _json
import logging
import typing
from http import HTTPStatus
from typing import Annotated, Any, Literal

import jsonschema  # type: ignore[import-untyped]  # the SDK's own dependency
import mcp.server.lowlevel.server as _lowlevel
from asgiref.sync import sync_to_async
from django.db import DatabaseError, DataError, close_old_connections
from mcp import types
from mcp.server.fastmcp import Context, FastMCP
from mcp.server.fastmcp.exceptions import ToolError
from mcp.server.fastmcp.tools import Tool
from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import McpError
from pydantic import AnyUrl, BaseModel, Field, ValidationError

from cards.reads import door_metrics
from cards.reads.gate import ANONYMOUS
from cards.reads.params import MAX_LENGTH
from protocols import queries
from registry.about import REGISTRY_NAME, REGISTRY_VERSION
from registry.errors import ProblemError

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

RESOURCE_NOT_FOUND = -32002  # MCP's code for a resource that does not exist
INTERNAL_ERROR = -32603


class ApiError(ToolError):
    """A tool error in the REST API's words; ``status`` is what the API would answer."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


def _allowed_values(schema: Any) -> list[str]:
    """Every ``enum`` value inside one argument's JSON Schema (a Literal, or a list of them)."""
    found: list[str] = []
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if isinstance(node.get("enum"), list):
                found.extend(str(v) for v in node["enum"])
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return list(dict.fromkeys(found))


_INTEGER_ERRORS = frozenset(
    {"int_parsing", "int_from_float", "int_type", "greater_than_equal", "less_than_equal",
     "greater_than", "less_than"}
)  # fmt: skip
_TYPE_PHRASES = {
    "bool_parsing": "must be true or false",
    "bool_type": "must be true or false",
    "string_type": "must be a string",
    "list_type": "must be a list",
    "dict_type": "must be an object",
    "float_type": "must be a number",
    "model_type": "must be an object",
    "missing": "is required",
}


def _phrase(error: Any, schema: dict[str, Any]) -> str:
    """One pydantic error as the end of the API's sentence ("... must be ...")."""
    kind, ctx = error["type"], error.get("ctx") or {}
    if kind == "string_too_long":
        return f"is longer than {ctx.get('max_length')} characters"
    if kind in _INTEGER_ERRORS:
        low, high = schema.get("minimum"), schema.get("maximum")
        return "must be an integer" if high is None else f"must be an integer from {low} to {high}"
    if kind == "literal_error":
        return "must be one of " + ", ".join(_allowed_values(schema))
    return _TYPE_PHRASES.get(kind) or f"is not valid ({error['msg']})"


# JSON types a string must not stand in for, and the pydantic error each is phrased as.
_SCALARS = {"integer": "int_type", "number": "float_type", "boolean": "bool_type"}


def _json_types(schema: dict[str, Any]) -> set[str]:
    """The JSON types one argument's schema allows (``type``, or each ``anyOf`` branch's)."""
    found: set[str] = set()
    for node in [schema, *(schema.get("anyOf") or [])]:
        kind = node.get("type") if isinstance(node, dict) else None
        if isinstance(kind, str):
            found.add(kind)
        elif isinstance(kind, list):
            found.update(str(name) for name in kind)
    return found


def argument_problem(tool: Tool, arguments: dict[str, Any]) -> str | None:
    """What is wrong with ``arguments`` for ``tool``, in the API's words; None when nothing.

    Unknown names are refused naming them (the API's 400 for an unknown parameter); the rest is
    the tool's own argument model, each error phrased as the API phrases it."""
    properties: dict[str, Any] = tool.parameters.get("properties", {})
    unknown = sorted(set(arguments) - set(properties))
    if unknown:
        return f"Unknown argument: {', '.join(unknown)}. Known: {', '.join(sorted(properties))}."
    for name, value in arguments.items():
        schema = properties.get(name, {})
        types = _json_types(schema)
        if isinstance(value, bool) and "integer" in types:
            # pydantic's lax mode reads true as 1; the API refuses it (docs/orchestrators.md).
            return f"{name} {_phrase({'type': 'int_type'}, schema)}"
        if isinstance(value, str) and types & _SCALARS.keys() and types <= {*_SCALARS, "null"}:
            # pydantic's lax mode reads "5" as 5 and "yes" as true; a JSON body of the API
            # (POST /api/v1/schemas/match's limit) and agentQuery refuse a string there.
            kind = next(_SCALARS[t] for t in ("integer", "number", "boolean") if t in types)
            return f"{name} {_phrase({'type': kind}, schema)}"
        texts = value if isinstance(value, list) else [value]
        if any(isinstance(text, str) and "\x00" in text for text in texts):
            return f"{name} contains a NUL character"  # the API's words for its parameters
    if tool.name == "find_agents_accepting" and isinstance(arguments.get("payload"), str):
        # The SDK would read a string as JSON text when it parses; either way it is ambiguous.
        return "payload must be a JSON object, array, number, boolean or null, not a string"
    metadata = tool.fn_metadata
    try:
        metadata.arg_model.model_validate(metadata.pre_parse_json(arguments))
    except ValidationError as exc:
        sentences: dict[str, None] = {}
        for error in exc.errors():
            name = str(error["loc"][0]) if error["loc"] else "arguments"
            sentences[f"{name} {_phrase(error, properties.get(name, {}))}"] = None
        return "; ".join(sentences)
    return None


def _api_error_in(exc: BaseException) -> ApiError | None:
    """The ApiError an SDK wrapper was raised from (its cause or context chain), if any."""
    seen: BaseException | None = exc
    for _ in range(8):
        if seen is None:
            return None
        if isinstance(seen, ApiError):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


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
            api = _api_error_in(exc)
            if api is not None:
                raise ToolError(str(api)) from None
            raise

    async def read_resource(self, uri: AnyUrl | str) -> Any:
        try:
            contents: list[ReadResourceContents] = list(await super().read_resource(uri))
        except Exception as exc:
            api = _api_error_in(exc)
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
        description="Agent summaries (each with live: the outcome of the registry's live "
        "checks of the agent): best first with a score (0-100) for text, else newest first."
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


DATA_REFUSED = "The arguments hold a value the database cannot take (a NUL character?)."
DATABASE_UNAVAILABLE = "The registry's database is unavailable; retry in a moment."


def _problem_text(exc: ProblemError) -> str:
    """The problem's ``detail``, plus any per-field message it does not already say."""
    extra = [
        f"{e.get('pointer', '')}: {e['message']}"
        for e in exc.errors or []
        if e.get("message") and e["message"] not in exc.detail
    ]
    return f"{exc.detail} ({'; '.join(extra)})" if extra else exc.detail


def _unit(fn: Any, kwargs: dict[str, Any]) -> Any:
    """One read in the worker thread, the way Django wraps a request: the thread's database
    connection is checked before (dropped when broken or expired, pinged when
    ``CONN_HEALTH_CHECKS`` is on) and after, so a restarted database costs no failed call."""
    close_old_connections()
    try:
        return fn(**kwargs)
    except ProblemError as exc:
        raise ApiError(_problem_text(exc), exc.status) from None
    except DataError:
        # A value PostgreSQL refuses (a NUL character in a JSON key, say): the caller's mistake.
        raise ApiError(DATA_REFUSED) from None
    except DatabaseError:
        logger.warning("MCP call not answered: the database is unavailable", exc_info=True)
        raise ApiError(DATABASE_UNAVAILABLE, 503) from None
    except Exception:
        logger.exception("MCP call failed")
        raise ApiError("Internal error: the call could not be answered.", 500) from None
    finally:
        close_old_connections()


async def _run(fn: Any, **kwargs: Any) -> Any:
    return await sync_to_async(_unit, thread_sensitive=True)(fn, kwargs)


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
    """One agent: card summary, skills, modes, schemas, signature, validation, health and the
    report of the registry's live checks of its endpoint (live)."""
    return dict(
        await _run(
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
    return json_errors(server.streamable_http_app())


def json_errors(app: Any) -> Any:
    """``app`` with every error it answers in plain text as a JSON-RPC error object.

    The SDK's transport checks answer some refusals as text (a POST without
    ``Content-Type: application/json`` is ``400 Invalid Content-Type header``); a client of
    /mcp gets a JSON-RPC error for every failure, with the same status and the SDK's words."""

    async def wrapped(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        held: dict[str, Any] = {}

        async def relay(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                headers = dict(message.get("headers") or [])
                if message["status"] >= 400 and b"json" not in headers.get(b"content-type", b""):
                    held.update(status=message["status"], body=b"")
                    return
            elif held and message["type"] == "http.response.body":
                held["body"] += message.get("body", b"")
                if message.get("more_body"):
                    return
                status = int(held["status"])
                text = held["body"].decode("utf-8", "replace").strip()
                body = _json.dumps({"jsonrpc": "2.0", "id": None, "error": {
                    "code": -32600, "message": text[:300] or HTTPStatus(status).phrase,
                }}).encode()  # fmt: skip
                await send({"type": "http.response.start", "status": status, "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                ]})  # fmt: skip
                await send({"type": "http.response.body", "body": body})
                return
            await send(message)

        await app(scope, receive, relay)

    return wrapped


def _method_names(union: Any) -> set[str]:
    members = typing.get_args(union.model_fields["root"].annotation)
    return {
        name
        for member in members
        for name in typing.get_args(member.model_fields["method"].annotation)
    }


# Every method a client may send; anything else is answered "Method not found" (-32601).
METHODS = frozenset(_method_names(types.ClientRequest) | _method_names(types.ClientNotification))
