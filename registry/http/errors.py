"""``FetchError``: its codes, which failures are transient, and how library errors map to one.

Everything that can go wrong in a fetch ends up as a ``FetchError`` whose ``str()`` is a
reason fit to show a submitter; ``translate_error`` turns httpx/httpcore/ssl/OS exceptions
into one.
"""

from __future__ import annotations

import email.utils
import functools
import ssl
import time
from datetime import UTC, datetime
from typing import Any, Literal

import httpcore
import httpx

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
    # The registry's own politeness gate (registry.http.gate), not the destination's doing.
    "destination-busy",
    "destination-ceiling",
]

DEADLINE_REASON = "the server did not answer within the total time limit"

_TRANSIENT_CODES = frozenset(
    {
        "dns-failure",
        "connect-failed",
        "timeout",
        "protocol-error",
        "destination-busy",
        "destination-ceiling",
    }
)
# Refusals by the registry's own limits: the destination did nothing wrong.
REGISTRY_LIMIT_CODES = frozenset({"destination-busy", "destination-ceiling"})
_TRANSIENT_STATUSES = frozenset({408, 429})


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


# --- HTTP status errors ---------------------------------------------------------------------


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
        when = when.replace(tzinfo=UTC)
    current = now or datetime.now(UTC)
    return max(0.0, (when - current).total_seconds())


def status_error(response: httpx.Response, url: str) -> FetchError:
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
        return FetchError("timeout", DEADLINE_REASON, url=url)
    if isinstance(exc, httpcore.ConnectTimeout | httpx.ConnectTimeout):
        return FetchError("timeout", "connecting to the server timed out", url=url)
    return FetchError("timeout", "the server stopped sending data (read timeout)", url=url)


def translate_error(
    exc: BaseException, url: str, deadline: float | None = None
) -> FetchError | None:
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
