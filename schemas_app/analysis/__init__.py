"""One embedded JSON Schema, analysed: content hash, dialect, problems, prefilter features.

Everything here depends on the schema's content only, so analyses are cached by content hash.
Problems carry pointers relative to the schema; :mod:`schemas_app.checks` prefixes them with
where the schema sits in the card.
"""

from __future__ import annotations

from schemas_app.analysis.analyse import analyse_schema, clear_caches
from schemas_app.analysis.features import value_bits
from schemas_app.analysis.hashing import canonical_bytes, content_hash
from schemas_app.analysis.model import (
    ALL_TYPES,
    HASH_JCS,
    HASH_SORTED_JSON,
    Problem,
    SchemaAnalysis,
    for_validation,
    validator_for,
)
from schemas_app.analysis.refs import resolve_pointer
from schemas_app.validation import DRAFT2019

__all__ = [
    "ALL_TYPES",
    "DRAFT2019",
    "HASH_JCS",
    "HASH_SORTED_JSON",
    "Problem",
    "SchemaAnalysis",
    "analyse_schema",
    "canonical_bytes",
    "clear_caches",
    "content_hash",
    "for_validation",
    "resolve_pointer",
    "validator_for",
    "value_bits",
]
