"""The OpenAPI document of the ARD Registry API under ``/ard/`` (issue 39).

The v1 document (``/api/schema``, drf-spectacular) describes the REST API and its problem+json
errors; ARD is another protocol with its own request members, result entries and error envelope
(``{"errorCode", "message", "details"}``, ARD Appendix B), so it has its own document, served at
``/ard/openapi.json`` and browsable at ``/api/docs/ard`` (linked from ``/api/docs``). It is
written from what the views in this package do (docs/ard.md); ``tests/test_rough_edges.py``
validates their answers against it. Unlike the v1 document it is not fuzzed by schemathesis: the
filter expression of ``GET /ard/agents`` and other checks are described in words, not schemas.
"""

from __future__ import annotations

from typing import Any

from cards.ard.identifiers import URN
from protocols.ard.facets import FACETS
from protocols.ard.filters import MAX_VALUE_LENGTH, MAX_VALUES, SIGNATURE_STATES, TERMS
from protocols.ard.listing import ORDERS

JSON = "application/json"
HEALTH = ["unknown", "healthy", "degraded", "unreachable", "gone"]


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _answer(description: str, schema: str) -> dict[str, Any]:
    return {"description": description, "content": {JSON: {"schema": _ref(schema)}}}


def _errors(*statuses: int) -> dict[str, Any]:
    words = {
        400: "A malformed request: a member, parameter, filter term or token it cannot read.",
        404: "No such entry (or one this reader may not see).",
        405: "The operation does not take this method.",
        413: "The body is larger than 64 KB.",
        415: "The body is not JSON.",
        429: "Over the per-client limit; Retry-After says when to come back.",
    }
    return {str(status): _answer(words[status], "Error") for status in statuses}


STRINGS = {"type": "array", "items": {"type": "string"}}
VALUE = {"type": "string", "minLength": 1, "maxLength": MAX_VALUE_LENGTH}
VALUES = {"type": "array", "items": VALUE, "minItems": 1, "maxItems": MAX_VALUES}
FILTER = {
    "type": ["object", "null"],
    "description": "Term paths to values: a string or an array of strings (OR within a term, "
    "AND across terms). A term this registry does not index is a 400 naming it.",
    "properties": {term: {"oneOf": [VALUE, VALUES]} for term in TERMS},
    "additionalProperties": False,
}

SCHEMAS: dict[str, Any] = {
    "Error": {
        "type": "object",
        "description": "ARD's error envelope (Appendix B).",
        "required": ["errorCode", "message"],
        "properties": {
            "errorCode": {
                "type": "string",
                "enum": [
                    "INVALID_ARGUMENT",
                    "UNAUTHENTICATED",
                    "NOT_FOUND",
                    "RATE_LIMIT_EXCEEDED",
                    "INTERNAL_ERROR",
                    "UNIMPLEMENTED",
                ],  # fmt: skip
            },
            "message": {"type": "string"},
            "details": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"field": {"type": "string"}, "message": {"type": "string"}},
                },
            },
        },
    },
    "Metadata": {
        "type": "object",
        "description": "What this registry knows of the agent beyond its card (docs/ard.md, "
        "'Registry metadata').",
        "properties": {
            "registryId": {"type": "string", "format": "uuid"},
            "registryUrl": {"type": "string", "format": "uri"},
            "signature": {"type": "string", "enum": [*SIGNATURE_STATES, "unknown"]},
            "health": {"type": "string", "enum": HEALTH},
            "liveOutcome": {"type": "string", "enum": ["pass", "fail", "not-checked"]},
            "liveCheckedAt": {"type": ["string", "null"], "format": "date-time"},
        },
    },
    "Entry": {
        "type": "object",
        "description": "An agent as an ARD catalog entry (a projection: `url` is its card).",
        "required": ["identifier", "displayName", "type", "url"],
        "properties": {
            "identifier": {"type": "string", "pattern": "^urn:air:"},
            "displayName": {"type": "string"},
            "type": {"type": "string"},
            "url": {"type": "string"},
            "description": {"type": "string"},
            "tags": STRINGS,
            "capabilities": STRINGS,
            "version": {"type": "string"},
            "updatedAt": {"type": "string", "format": "date-time"},
            "metadata": _ref("Metadata"),
            "source": {"type": "string", "description": "The registry the entry comes from."},
            "representativeQueries": STRINGS,
            "trustManifest": {"type": "object"},
        },
    },
    "SearchResult": {
        "allOf": [
            _ref("Entry"),
            {
                "type": "object",
                "required": ["score"],
                "properties": {
                    "score": {
                        "type": "integer",
                        "minimum": 0,
                        "maximum": 100,
                        "description": "A calibrated chance, in percent, that the agent serves "
                        "the need (relevance only, never trust).",
                    },
                    "confident": {"type": "boolean", "description": "score >= 50"},
                    "matched_skill": {"type": ["string", "null"]},
                },
            },
        ]
    },
    "Query": {
        "type": "object",
        "properties": {
            "text": {"type": "string", "maxLength": 1000, "description": "A need in words."},
            "filter": FILTER,
            "@context": {"type": ["object", "string", "array", "null"], "description": "JSON-LD."},
        },
        "additionalProperties": False,
    },
    "SearchRequest": {
        "type": "object",
        "required": ["query"],
        "properties": {
            "query": {"allOf": [_ref("Query"), {"required": ["text"]}]},
            "federation": {"type": "string", "enum": ["auto", "referrals", "none"]},
            "pageSize": {"type": "integer", "minimum": 1, "maximum": 100, "default": 10},
            "pageToken": {"type": ["string", "null"]},
        },
        "additionalProperties": False,
    },
    "Referral": {
        "type": "object",
        "required": ["identifier", "displayName", "type", "url"],
        "properties": {
            "identifier": {"type": "string"},
            "displayName": {"type": "string"},
            "type": {"type": "string"},
            "url": {"type": "string", "format": "uri"},
        },
    },
    "SearchResponse": {
        "type": "object",
        "required": ["results"],
        "properties": {
            "results": {"type": "array", "items": _ref("SearchResult")},
            "referrals": {"type": "array", "items": _ref("Referral")},
            "pageToken": {"type": "string"},
        },
    },
    "ExploreRequest": {
        "type": "object",
        "required": ["resultType"],
        "properties": {
            "query": _ref("Query"),
            "resultType": {
                "type": "object",
                "required": ["facets"],
                "properties": {
                    "facets": {
                        "type": "array",
                        "minItems": 1,
                        "maxItems": 10,
                        "items": {
                            "type": "object",
                            "required": ["field"],
                            "properties": {
                                "field": {"type": "string", "enum": list(FACETS)},
                                "limit": {"type": "integer", "minimum": 1, "maximum": 100},
                                "minCount": {"type": "integer", "minimum": 1},
                            },
                            "additionalProperties": False,
                        },
                    }
                },
                "additionalProperties": False,
            },
        },
        "additionalProperties": False,
    },
    "ExploreResponse": {
        "type": "object",
        "required": ["resultType", "facets"],
        "properties": {
            "resultType": {"type": "string", "enum": ["facets"]},
            "facets": {
                "type": "object",
                "additionalProperties": {
                    "type": "object",
                    "required": ["buckets"],
                    "properties": {
                        "buckets": {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "required": ["value", "count"],
                                "properties": {
                                    "value": {"type": "string"},
                                    "count": {"type": "integer"},
                                },
                            },
                        },
                        "otherCount": {"type": "integer"},
                    },
                },
            },
        },
    },
    "ListResponse": {
        "type": "object",
        "required": ["items"],
        "properties": {
            "items": {"type": "array", "items": _ref("Entry")},
            "pageToken": {"type": "string"},
            "removed": {
                "type": "array",
                "description": "With updatedSince: entries that no longer qualify.",
                "items": {
                    "type": "object",
                    "properties": {
                        "identifier": {"type": "string"},
                        "updatedAt": {"type": "string", "format": "date-time"},
                    },
                },
            },
            "nextUpdatedSince": {"type": "string", "format": "date-time"},
        },
    },
    "Index": {
        "description": "The registry as an `application/ai-registry+json` catalog entry (as in "
        "its /.well-known/ard.json), with the operations' URLs in `metadata`.",
        "allOf": [_ref("Entry")],
    },
}


def _query(name: str, description: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "in": "query", "required": False, "description": description,
            "schema": schema}  # fmt: skip


PATHS: dict[str, Any] = {
    "/ard/": {
        "get": {
            "operationId": "ardIndex",
            "summary": "What this ARD registry is and where its operations are",
            "responses": {"200": _answer("The index.", "Index"), **_errors(405)},
        }
    },
    "/ard/search": {
        "post": {
            "operationId": "ardSearch",
            "summary": "Agents for a need in words, best first (ARD 5.3.2)",
            "description": "Ranked by meaning (docs/search.md); every agent above a low noise "
            "floor is listed with its score. With `federation: auto` peer registries are asked "
            "too (REGISTRY_ARD_PEERS).",
            "requestBody": {"required": True, "content": {JSON: {"schema": _ref("SearchRequest")}}},
            "responses": {
                "200": _answer("The results.", "SearchResponse"),
                **_errors(400, 405, 413, 415, 429),
            },
        }
    },
    "/ard/explore": {
        "post": {
            "operationId": "ardExplore",
            "summary": "Facet counts over the entries a query matches (ARD 5.3.3)",
            "requestBody": {
                "required": True,
                "content": {JSON: {"schema": _ref("ExploreRequest")}},
            },
            "responses": {
                "200": _answer("The facets.", "ExploreResponse"),
                **_errors(400, 405, 413, 415, 429),
            },
        }
    },
    "/ard/agents": {
        "get": {
            "operationId": "ardListAgents",
            "summary": "Every entry in a deterministic order, or what changed since a time",
            "parameters": [
                _query(
                    "filter",
                    "ARD's expression: `field = 'a,b' AND ...`; the terms of search's filter, "
                    "publisherId, displayName, createdAfter, updatedAfter.",
                    {"type": "string", "maxLength": 2000},
                ),
                _query(
                    "orderBy",
                    "A field and an optional ASC or DESC.",
                    {"type": "string", "examples": [f"{name} DESC" for name in ORDERS]},
                ),
                _query(
                    "pageSize", "Entries a page.", {"type": "integer", "minimum": 1, "maximum": 100}
                ),  # fmt: skip
                _query("pageToken", "The previous page's token.", {"type": "string"}),
                _query(
                    "updatedSince",
                    "An ISO 8601 time with a zone: the change feed (items and removed).",
                    {"type": "string", "format": "date-time"},
                ),
            ],
            "responses": {
                "200": _answer("A page of entries.", "ListResponse"),
                "304": {"description": "Not modified (If-None-Match)."},
                **_errors(400, 405, 429),
            },
        }
    },
    "/ard/agents/{identifier}": {
        "get": {
            "operationId": "ardGetAgent",
            "summary": "One entry by its identifier",
            "parameters": [
                {
                    "name": "identifier",
                    "in": "path",
                    "required": True,
                    "description": "`urn:air:<publisher>:<namespace>:<name>`.",
                    "schema": {"type": "string", "maxLength": 512, "pattern": URN.pattern},
                }
            ],
            "responses": {
                "200": _answer("The full entry.", "Entry"),
                "304": {"description": "Not modified (If-None-Match)."},
                **_errors(400, 404, 405, 429),
            },
        }
    },
}


def document(base: str) -> dict[str, Any]:
    """The document, with ``base`` (this registry's URL) as its server."""
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "A2A agent card registry: ARD Registry API",
            "version": "0.91",
            "description": "The registry as an Agentic Resource Discovery registry "
            "(ards-project/ard-spec): natural-language search with A2A filters, facets, a "
            "deterministic list and change feed, and entries by identifier. Reads are "
            "anonymous; a signed-in owner also sees their own agents. Errors use ARD's envelope. "
            "The REST API v1 is described at /api/schema (browsable at /api/docs).",
        },
        "servers": [{"url": base}],
        "paths": PATHS,
        "components": {"schemas": SCHEMAS},
    }
