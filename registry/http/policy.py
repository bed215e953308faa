"""What the fetcher may do: ``FetchPolicy``, built from Django settings in production."""

from __future__ import annotations

import ipaddress
import ssl
from collections.abc import Callable
from dataclasses import dataclass

from django.conf import settings

from registry.http.addresses import Network

Resolver = Callable[[str, int], list[str]]

DEFAULT_USER_AGENT = "A2A-Card-Registry/0.1"


@dataclass(frozen=True, kw_only=True)
class FetchPolicy:
    """What the fetcher may do. ``from_settings()`` in production; tests build one directly.

    Every field has the production default, so ``dataclasses.replace`` and partial
    construction both work.
    """

    allow_http: bool = False
    # Exempt from the address block (tests and development); any port is allowed there.
    allowed_networks: tuple[Network, ...] = ()
    # Ports allowed for every other destination.
    allowed_ports: frozenset[int] = frozenset({443})
    max_bytes: int = 1024 * 1024
    connect_timeout: float = 5.0
    read_timeout: float = 10.0
    total_timeout: float = 20.0
    user_agent: str = DEFAULT_USER_AGENT
    max_redirects: int = 3
    # The politeness gate (registry.http.gate): the gap between request starts at one
    # destination, the requests one destination may receive in a clock hour (0: no ceiling),
    # and how long a request may sleep for its turn before it is refused as busy. Off for a
    # policy built by hand; from_settings() turns it on.
    min_gap: float = 0.0
    hourly_limit: int = 0
    max_wait: float = 5.0
    # Test hook: (host, port) -> IP strings. None means the system resolver.
    resolver: Resolver | None = None
    # Trust store override (tests with a throwaway CA). None means the default CA bundle.
    # Whatever is passed must verify certificates: the fetcher never turns that off.
    ssl_context: ssl.SSLContext | None = None

    def __post_init__(self) -> None:
        # Accept lists/sets and CIDR strings from callers, store the immutable forms.
        networks = tuple(
            n
            if isinstance(n, ipaddress.IPv4Network | ipaddress.IPv6Network)
            else ipaddress.ip_network(n, strict=False)
            for n in self.allowed_networks
        )
        object.__setattr__(self, "allowed_networks", networks)
        object.__setattr__(self, "allowed_ports", frozenset(self.allowed_ports))
        if self.max_bytes < 1:
            raise ValueError("max_bytes must be positive")
        if self.max_redirects < 0:
            raise ValueError("max_redirects must not be negative")

    @classmethod
    def from_settings(cls) -> FetchPolicy:
        return cls(
            allow_http=settings.REGISTRY_FETCH_ALLOW_HTTP,
            allowed_networks=tuple(settings.REGISTRY_FETCH_ALLOWED_NETWORKS),
            allowed_ports=frozenset(settings.REGISTRY_FETCH_ALLOWED_PORTS),
            max_bytes=settings.REGISTRY_FETCH_MAX_BYTES,
            connect_timeout=settings.REGISTRY_FETCH_CONNECT_TIMEOUT,
            read_timeout=settings.REGISTRY_FETCH_READ_TIMEOUT,
            total_timeout=settings.REGISTRY_FETCH_TOTAL_TIMEOUT,
            user_agent=settings.REGISTRY_USER_AGENT,
            min_gap=settings.REGISTRY_DESTINATION_MIN_GAP_SECONDS,
            hourly_limit=settings.REGISTRY_DESTINATION_HOURLY_LIMIT,
            max_wait=settings.REGISTRY_DESTINATION_MAX_WAIT_SECONDS,
        )
