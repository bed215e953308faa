"""The OpenAPI document as a contract: what every operation can answer, and its parameters.

A drf-spectacular post-processing hook (``SPECTACULAR_SETTINGS["POSTPROCESSING_HOOKS"]``) adds
what views share and would otherwise each have to repeat: the problem+json schema, the error
statuses every operation can return (400 malformed input, 401 a bad token, 404 an unknown id,
413 and 415 for bodies, 429 the limits), UUID path parameters, and the strict rules the API
applies to query parameters (at most 1,000 characters, no NUL). The schemathesis run in
``tests/test_contract.py`` holds the document to it.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings

PROBLEM = {
    "type": "object",
    "description": "RFC 9457 problem details.",
    "required": ["type", "title", "status", "detail"],
    "properties": {
        "type": {"type": "string"},
        "title": {"type": "string"},
        "status": {"type": "integer", "minimum": 400, "maximum": 599},
        "detail": {"type": "string"},
        "errors": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"pointer": {"type": "string"}, "message": {"type": "string"}},
            },
        },
    },
    "additionalProperties": True,
}

DESCRIPTIONS = {
    "400": "A malformed parameter or body (problem+json naming it).",
    "401": "A token was given and is not valid, or this operation needs one.",
    "403": "The token's account may not do this.",
    "404": "No such resource (or one this reader may not see).",
    "406": "The Accept header asks for a format this operation does not produce.",
    "409": "The agent has no card yet (not fetched successfully so far).",
    "413": "The body is larger than this operation accepts.",
    "415": "The body is not JSON.",
    "422": "The input is well formed but cannot be processed.",
    "429": "Over a rate limit; Retry-After says when to come back.",
    "503": "A service the operation needs (the task queue) is unreachable.",
}
UUID_PARAMETERS = {"id", "pk"}
MAX_TAGS = 10  # tags combined in one search (search.filters.AgentSearch.MAX_TAGS)
QUERY_STRING = {"maxLength": 1000, "pattern": "^[^\\x00]*$"}


def problem(code: str) -> dict[str, Any]:
    return {
        "description": DESCRIPTIONS[code],
        "content": {
            "application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}
        },
    }


# component -> read-only fields that only some answers carry (ranked lists: docs/search.md).
OPTIONAL_FIELDS = {"AgentSummary": {"score", "confident", "matched_skill"}}


def add_problems(result: dict[str, Any], generator: Any, request: Any, public: bool) -> Any:
    """drf-spectacular post-processing hook: see the module docstring."""
    schemas = result.setdefault("components", {}).setdefault("schemas", {})
    schemas["Problem"] = PROBLEM
    # Read-only fields count as required; these appear only on some answers.
    for name, optional in OPTIONAL_FIELDS.items():
        if name in schemas and "required" in schemas[name]:
            schemas[name]["required"] = [f for f in schemas[name]["required"] if f not in optional]
    for path, item in result.get("paths", {}).items():
        for method, operation in item.items():
            if method not in ("get", "post", "put", "patch", "delete"):
                continue
            request_schema = operation.pop("x-request-schema", None)
            if request_schema is IMPORT:  # the limit is a setting
                request_schema = _import_schema()
            for code, link_set in operation.pop("x-links", {}).items():
                if code in operation.get("responses", {}):
                    operation["responses"][code]["links"] = link_set
            if request_schema is not None:
                operation["requestBody"] = {
                    "required": True,
                    "content": {"application/json": {"schema": request_schema}},
                }
            anonymous = operation.pop("x-anonymous", False) or {} in operation.get("security", [])
            if anonymous:
                _optional_token(operation)
            codes = {"400", "401", "406", "429"}
            if "{" in path:
                codes |= {"404", "409"}
            if "requestBody" in operation:
                codes |= {"413", "415"}
            if not anonymous:
                codes |= {"401", "403"}
            responses = operation.setdefault("responses", {})
            for response in responses.values():
                for media_type, content in response.get("content", {}).items():
                    if "json" not in media_type:  # opaque text (a JWS): nothing to validate
                        content.pop("schema", None)
            for code in sorted(codes):
                responses.setdefault(code, problem(code))
            for code, description in operation.pop("x-problems", {}).items():
                responses[code] = {**problem(code), "description": description}
            for parameter in operation.get("parameters", []):
                schema = parameter.setdefault("schema", {})
                if parameter.get("in") == "path" and parameter.get("name") in UUID_PARAMETERS:
                    schema.update({"type": "string", "format": "uuid"})
                elif parameter.get("in") == "path" and parameter.get("name") == "hex":
                    schema.update({"type": "string", "pattern": "^[0-9a-fA-F]{64}$"})
                elif parameter.get("in") == "query" and parameter.get("name") in MEDIA_TYPES:
                    schema.update(MEDIA_TYPE)
                elif parameter.get("in") == "query" and schema.get("type") == "string":
                    for key, value in QUERY_STRING.items():
                        schema.setdefault(key, value)
                elif parameter.get("in") == "query" and schema.get("type") == "array":
                    if parameter.get("name") == "tag":
                        schema["maxItems"] = MAX_TAGS
                    items = schema.setdefault("items", {})
                    if items.get("type") == "string" and "enum" not in items:
                        for key, value in QUERY_STRING.items():
                            items.setdefault(key, value)
    return result


OPTIONAL_TOKEN = (
    "No token needed. A token (or a signed-in session) is used when given: an owner also sees "
    "their own agents in every moderation state, staff every agent."
)


def _optional_token(operation: dict[str, Any]) -> None:
    """An operation anyone may call lists no security requirement. Listing the token schemes
    with ``{}`` as an alternative is the same contract, but Swagger UI draws any operation whose
    requirements include ``{}`` as already authorized (a closed padlock) and the token-only ones
    as open: the wrong way round for a reader. The description says a token is optional."""
    operation.pop("security", None)
    text = operation.get("description", "")
    if OPTIONAL_TOKEN not in text:
        operation["description"] = f"{text}\n\n{OPTIONAL_TOKEN}".strip()


def problems(described: dict[str, str]) -> dict[str, Any]:
    """``extend_schema(extensions=...)`` for problem statuses particular to an operation, each
    with what it means there (``{"409": "..."}``)."""
    return {"x-problems": described}


# On an operation (``extend_schema(extensions=ANONYMOUS)``): it needs no token (a POST that
# only reads, such as /validate); the hook adds the "no authentication" alternative.
ANONYMOUS = {"x-anonymous": True}


def body(schema: dict[str, Any], *, anonymous: bool = False) -> dict[str, Any]:
    """``extend_schema(extensions=...)`` for an operation whose request body is ``schema`` (a
    JSON Schema drf-spectacular cannot take as ``request=``); ``anonymous``: see ANONYMOUS."""
    return {"x-request-schema": schema, **(ANONYMOUS if anonymous else {})}


ANY_JSON: dict[str, Any] = {"description": "Any JSON document."}
MESSAGE_PART = {"type": "object", "additionalProperties": True}
A2A_MESSAGE = {
    "type": "object",
    "required": ["parts"],
    "properties": {"parts": {"type": "array", "items": MESSAGE_PART}},
    "additionalProperties": True,
}
CHECK_MESSAGE = {
    "oneOf": [
        A2A_MESSAGE,
        {
            "type": "object",
            "required": ["message"],
            "properties": {"message": A2A_MESSAGE},
            "additionalProperties": False,
        },
    ]
}
MATCH = {
    "type": "object",
    "required": ["payload"],
    "properties": {
        "payload": ANY_JSON,
        "limit": {"type": "integer", "minimum": 1, "maximum": 100},
    },
    "additionalProperties": False,
}
# A named schema of the agent, or a skill (its schema'd input mode, else its inputFields):
# exactly one of the two.
VALIDATE_PAYLOAD = {
    "type": "object",
    "oneOf": [{"required": ["schema", "payload"]}, {"required": ["skill", "payload"]}],
    "properties": {
        "schema": {"type": "string", "minLength": 1, "description": "A schema name."},
        "skill": {"type": "string", "minLength": 1, "description": "A skill's id."},
        "payload": ANY_JSON,
    },
    "additionalProperties": False,
}
# What a submitted URL must look like before the fetch policy looks at its host.
_LABEL = "[A-Za-z0-9]([A-Za-z0-9-]{0,38}[A-Za-z0-9])?"
HTTP_URL = {
    "type": "string",
    "maxLength": 2048,
    # Path: printable ASCII but the backslash and the percent sign (no escapes to get wrong).
    "pattern": f"^https://({_LABEL}\\.){{1,4}}[A-Za-z]{{2,20}}(/[!-$&-\\[\\]-~]*)?$",
}
# What the document promises of an origin a publisher claims: https and a DNS name, nothing
# after the host (the server also takes http and IP hosts where the fetch policy allows them).
HTTPS_ORIGIN = {
    "type": "string",
    "maxLength": 300,
    "pattern": f"^https://({_LABEL}\\.){{1,4}}[A-Za-z]{{2,20}}/?$",
}
# A media type as the search parameters take it (RFC 9110 tokens, at most one parameter).
_TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+"
_QUOTED = "[ !#-\\[\\]-~]"  # printable ASCII but the quote and the backslash
# Empty (or blanks) is no filter, as for every search parameter (a form's empty field).
MEDIA_TYPE = {
    "type": "string",
    "maxLength": 1000,
    "pattern": (
        f'^[ \\t]*({_TOKEN}/{_TOKEN}([ \\t]*;[ \\t]*{_TOKEN}=({_TOKEN}|"{_QUOTED}*"))?[ \\t]*)?$'
    ),
}
MEDIA_TYPES = {"input_mode", "output_mode"}
SUBMISSION = {
    "type": "object",
    "required": ["url"],
    "properties": {"url": HTTP_URL},
    "additionalProperties": False,
}
IMPORT: dict[str, Any] = {
    "oneOf": [
        {
            "type": "object",
            "required": ["urls"],
            "properties": {
                "urls": {
                    "type": "array",
                    "items": {"type": "string", "maxLength": 2048, "pattern": "^[^\\x00]*$"},
                    "minItems": 1,
                    "maxItems": 1000,  # REGISTRY_IMPORT_INLINE_MAX_URLS
                },
            },
            "additionalProperties": False,
        },
        {
            "type": "object",
            "required": ["url"],
            "properties": {"url": HTTP_URL},
            "additionalProperties": False,
        },
    ]
}


def links_to_agent(detail_operation: str) -> dict[str, Any]:
    """``extend_schema(extensions=...)``: the agent's ``id`` in the answer leads to its detail."""
    link = {
        "GetAgent": {
            "operationId": detail_operation,
            "parameters": {"id": "$response.body#/id"},
        }
    }
    return {"x-links": {"200": link, "202": link}}


def _import_schema() -> dict[str, Any]:
    inline, listing = IMPORT["oneOf"]
    urls = {**inline["properties"]["urls"], "maxItems": settings.REGISTRY_IMPORT_INLINE_MAX_URLS}
    return {"oneOf": [{**inline, "properties": {"urls": urls}}, listing]}
