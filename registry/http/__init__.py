"""Outbound HTTP for the registry: every request goes through ``fetch`` (DESIGN section 6)."""

from __future__ import annotations

from registry.http.addresses import Network, address_refusal, host_refusal, parse_ip_literal
from registry.http.fetcher import (
    FetchError,
    FetchPolicy,
    FetchResult,
    check_url,
    fetch,
    media_type,
    parse_retry_after,
)

__all__ = [
    "FetchError",
    "FetchPolicy",
    "FetchResult",
    "Network",
    "address_refusal",
    "check_url",
    "fetch",
    "host_refusal",
    "media_type",
    "parse_ip_literal",
    "parse_retry_after",
]
