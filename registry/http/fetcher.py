"""The safe fetcher: every outbound HTTP request of the registry goes through ``fetch``.

Policy (DESIGN section 6, reference ``fetching-and-crawling.md`` sections 1, 3 and 4):

* URLs are checked before any DNS (``check_url``): scheme, userinfo, length, host, port.
* The TCP destination is decided by ``_PinningBackend.connect_tcp``: it resolves the name once,
  refuses the whole lookup if any address is refused, and dials only the checked addresses.
  httpcore keeps the URL host for TLS SNI, certificate checks and ``Host``, so pinning changes
  nothing but the socket's peer. A check in a transport wrapper followed by a second lookup
  inside httpx would leave a DNS-rebinding gap; the backend is the only place without one.
* Redirects are followed here, not by httpx, so each hop is checked again.
* Bodies are read raw with a byte cap and decoded by a capped ``decompressobj`` (httpx's own
  decoder can turn 64 KiB into 64 MiB in one step), under a total deadline that the per-read
  timeouts alone would not enforce.
"""

from __future__ import annotations

import email.utils
import functools
import ipaddress
import logging
import os
import socket
import ssl
import threading
import time
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Literal

import httpcore
import httpx

from registry.http.addresses import (
    Address,
    Network,
    host_refusal,
    in_allowed_networks,
    loopback_addresses,
    loopback_allowed,
    parse_ip_literal,
    resolved_address_refusal,
)

logger = logging.getLogger(__name__)

FetchErrorCode = Literal[
    "bad-url",
    "scheme-refused",
    "port-refused",
    "address-refused",
    "dns-failure",
    "connect-failed",
    "tls-error",
    "timeout",
    "too-many-redirects",
    "redirect-refused",
    "too-large",
    "decompression-failed",
    "http-status",
    "content-type",
    "protocol-error",
]

Resolver = Callable[[str, int], list[str]]

ACCEPT = "application/json, application/*+json;q=0.9, */*;q=0.1"
# Only encodings we decode ourselves with a cap; httpx would add br/zstd if installed.
ACCEPT_ENCODING = "gzip, deflate"
DEFAULT_USER_AGENT = "A2A-Card-Registry/0.1"
MAX_URL_LENGTH = 2048
_DEADLINE_REASON = "the server did not answer within the total time limit"

_DEFAULT_PORTS = {"https": 443, "http": 80}
# A name may resolve to many addresses; dialling each could multiply the connect timeout.
_MAX_ADDRESSES_TRIED = 4
_TRANSIENT_CODES = frozenset({"dns-failure", "connect-failed", "timeout", "protocol-error"})
_TRANSIENT_STATUSES = frozenset({408, 429})
# Headers the fetcher owns; callers may not replace them (the fixed User-Agent, our
# decodable encodings, the host we checked).
_RESERVED_HEADERS = frozenset(
    {
        "host",
        "user-agent",
        "accept-encoding",
        "connection",
        "content-length",
        "transfer-encoding",
        "te",
        "upgrade",
        "keep-alive",
        "proxy-authorization",
        "proxy-connection",
    }
)


# --- Policy ---------------------------------------------------------------------------------


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
    # Test hook: (host, port) -> IP strings. None means the system resolver.
    resolver: Resolver | None = None
    # Trust store override (tests with a throwaway CA). None means the default CA bundle.
    # Whatever is passed must verify certificates: the fetcher never turns that off.
    ssl_context: ssl.SSLContext | None = None

    def __post_init__(self) -> None:
        # Accept lists/sets and CIDR strings from callers, store the immutable forms.
        networks = tuple(
            n if isinstance(n, ipaddress.IPv4Network | ipaddress.IPv6Network)
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
        from django.conf import settings

        return cls(
            allow_http=settings.REGISTRY_FETCH_ALLOW_HTTP,
            allowed_networks=tuple(settings.REGISTRY_FETCH_ALLOWED_NETWORKS),
            allowed_ports=frozenset(settings.REGISTRY_FETCH_ALLOWED_PORTS),
            max_bytes=settings.REGISTRY_FETCH_MAX_BYTES,
            connect_timeout=settings.REGISTRY_FETCH_CONNECT_TIMEOUT,
            read_timeout=settings.REGISTRY_FETCH_READ_TIMEOUT,
            total_timeout=settings.REGISTRY_FETCH_TOTAL_TIMEOUT,
            user_agent=settings.REGISTRY_USER_AGENT,
        )


# --- Errors and results ---------------------------------------------------------------------


class FetchError(Exception):
    """Any reason a fetch did not produce a usable response. ``str(err)`` is the reason."""

    def __init__(
        self,
        code: FetchErrorCode,
        reason: str,
        *,
        url: str = "",
        transient: bool | None = None,
        status: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(reason)
        self.code: FetchErrorCode = code
        self.reason = reason
        self.url = url
        self.transient = code in _TRANSIENT_CODES if transient is None else transient
        self.status = status
        self.retry_after = retry_after

    def __str__(self) -> str:
        return self.reason

    def __repr__(self) -> str:
        return f"FetchError({self.code!r}, {self.reason!r}, url={self.url!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        # Keyword-only arguments defeat Exception's default pickling (Celery may pickle it).
        return (
            functools.partial(
                FetchError,
                url=self.url,
                transient=self.transient,
                status=self.status,
                retry_after=self.retry_after,
            ),
            (self.code, self.reason),
        )


@dataclass
class FetchResult:
    url: str
    status: int
    headers: dict[str, str]
    body: bytes
    content_type: str
    lenient_content_type: bool = False
    redirects: list[str] = field(default_factory=list)
    elapsed_ms: float = 0.0
    not_modified: bool = False
    etag: str | None = None
    last_modified: str | None = None


# --- URL checks (no DNS) --------------------------------------------------------------------


def _format_ports(ports: Iterable[int]) -> str:
    listed = ", ".join(str(p) for p in sorted(ports))
    return listed or "none"


def _parse_url(url: str) -> httpx.URL:
    """Parse with the same parser the client uses, so the check sees what gets requested."""
    if len(url) > MAX_URL_LENGTH:
        raise FetchError("bad-url", f"the URL is longer than {MAX_URL_LENGTH} characters", url=url)
    if any(ord(ch) <= 0x20 or ord(ch) == 0x7F or ch == "\\" for ch in url):
        # httpx would quietly percent-encode these; browsers and resolvers disagree on them.
        raise FetchError("bad-url", "the URL contains spaces or control characters", url=url)
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, ValueError, TypeError):
        raise FetchError("bad-url", "this is not a valid URL", url=url) from None
    if not parsed.scheme:
        raise FetchError("bad-url", "the URL must be absolute, with a scheme and a host", url=url)
    return parsed


def _host_of(parsed: httpx.URL) -> str:
    return parsed.raw_host.decode("ascii").lower()


def _effective_port(parsed: httpx.URL) -> int:
    return parsed.port if parsed.port is not None else _DEFAULT_PORTS[parsed.scheme]


def _port_exempt(host: str, policy: FetchPolicy) -> bool:
    """Exempt hosts (tests, development) may use any port; everything else needs the list."""
    ip = parse_ip_literal(host)
    if ip is not None:
        return in_allowed_networks(ip, policy.allowed_networks)
    return host.rstrip(".") == "localhost" and loopback_allowed(policy.allowed_networks)


def _checked_url(url: str, policy: FetchPolicy) -> httpx.URL:
    parsed = _parse_url(url)
    scheme = parsed.scheme
    allowed_schemes = ("https", "http") if policy.allow_http else ("https",)
    if scheme not in allowed_schemes:
        needed = "https or http" if policy.allow_http else "https"
        raise FetchError("scheme-refused", f"{scheme}: URLs are not fetched; use {needed}", url=url)
    if not parsed.raw_host:
        raise FetchError("bad-url", "the URL must be absolute, with a scheme and a host", url=url)
    if parsed.userinfo:
        raise FetchError("bad-url", "URLs with a user name or password are not fetched", url=url)
    host = _host_of(parsed)
    refusal = host_refusal(host, policy.allowed_networks)
    if refusal is not None:
        raise FetchError("address-refused", refusal, url=url)
    port = _effective_port(parsed)
    if not 0 < port < 65536:
        raise FetchError("bad-url", f"{port} is not a valid port number", url=url)
    if port not in policy.allowed_ports and not _port_exempt(host, policy):
        raise FetchError(
            "port-refused",
            f"port {port} is not allowed (allowed: {_format_ports(policy.allowed_ports)})",
            url=url,
        )
    return parsed


def check_url(url: str, policy: FetchPolicy) -> None:
    """Raise a permanent FetchError if ``url`` may not be fetched. No DNS, no traffic."""
    _checked_url(url, policy)


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


class _DeadlineStream(httpcore.NetworkStream):
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
        return _DeadlineStream(inner, self._deadline)

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


def _dial_address(ip: Address) -> str:
    # Dial exactly what was checked: a mapped ::ffff:a.b.c.d was judged as a.b.c.d.
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return str(ip.ipv4_mapped)
    return str(ip)


class _PinningBackend(httpcore.NetworkBackend):
    """Decides every TCP destination: resolve once, refuse on any bad answer, dial checked IPs."""

    def __init__(self, policy: FetchPolicy, deadline: float) -> None:
        self._policy = policy
        self._deadline = deadline
        self._inner = httpcore.SyncBackend()

    def _addresses(self, host: str, port: int, timeout: float) -> list[Address]:
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
                    f"port {port} is not allowed (allowed: {_format_ports(policy.allowed_ports)})",
                )

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        connect_timeout = _clamp_timeout(timeout, self._deadline, httpcore.ConnectTimeout)
        addresses = self._addresses(host, port, connect_timeout)
        self._check(host, port, addresses)
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
            return _DeadlineStream(stream, self._deadline)
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


# --- Exception translation ------------------------------------------------------------------


def _find_cause(exc: BaseException, kind: type[BaseException]) -> BaseException | None:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, kind):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


def _tls_reason(error: BaseException) -> str:
    if isinstance(error, ssl.SSLCertVerificationError):
        detail = error.verify_message or error.reason or "invalid certificate"
        return f"the TLS certificate was not accepted: {detail}"
    detail = getattr(error, "reason", None) or str(error) or "handshake failed"
    return f"the TLS handshake failed: {detail}"


def _os_detail(exc: BaseException) -> str:
    cause = _find_cause(exc, OSError)
    if isinstance(cause, OSError) and cause.strerror:
        return cause.strerror.lower()
    text = str(exc)
    return text if text else type(exc).__name__


def _timeout_error(exc: BaseException, url: str, deadline: float | None) -> FetchError:
    if deadline is not None and time.monotonic() >= deadline - 0.01:
        return FetchError("timeout", _DEADLINE_REASON, url=url)
    if isinstance(exc, httpcore.ConnectTimeout | httpx.ConnectTimeout):
        return FetchError("timeout", "connecting to the server timed out", url=url)
    return FetchError("timeout", "the server stopped sending data (read timeout)", url=url)


def _translate(exc: BaseException, url: str, deadline: float | None = None) -> FetchError | None:
    """Map httpx/httpcore/ssl/OS errors to a FetchError; None for programming errors."""
    if isinstance(exc, FetchError):
        if not exc.url:
            exc.url = url
        return exc
    tls_error = _find_cause(exc, ssl.SSLError)
    if tls_error is not None:
        return FetchError("tls-error", _tls_reason(tls_error), url=url)
    if isinstance(exc, httpcore.TimeoutException | httpx.TimeoutException | TimeoutError):
        return _timeout_error(exc, url, deadline)
    if isinstance(exc, httpcore.ConnectError | httpx.ConnectError):
        return FetchError("connect-failed", f"could not connect: {_os_detail(exc)}", url=url)
    if isinstance(exc, httpcore.RemoteProtocolError | httpx.RemoteProtocolError):
        return FetchError("protocol-error", f"the server broke the HTTP protocol: {exc}", url=url)
    if isinstance(exc, httpcore.LocalProtocolError | httpx.LocalProtocolError):
        return FetchError(
            "protocol-error", f"the request could not be sent: {exc}", url=url, transient=False
        )
    if isinstance(exc, httpcore.UnsupportedProtocol | httpx.UnsupportedProtocol | httpx.InvalidURL):
        return FetchError("bad-url", "this URL cannot be fetched", url=url)
    if isinstance(exc, httpcore.NetworkError | httpx.NetworkError | OSError):
        return FetchError("connect-failed", f"the connection failed: {_os_detail(exc)}", url=url)
    if isinstance(exc, httpcore.ProtocolError | httpx.HTTPError):
        return FetchError("protocol-error", f"the HTTP exchange failed: {exc}", url=url)
    return None


# --- Transport: a public httpcore pool with the pinning backend -----------------------------


@functools.lru_cache(maxsize=1)
def _default_ssl_context() -> ssl.SSLContext:
    # Loading the CA bundle costs milliseconds; contexts are safe to share between threads.
    return httpx.create_ssl_context()


class _ResponseStream(httpx.SyncByteStream):
    def __init__(self, stream: Iterable[bytes], url: str, deadline: float) -> None:
        self._stream = stream
        self._url = url
        self._deadline = deadline

    def __iter__(self) -> Iterator[bytes]:
        try:
            yield from self._stream
        except Exception as exc:
            mapped = _translate(exc, self._url, self._deadline)
            if mapped is None:
                raise
            raise mapped from exc

    def close(self) -> None:
        close = getattr(self._stream, "close", None)
        if close is not None:
            close()


class _PinnedTransport(httpx.BaseTransport):
    """httpx transport owning an httpcore pool whose network backend pins addresses.

    ``httpx.HTTPTransport`` takes no network backend, so this small transport is the public
    way to get one (reference 3.1).
    """

    def __init__(self, policy: FetchPolicy, deadline: float) -> None:
        self._deadline = deadline
        self._pool = httpcore.ConnectionPool(
            ssl_context=policy.ssl_context or _default_ssl_context(),
            max_connections=4,
            keepalive_expiry=5.0,
            http1=True,
            http2=False,
            retries=0,
            network_backend=_PinningBackend(policy, deadline),
        )

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        assert isinstance(request.stream, httpx.SyncByteStream)
        core_request = httpcore.Request(
            method=request.method,
            url=httpcore.URL(
                scheme=request.url.raw_scheme,
                host=request.url.raw_host,
                port=request.url.port,
                target=request.url.raw_path,
            ),
            headers=request.headers.raw,
            content=request.stream,
            extensions=request.extensions,
        )
        url = str(request.url)
        try:
            core_response = self._pool.handle_request(core_request)
        except Exception as exc:
            mapped = _translate(exc, url, self._deadline)
            if mapped is None:
                raise
            raise mapped from exc
        assert isinstance(core_response.stream, Iterable)
        return httpx.Response(
            status_code=core_response.status,
            headers=core_response.headers,
            stream=_ResponseStream(core_response.stream, url, self._deadline),
            extensions=core_response.extensions,
        )

    def close(self) -> None:
        self._pool.close()


def _build_client(policy: FetchPolicy, deadline: float) -> httpx.Client:
    # One client per fetch: the backend carries this fetch's deadline, and no pooled
    # connection outlives it (pools must not cross a Celery fork either).
    return httpx.Client(
        transport=_PinnedTransport(policy, deadline),
        trust_env=False,  # no proxies (they would defeat pinning) and no .netrc
        follow_redirects=False,
        timeout=httpx.Timeout(
            connect=policy.connect_timeout,
            read=policy.read_timeout,
            write=policy.read_timeout,
            pool=policy.connect_timeout,
        ),
        headers={
            "User-Agent": policy.user_agent,
            "Accept": ACCEPT,
            "Accept-Encoding": ACCEPT_ENCODING,
        },
    )


# --- Response handling ----------------------------------------------------------------------


def _format_size(size: int) -> str:
    if size % (1024 * 1024) == 0:
        return f"{size // (1024 * 1024)} MiB"
    if size % 1024 == 0:
        return f"{size // 1024} KiB"
    return f"{size} bytes"


def _too_large(policy: FetchPolicy, url: str, what: str = "response") -> FetchError:
    return FetchError(
        "too-large", f"the {what} is larger than {_format_size(policy.max_bytes)}", url=url
    )


def parse_retry_after(value: str | None, now: datetime | None = None) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or HTTP-date), or None."""
    if not value:
        return None
    text = value.strip()
    if text.isdigit():
        return float(int(text))
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    current = now or datetime.now(timezone.utc)
    return max(0.0, (when - current).total_seconds())


def media_type(content_type: str | None) -> str:
    """The media type essence of a Content-Type value, lower-cased ('' when absent)."""
    if not content_type:
        return ""
    return content_type.split(";", 1)[0].strip().lower()


def _is_json_type(essence: str) -> bool:
    kind, _, subtype = essence.partition("/")
    return kind == "application" and (subtype == "json" or subtype.endswith("+json"))


def _status_error(response: httpx.Response, url: str) -> FetchError:
    status = response.status_code
    phrase = response.reason_phrase or ""
    return FetchError(
        "http-status",
        f"the server answered {status} {phrase}".strip(),
        url=url,
        transient=status >= 500 or status in _TRANSIENT_STATUSES,
        status=status,
        retry_after=parse_retry_after(response.headers.get("retry-after")),
    )


class _BodyDecoder:
    """Decodes identity/gzip/deflate bodies chunk by chunk, never producing more than the cap."""

    def __init__(self, encoding: str, max_bytes: int, too_large: FetchError, url: str) -> None:
        self._encoding = encoding
        self._max_bytes = max_bytes
        self._too_large = too_large
        self._url = url
        self._parts: list[bytes] = []
        self._size = 0
        self._pending = b""  # deflate: bytes held until the header tells zlib from raw
        self._inflater: Any = None
        self._seen_input = False
        if encoding in ("gzip", "x-gzip"):
            self._inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)

    def _emit(self, data: bytes) -> None:
        self._size += len(data)
        if self._size > self._max_bytes:
            raise self._too_large
        if data:
            self._parts.append(data)

    def _failed(self, detail: str) -> FetchError:
        return FetchError(
            "decompression-failed", f"the compressed body could not be decoded: {detail}",
            url=self._url,
        )

    def _start_deflate(self) -> None:
        # "deflate" should be zlib-wrapped, but some servers send raw deflate; the zlib
        # header (CMF/FLG, a multiple of 31) tells them apart.
        head = self._pending
        zlib_wrapped = (head[0] & 0x0F) == 8 and ((head[0] << 8) | head[1]) % 31 == 0
        self._inflater = zlib.decompressobj(zlib.MAX_WBITS if zlib_wrapped else -zlib.MAX_WBITS)

    def _inflate(self, data: bytes) -> None:
        while data:
            # max_length bounds the output of this call, so a bomb never expands in memory
            # beyond one byte past the cap.
            out = self._inflater.decompress(data, self._max_bytes + 1 - self._size)
            self._emit(out)
            if self._inflater.unconsumed_tail:
                raise self._too_large
            if not self._inflater.eof:
                return
            data = self._inflater.unused_data
            if self._encoding == "deflate" or not data.strip(b"\0"):
                return  # trailing bytes after the stream (or zero padding) carry nothing
            # gzip allows several members back to back.
            self._inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)

    def feed(self, chunk: bytes) -> None:
        if not chunk:
            return
        self._seen_input = True
        if self._encoding == "identity":
            self._emit(chunk)
            return
        try:
            if self._inflater is None:
                self._pending += chunk
                if len(self._pending) < 2:
                    return
                self._start_deflate()
                chunk, self._pending = self._pending, b""
            self._inflate(chunk)
        except zlib.error as exc:
            raise self._failed(str(exc)) from None

    def finish(self) -> bytes:
        if self._encoding != "identity" and self._seen_input:
            try:
                if self._inflater is None:  # a one-byte deflate body cannot be valid
                    raise self._failed("the body is truncated")
                self._emit(self._inflater.flush())
            except zlib.error as exc:
                raise self._failed(str(exc)) from None
            if not self._inflater.eof:
                raise self._failed("the body is truncated")
        return b"".join(self._parts)


def _content_encoding(response: httpx.Response, url: str) -> str:
    value = response.headers.get("content-encoding", "").strip().lower()
    if value in ("", "identity"):
        return "identity"
    if value in ("gzip", "x-gzip", "deflate"):
        return value
    # Stacked or unknown encodings (br, zstd, "gzip, gzip") are refused, not guessed at.
    raise FetchError(
        "decompression-failed", f"unsupported content encoding {value!r}", url=url
    )


def _check_content_type(essence: str, url: str) -> bool:
    """Return True when the type is only leniently accepted; raise for non-JSON types."""
    if _is_json_type(essence):
        return False
    if essence in ("", "text/plain"):
        return True
    raise FetchError(
        "content-type", f"the server sent {essence}, not JSON", url=url
    )


def _check_declared_length(response: httpx.Response, policy: FetchPolicy, url: str) -> None:
    declared = response.headers.get("content-length")
    if declared is not None and declared.strip().isdigit() and int(declared) > policy.max_bytes:
        raise _too_large(policy, url)


def _read_body(
    response: httpx.Response, policy: FetchPolicy, url: str, deadline: float
) -> bytes:
    encoding = _content_encoding(response, url)
    _check_declared_length(response, policy, url)
    decoder = _BodyDecoder(encoding, policy.max_bytes, _too_large(policy, url, "decoded body"), url)
    raw_size = 0
    # iter_raw: count what crosses the wire, before any decoding (httpx's decoders are uncapped).
    for chunk in response.iter_raw():
        raw_size += len(chunk)
        if raw_size > policy.max_bytes:
            raise _too_large(policy, url)
        if time.monotonic() > deadline:
            raise FetchError("timeout", _DEADLINE_REASON, url=url)
        decoder.feed(chunk)
    return decoder.finish()


def _response_headers(response: httpx.Response) -> dict[str, str]:
    # httpx already lower-cases names and joins repeated headers with ", ".
    return {name.lower(): value for name, value in response.headers.items()}


def _result(
    response: httpx.Response,
    *,
    url: str,
    body: bytes,
    lenient: bool,
    redirects: list[str],
    started: float,
) -> FetchResult:
    headers = _response_headers(response)
    return FetchResult(
        url=url,
        status=response.status_code,
        headers=headers,
        body=body,
        content_type=media_type(headers.get("content-type")),
        lenient_content_type=lenient,
        redirects=list(redirects),
        elapsed_ms=(time.monotonic() - started) * 1000.0,
        not_modified=response.status_code == 304,
        etag=headers.get("etag"),
        last_modified=headers.get("last-modified"),
    )


# --- Redirects ------------------------------------------------------------------------------


def _origin(url: httpx.URL) -> tuple[str, bytes, int]:
    return (url.scheme, url.raw_host.lower(), _effective_port(url))


def _redirect_target(
    response: httpx.Response, current: httpx.URL, policy: FetchPolicy
) -> httpx.URL:
    location = response.headers.get("location", "")
    try:
        target = str(current.join(location))
    except (httpx.InvalidURL, ValueError, TypeError):
        raise FetchError(
            "redirect-refused", "the server redirected to an invalid URL", url=str(current)
        ) from None
    try:
        checked = _checked_url(target, policy)
    except FetchError as err:
        # Scheme problems on a hop are the server's doing, not the submitter's URL.
        code = "redirect-refused" if err.code in ("scheme-refused", "bad-url") else err.code
        raise FetchError(code, f"redirect to {target} refused: {err.reason}", url=target) from None
    if current.scheme == "https" and checked.scheme != "https":
        raise FetchError(
            "redirect-refused", "the server redirected from https to plain http", url=target
        )
    return checked


def _clean_caller_headers(headers: Mapping[str, str] | None) -> dict[str, str]:
    if not headers:
        return {}
    return {k: v for k, v in headers.items() if k.lower() not in _RESERVED_HEADERS}


# --- The fetch ------------------------------------------------------------------------------


def fetch(
    url: str,
    *,
    policy: FetchPolicy | None = None,
    headers: Mapping[str, str] | None = None,
    expect_json: bool = True,
) -> FetchResult:
    """GET ``url`` under the fetch policy. Every failure is a FetchError.

    ``headers`` adds request headers (If-None-Match, If-Modified-Since, Accept); they are
    dropped when a redirect leaves the original origin, because validators and credentials
    belong to the original resource.
    """
    policy = policy or FetchPolicy.from_settings()
    started = time.monotonic()
    deadline = started + policy.total_timeout
    current = _checked_url(url, policy)
    caller_headers = _clean_caller_headers(headers)
    first_origin = _origin(current)
    redirects: list[str] = []
    with _build_client(policy, deadline) as client:
        while True:
            hop_headers = caller_headers if _origin(current) == first_origin else {}
            response = _send(client, current, hop_headers, deadline)
            try:
                if response.has_redirect_location:  # not is_redirect: that includes 304
                    if len(redirects) >= policy.max_redirects:
                        raise FetchError(
                            "too-many-redirects",
                            f"the server redirected more than {policy.max_redirects} times",
                            url=str(current),
                        )
                    current = _redirect_target(response, current, policy)
                    redirects.append(str(current))
                    continue
                return _complete(response, str(current), policy, expect_json, redirects,
                                 started, deadline)
            except FetchError:
                raise
            except Exception as exc:
                mapped = _translate(exc, str(current), deadline)
                if mapped is None:
                    raise
                raise mapped from exc
            finally:
                response.close()


def _send(
    client: httpx.Client, url: httpx.URL, headers: Mapping[str, str], deadline: float
) -> httpx.Response:
    try:
        request = client.build_request("GET", url, headers=headers)
        return client.send(request, stream=True)
    except FetchError:
        raise
    except Exception as exc:
        mapped = _translate(exc, str(url), deadline)
        if mapped is None:
            raise
        raise mapped from exc


def _complete(
    response: httpx.Response,
    url: str,
    policy: FetchPolicy,
    expect_json: bool,
    redirects: list[str],
    started: float,
    deadline: float,
) -> FetchResult:
    status = response.status_code
    if status == 304:
        return _result(response, url=url, body=b"", lenient=False, redirects=redirects,
                       started=started)
    if not 200 <= status < 300:
        raise _status_error(response, url)
    lenient = False
    if expect_json:
        # Checked before reading: no point downloading an HTML page.
        lenient = _check_content_type(media_type(response.headers.get("content-type")), url)
    body = _read_body(response, policy, url, deadline)
    return _result(response, url=url, body=body, lenient=lenient, redirects=redirects,
                   started=started)
