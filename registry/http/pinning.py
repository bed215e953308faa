"""Address pinning: resolve a name once, check every answer, dial only the checked addresses.

``PinningBackend`` is the httpcore network backend that decides every TCP destination.
httpcore keeps the URL host for TLS SNI, certificate checks and ``Host``, so pinning changes
nothing but the socket's peer. A check in a transport wrapper followed by a second lookup
inside httpx would leave a DNS-rebinding gap; the backend is the only place without one.
Every stream it returns is a ``DeadlineStream`` holding the fetch's total deadline.
"""

from __future__ import annotations

import ipaddress
import logging
import os
import socket
import ssl
import threading
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

import httpcore

from registry.http.addresses import (
    Address,
    in_allowed_networks,
    loopback_addresses,
    parse_ip_literal,
    resolved_address_refusal,
)
from registry.http.errors import FetchError
from registry.http.policy import FetchPolicy, Resolver
from registry.http.urls import format_ports

logger = logging.getLogger(__name__)

# A name may resolve to many addresses; dialling each could multiply the connect timeout.
_MAX_ADDRESSES_TRIED = 4


# --- Resolution ----------------------------------------------------------------------------


def system_resolver(host: str, port: int) -> list[str]:
    """Resolve with getaddrinfo on the fully qualified name (resolv.conf search domains off)."""
    name = host if host.endswith(".") else host + "."
    infos = socket.getaddrinfo(name, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
    return [str(info[4][0]) for info in infos]


_dns_pool: ThreadPoolExecutor | None = None
_dns_pool_pid: int | None = None
_dns_pool_lock = threading.Lock()


def _dns_executor() -> ThreadPoolExecutor:
    # getaddrinfo cannot be cancelled, so it runs in a small bounded pool that we stop waiting
    # on. One pool per process: threads do not survive a Celery prefork.
    global _dns_pool, _dns_pool_pid
    with _dns_pool_lock:
        if _dns_pool is None or _dns_pool_pid != os.getpid():
            _dns_pool = ThreadPoolExecutor(max_workers=8, thread_name_prefix="registry-dns")
            _dns_pool_pid = os.getpid()
        return _dns_pool


def _resolve_with_timeout(resolver: Resolver, host: str, port: int, timeout: float) -> list[str]:
    future = _dns_executor().submit(resolver, host, port)
    try:
        return future.result(timeout=max(timeout, 0.001))
    except FutureTimeout:
        raise FetchError("dns-failure", f"the DNS lookup of {host} timed out") from None
    except OSError as exc:
        detail = exc.strerror or str(exc) or "lookup failed"
        raise FetchError("dns-failure", f"could not resolve {host}: {detail}") from None


def _unique_addresses(host: str, answers: Iterable[str]) -> list[Address]:
    addresses: list[Address] = []
    for answer in answers:
        try:
            ip = ipaddress.ip_address(answer)
        except ValueError:
            raise FetchError("dns-failure", f"{host} resolved to an invalid address") from None
        if ip not in addresses:  # keep resolver order, drop repeats (one per socket type)
            addresses.append(ip)
    return addresses


# --- Network backend: resolve once, check everything, dial the checked address --------------


def _clamp_timeout(timeout: float | None, deadline: float, exc_type: type[Exception]) -> float:
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise exc_type("the total deadline has passed")
    return remaining if timeout is None else min(timeout, remaining)


class DeadlineStream(httpcore.NetworkStream):
    """Caps every socket operation at the time left before the fetch's total deadline.

    httpx only has per-operation timeouts, so a server dripping a byte every few seconds
    would never time out; clamping each read makes the deadline hold even mid-read.
    """

    def __init__(self, inner: httpcore.NetworkStream, deadline: float) -> None:
        self._inner = inner
        self._deadline = deadline

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(
            max_bytes, _clamp_timeout(timeout, self._deadline, httpcore.ReadTimeout)
        )

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _clamp_timeout(timeout, self._deadline, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        # server_hostname is the URL host (httpcore passes it), so SNI and certificate checks
        # are about the name even though the socket goes to a pinned address.
        inner = self._inner.start_tls(
            ssl_context,
            server_hostname=server_hostname,
            timeout=_clamp_timeout(timeout, self._deadline, httpcore.ConnectTimeout),
        )
        return DeadlineStream(inner, self._deadline)

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


def _dial_address(ip: Address) -> str:
    # Dial exactly what was checked: a mapped ::ffff:a.b.c.d was judged as a.b.c.d.
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return str(ip.ipv4_mapped)
    return str(ip)


class Resolutions:
    """The checked addresses of each (host, port) one fetch asks for, looked up once: the
    politeness gate names the destination by them before the request, and the backend dials
    exactly them (a second lookup could answer otherwise)."""

    def __init__(self, policy: FetchPolicy) -> None:
        self._policy = policy
        self._known: dict[tuple[str, int], list[Address]] = {}

    def addresses(self, host: str, port: int, timeout: float) -> list[Address]:
        key = (host.rstrip(".").lower(), port)
        if key not in self._known:
            addresses = self._lookup(host, port, timeout)
            self._check(host, port, addresses)
            self._known[key] = addresses
        return self._known[key]

    def _lookup(self, host: str, port: int, timeout: float) -> list[Address]:
        literal = parse_ip_literal(host)
        if literal is not None:
            return [literal]  # IP literals skip DNS but not the checks
        if host.rstrip(".").lower() == "localhost":
            # Never ask DNS about localhost: it means the exempt loopback addresses or nothing.
            return loopback_addresses(self._policy.allowed_networks)
        resolver = self._policy.resolver or system_resolver
        return _unique_addresses(host, _resolve_with_timeout(resolver, host, port, timeout))

    def _check(self, host: str, port: int, addresses: list[Address]) -> None:
        if not addresses:
            raise FetchError("dns-failure", f"{host} has no usable address")
        policy = self._policy
        # One bad answer spoils the lookup: a rebinding name often mixes in one public address.
        for ip in addresses:
            refusal = resolved_address_refusal(host, ip, policy.allowed_networks)
            if refusal is not None:
                raise FetchError("address-refused", refusal)
        for ip in addresses:
            if port not in policy.allowed_ports and not in_allowed_networks(
                ip, policy.allowed_networks
            ):
                raise FetchError(
                    "port-refused",
                    f"port {port} is not allowed (allowed: {format_ports(policy.allowed_ports)})",
                )


class PinningBackend(httpcore.NetworkBackend):
    """Decides every TCP destination: resolve once, refuse on any bad answer, dial checked IPs."""

    def __init__(
        self, policy: FetchPolicy, deadline: float, resolutions: Resolutions | None = None
    ) -> None:
        self._deadline = deadline
        self._resolutions = resolutions or Resolutions(policy)
        self._inner = httpcore.SyncBackend()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        connect_timeout = _clamp_timeout(timeout, self._deadline, httpcore.ConnectTimeout)
        addresses = self._resolutions.addresses(host, port, connect_timeout)
        last_error: Exception | None = None
        for ip in addresses[:_MAX_ADDRESSES_TRIED]:
            try:
                stream = self._inner.connect_tcp(
                    _dial_address(ip),
                    port,
                    timeout=_clamp_timeout(timeout, self._deadline, httpcore.ConnectTimeout),
                    local_address=local_address,
                    socket_options=socket_options,
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                last_error = exc
                continue
            logger.debug("connected to %s (%s) port %s", host, ip, port)
            return DeadlineStream(stream, self._deadline)
        assert last_error is not None
        raise last_error

    def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        raise FetchError("address-refused", "unix sockets are never fetched")

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)
