"""Content hashes of schemas: RFC 8785, or sorted JSON when RFC 8785 cannot write the value."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import rfc8785

from schemas_app.analysis.model import HASH_JCS, HASH_SORTED_JSON


def canonical_bytes(value: Any) -> tuple[bytes, str]:
    """The RFC 8785 form, or sorted-key JSON when RFC 8785 cannot represent the value
    (integers beyond +-(2^53-1), e.g. a uint64 maximum)."""
    try:
        return rfc8785.dumps(value), HASH_JCS
    except (rfc8785.CanonicalizationError, ValueError, TypeError):
        text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return text.encode("utf-8", "surrogatepass"), HASH_SORTED_JSON


def content_hash(value: Any) -> tuple[str, str, int]:
    data, algorithm = canonical_bytes(value)
    return hashlib.sha256(data).hexdigest(), algorithm, len(data)
