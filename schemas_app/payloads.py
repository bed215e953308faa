"""What an agent must do with a message or a payload, judged from its indexed schemas.

* :func:`check_message`: seed 000 sections 2 and 3 (the structured-input flow of the schemas
  extension) applied to one A2A Message.
* :func:`check_payload`: seed 003's validation table (contract found and valid / invalid, not
  found with or without other contracts, deprecated), with the agent's named schemas as the
  contracts.

Both read the agent's current index (its declared schemas) and fetch nothing, and both run under
the schema budget of the request (:mod:`schemas_app.budget`): they raise ``BudgetExhausted`` (a
422 problem) when validating spends it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from cards.models import Agent, Extension
from registry.findings import extend_pointer
from registry.mediatypes import schema_json_type
from schemas_app import budget
from schemas_app.analysis import validator_for
from schemas_app.known_extensions import SCHEMAS_EXTENSION_URI
from schemas_app.models import SchemaDocument, SchemaUse
from schemas_app.validation import error_items

STRUCTURED_INPUT = "structured-input"
STRUCTURED_INPUT_ERROR = "structured-input-error"
NO_STRUCTURED_PART = "no-structured-part"
REJECTED_TASK_EXISTS = "rejected-task-exists"

ACTIONS = {
    STRUCTURED_INPUT: "The agent MUST respond with a task that uses this input as its basis.",
    STRUCTURED_INPUT_ERROR: "The agent SHOULD respond that the data supplied was not valid.",
    NO_STRUCTURED_PART: (
        "No part is flagged for structured processing: the response is down to the agent's "
        "implementation."
    ),
    REJECTED_TASK_EXISTS: (
        "The message belongs to an existing task: the agent MUST indicate that the data was "
        "rejected because a task is already running."
    ),
}


@dataclass
class DeclaredSchemas:
    """An agent's named schemas from its current index."""

    documents: dict[str, SchemaDocument | None] = field(default_factory=dict)
    input_names: set[str] = field(default_factory=set)
    extension_declared: bool = False

    @classmethod
    def of(cls, agent: Agent) -> DeclaredSchemas:
        out = cls()
        uses = SchemaUse.objects.filter(agent=agent).exclude(source=SchemaUse.Source.FIELD)
        # The declared uses with their documents; the input uses by name only (a card may have
        # one a skill: 6,482 of them were half a second as rows with their documents).
        declared = uses.filter(role=SchemaUse.Role.DECLARED).select_related("document")
        for use in declared.order_by("id"):
            out.documents.setdefault(use.name, use.document)
        inputs = uses.filter(role=SchemaUse.Role.INPUT).order_by().values_list("name", flat=True)
        out.input_names.update(inputs.distinct())
        out.extension_declared = Extension.objects.filter(
            agent=agent, uri=SCHEMAS_EXTENSION_URI
        ).exists()
        return out

    def names(self) -> list[str]:
        return sorted(self.documents)


def _validator(document: SchemaDocument) -> Any:
    if not document.usable:
        return None
    return validator_for(document.sha256, document.content, document.draft)


def _schema_ref(name: str, document: SchemaDocument | None) -> dict[str, Any]:
    return {
        "name": name,
        "sha256": document.sha256 if document else None,
        "usable": bool(document and document.usable),
    }


# --- seed 000: the structured-input flow --------------------------------------------------------


def _flag(part: Any) -> tuple[str, str, str] | None:
    """``(schema name, media type, pointer of the media type)`` for a part flagged for
    structured processing: a data part whose media type is ``application/json;schema=<name>``.

    The seed puts the media type in ``metadata.mimeType`` (v0.3 parts, ``kind: "data"``); the
    v1.0 spellings (``metadata.mediaType``, the part's own ``mediaType``, no ``kind``) are read too.
    """
    if not isinstance(part, dict):
        return None
    is_data = part.get("kind") == "data" or ("kind" not in part and "data" in part)
    if not is_data:
        return None
    metadata = part.get("metadata") if isinstance(part.get("metadata"), dict) else {}
    for holder, key, pointer in (
        (metadata, "mimeType", "/metadata/mimeType"),
        (metadata, "mediaType", "/metadata/mediaType"),
        (part, "mediaType", "/mediaType"),
    ):
        media = schema_json_type(holder.get(key) if isinstance(holder, dict) else None)
        if media is not None and media.schema is not None:
            return media.schema, media.canonical, pointer
    return None


@dataclass
class MessageCheck:
    outcome: str
    part: dict[str, Any] | None = None
    schema: dict[str, Any] | None = None
    errors: list[dict[str, str]] = field(default_factory=list)
    warnings: list[dict[str, str]] = field(default_factory=list)
    ignored_parts: list[int] = field(default_factory=list)
    available: list[str] = field(default_factory=list)
    task_id: str | None = None
    structured_outcome: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "outcome": self.outcome,
            "action": ACTIONS[self.outcome],
            "part": self.part,
            "schema": self.schema,
            "errors": self.errors,
            "warnings": self.warnings,
            "ignored_parts": self.ignored_parts,
            "available_schemas": self.available,
            "task_id": self.task_id,
            "structured_outcome": self.structured_outcome,
        }


def check_message(message: dict[str, Any], declared: DeclaredSchemas) -> MessageCheck:
    """Apply seed 000 section 3 to ``message`` (its ``parts`` must be a list)."""
    with budget.scope():
        return _check_message(message, declared)


def _check_message(message: dict[str, Any], declared: DeclaredSchemas) -> MessageCheck:
    parts = message["parts"]
    flagged = [(i, found) for i, part in enumerate(parts) if (found := _flag(part)) is not None]
    task_id = message.get("taskId")
    task_id = task_id if isinstance(task_id, str) and task_id else None
    warnings: list[dict[str, str]] = []
    if not declared.extension_declared:
        warnings.append(
            {
                "code": "extension-not-declared",
                "message": "the agent does not declare the schemas extension, so it is not "
                "bound to this flow",
            }
        )
    if not flagged:
        return MessageCheck(NO_STRUCTURED_PART, warnings=warnings, task_id=task_id)
    index, (name, media_type, media_pointer) = flagged[0]
    part_pointer = extend_pointer("/parts", index)
    result = MessageCheck(
        STRUCTURED_INPUT,
        part={"index": index, "pointer": part_pointer, "media_type": media_type},
        warnings=warnings,
        ignored_parts=[i for i, _ in flagged[1:]],
        task_id=task_id,
        available=declared.names(),
    )
    if name not in declared.documents:
        result.outcome = STRUCTURED_INPUT_ERROR
        result.schema = {"name": name, "sha256": None, "usable": False}
        result.errors = [
            {
                "pointer": part_pointer + media_pointer,
                "message": f"the agent card does not declare a schema named {name!r}",
            }
        ]
    else:
        document = declared.documents[name]
        result.schema = _schema_ref(name, document)
        if name not in declared.input_names:
            warnings.append(
                {
                    "code": "not-an-input-mode",
                    "message": f"no input mode of the agent names the schema {name!r}",
                }
            )
        validator = _validator(document) if document is not None else None
        data = parts[index].get("data")
        data_pointer = part_pointer + "/data"
        if validator is None:
            warnings.append(
                {
                    "code": "not-validated",
                    "message": "the registry cannot validate against this schema (see its "
                    "problems); the outcome assumes the data is valid",
                }
            )
        else:
            result.errors = [
                {"pointer": data_pointer + e.pointer, "message": e.message}
                for e in error_items(validator, data)
            ]
            if not isinstance(data, dict):
                result.errors.insert(
                    0,
                    {"pointer": data_pointer, "message": "the data of the part must be an object"},
                )
            if result.errors:
                result.outcome = STRUCTURED_INPUT_ERROR
    if task_id is not None:
        result.structured_outcome = result.outcome
        result.outcome = REJECTED_TASK_EXISTS
    return result


# --- seed 003: payload against a named schema ---------------------------------------------------


def check_payload(name: str, payload: Any, declared: DeclaredSchemas) -> dict[str, Any]:
    """Seed 003's table, with the agent's named schemas as its contracts."""
    with budget.scope():
        return _check_payload(name, payload, declared)


def _check_payload(name: str, payload: Any, declared: DeclaredSchemas) -> dict[str, Any]:
    available = declared.names()
    if name not in declared.documents:
        if not available:
            return {
                "outcome": "no-schemas",
                "valid": None,
                "delivery": "best-effort",
                "detail": "the agent declares no schemas: the payload would be delivered as "
                "best effort, without validation",
                "errors": [],
                "warnings": [],
                "available_schemas": [],
            }
        return {
            "outcome": "unknown-schema",
            "valid": False,
            "delivery": "rejected",
            "detail": f"the agent declares no schema named {name!r}",
            "errors": [{"pointer": "/schema", "message": f"unknown schema {name!r}"}],
            "warnings": [],
            "available_schemas": available,
        }
    document = declared.documents[name]
    schema = _schema_ref(name, document)
    warnings: list[dict[str, Any]] = []
    content = document.content if document is not None else None
    if document is not None and document.deprecated and isinstance(content, dict):
        message = content.get("deprecatedMessage")
        warning: dict[str, Any] = {
            "code": "deprecated",
            "message": message if isinstance(message, str) else "This schema is deprecated.",
        }
        superseded = content.get("supersededBy")
        if isinstance(superseded, str):
            warning["superseded_by"] = superseded
        warnings.append(warning)
    validator = _validator(document) if document is not None else None
    if validator is None:
        return {
            "outcome": "cannot-validate",
            "valid": None,
            "delivery": "best-effort",
            "detail": "the registry cannot validate against this schema (see its problems)",
            "schema": schema,
            "errors": [],
            "warnings": warnings,
            "available_schemas": available,
        }
    errors = [
        {"pointer": "/payload" + e.pointer, "message": e.message, "keyword": e.keyword}
        for e in error_items(validator, payload)
    ]
    return {
        "outcome": "invalid" if errors else "valid",
        "valid": not errors,
        "delivery": "rejected" if errors else "delivered",
        "detail": f"{len(errors)} validation error(s)" if errors else "the payload is valid",
        "schema": schema,
        "errors": errors,
        "warnings": warnings,
        "available_schemas": available,
    }
