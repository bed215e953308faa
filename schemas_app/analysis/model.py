"""What an analysis holds: the problems, the features, and the validator it compiles to."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from registry.findings import Severity
from schemas_app.validation import DEFAULT_DRAFT, METASCHEMA_URI, compile_schema, validators

HASH_JCS = "jcs"  # sha256 of the RFC 8785 form
HASH_SORTED_JSON = "sorted-json"  # fallback when RFC 8785 cannot represent the schema

# Top-level JSON types as bits, for the type prefilter of payload matching.
TYPE_BITS = {
    "object": 1,
    "array": 2,
    "string": 4,
    "integer": 8,
    "number": 16 | 8,  # a number schema accepts integers too
    "boolean": 32,
    "null": 64,
}
ALL_TYPES = 127


@dataclass(frozen=True)
class Problem:
    code: str
    severity: Severity
    pointer: str  # into the schema
    message: str


@dataclass
class SchemaAnalysis:
    content: Any
    sha256: str = ""
    hash_algorithm: str = HASH_JCS
    size: int = 0
    dialect: str = ""  # $schema as written
    draft: str = DEFAULT_DRAFT  # the draft it is validated as
    schema_uri: str = ""
    title: str = ""
    types: list[str] = field(default_factory=list)
    type_mask: int = ALL_TYPES
    required: list[str] = field(default_factory=list)
    property_names: list[str] = field(default_factory=list)
    closed: bool = False
    deprecated: bool = False
    problems: list[Problem] = field(default_factory=list)
    storable: bool = True  # hashed and within the size cap: stored as a SchemaDocument
    usable: bool = False  # metaschema-valid, every $ref resolved offline, compiles

    def validator(self) -> Any:
        """The compiled validator (cached by hash), or None when the schema is not usable."""
        if not self.usable:
            return None
        return validator_for(self.sha256, self.content, self.draft)

    def problem_dicts(self) -> list[dict[str, str]]:
        return [
            {"code": p.code, "severity": p.severity, "pointer": p.pointer, "message": p.message}
            for p in self.problems
        ]


def for_validation(content: Any, draft: str) -> Any:
    """The schema as it is compiled: with the ``$schema`` of the draft it is validated as.

    An unknown dialect is validated as 2020-12 (reported as ``schema.unknown-dialect``);
    replacing ``$schema`` means no library ever tries to look the unknown one up.
    """
    if not isinstance(content, dict):
        return content
    copy = dict(content)
    copy["$schema"] = METASCHEMA_URI[draft]
    return copy


def validator_for(sha256: str, content: Any, draft: str) -> Any:
    return validators.get(sha256, lambda: compile_schema(for_validation(content, draft), draft))
