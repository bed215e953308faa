"""One request of a live check, sent through the registry's fetcher and kept as a short excerpt.

Every request goes through :func:`registry.http.fetch`: the fetch policy (no private or refused
address, no redirect to one, https unless allowed), a byte cap on the answer and connect, read
and total time bounds. No credentials are ever sent; the User-Agent and a header say that the
request is the registry's check, so an agent can recognise it (docs/live-checks.md).
"""

from __future__ import annotations

import dataclasses
import json
import time
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings

from registry.http import FetchError, FetchPolicy, fetch

# What an excerpt keeps of a request or an answer body (characters).
EXCERPT = 600
CHECK_HEADER = "X-A2A-Registry-Check"
# Fetch failures that mean the request never left: the address or URL was refused.
REFUSED = frozenset({"address-refused", "scheme-refused", "port-refused", "bad-url"})


def policy() -> FetchPolicy:
    base = FetchPolicy.from_settings()
    return dataclasses.replace(
        base,
        max_bytes=settings.REGISTRY_LIVE_MAX_BYTES,
        connect_timeout=min(base.connect_timeout, settings.REGISTRY_LIVE_CONNECT_TIMEOUT),
        read_timeout=min(base.read_timeout, settings.REGISTRY_LIVE_READ_TIMEOUT),
        total_timeout=settings.REGISTRY_LIVE_REQUEST_TIMEOUT,
        user_agent=f"{base.user_agent} live-check",
        max_redirects=0 if base.max_redirects == 0 else min(base.max_redirects, 3),
    )


def excerpt(data: bytes | str, limit: int = EXCERPT) -> str:
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} characters)"


@dataclass
class Exchange:
    """What was sent and what came back (or why nothing did)."""

    method: str
    url: str
    sent: str
    status: int | None = None
    content_type: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    error: str | None = None  # the fetcher's reason when no answer was read
    error_code: str | None = None
    elapsed_ms: float = 0.0
    _json: Any = dataclasses.field(default=None, repr=False)
    _parsed: bool = dataclasses.field(default=False, repr=False)

    @property
    def answered(self) -> bool:
        return self.status is not None

    @property
    def refused(self) -> bool:
        return self.error_code in REFUSED

    def json(self) -> Any:
        """The answer as JSON, or None when it is not JSON."""
        if not self._parsed:
            self._parsed = True
            try:
                self._json = json.loads(self.body) if self.body else None
            except ValueError:
                self._json = None
        return self._json

    def problem(self) -> str | None:
        """Why this answer cannot be read as an A2A answer at all, or None."""
        if not self.answered:
            return f"no answer: {self.error}"
        if self.json() is None:
            kind = self.content_type or "no content type"
            return f"HTTP {self.status} with a body that is not JSON ({kind})"
        return None

    def as_dict(self) -> dict[str, Any]:
        return {
            "request": f"{self.method} {self.url}\n{self.sent}".rstrip(),
            "status": self.status,
            "response": excerpt(self.body) if self.answered else None,
            "error": self.error,
            "elapsed_ms": round(self.elapsed_ms, 1),
        }


def send(
    url: str,
    *,
    method: str = "POST",
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
    check: str = "",
) -> Exchange:
    """Send one request under the live-check policy; never raises for what the agent did."""
    sent = excerpt(body or b"")
    request_headers = {"Accept": "application/json", CHECK_HEADER: check or "live"}
    request_headers.update(headers or {})
    exchange = Exchange(method=method, url=url, sent=sent)
    started = time.monotonic()
    try:
        result = fetch(
            url,
            policy=policy(),
            headers=request_headers,
            expect_json=False,
            method=method,
            content=body,
            any_status=True,
        )
    except FetchError as err:
        exchange.error = err.reason
        exchange.error_code = err.code
    else:
        exchange.status = result.status
        exchange.content_type = result.content_type
        exchange.headers = result.headers
        exchange.body = result.body
    exchange.elapsed_ms = (time.monotonic() - started) * 1000.0
    return exchange
