"""Outbound HTTP for the registry: every request goes through ``fetch`` (DESIGN section 6).

Modules: ``addresses`` (which IPs and host names may be fetched), ``policy`` (FetchPolicy),
``errors`` (FetchError and the mapping of library errors to it), ``urls`` (checks before DNS),
``pinning`` (resolve once, dial the checked address, total deadline), ``transport`` (the httpx
client over the pinning backend), ``body`` (content type, size caps, capped decoding) and
``fetcher`` (``fetch`` and redirects).
"""

from __future__ import annotations

from registry.http.addresses import Network, address_refusal, host_refusal, parse_ip_literal
from registry.http.body import media_type
from registry.http.errors import FetchError, parse_retry_after
from registry.http.fetcher import FetchResult, fetch
from registry.http.policy import FetchPolicy, Resolver
from registry.http.urls import check_url

__all__ = [
    "FetchError",
    "FetchPolicy",
    "FetchResult",
    "Network",
    "Resolver",
    "address_refusal",
    "check_url",
    "fetch",
    "host_refusal",
    "media_type",
    "parse_ip_literal",
    "parse_retry_after",
]
