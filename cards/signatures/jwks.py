"""Fetching JWK sets through the safe fetcher, with a bounded cache.

* Every JWKS is fetched with ``registry.http.fetch`` (address policy, redirects re-checked,
  timeouts) and a 64 KiB body cap; never with PyJWT's ``PyJWKClient`` (reference
  ``fetching-and-crawling.md`` section 7.2).
* Successful bodies are kept in Django's cache for the response's Cache-Control ``max-age``
  (or Expires), clamped to 60 s .. 24 h; 5 minutes when the server says nothing. Permanent
  failures (404, refused address, not JSON, too large) are kept for 60 s so a burst of cards
  from one origin does not hammer it; transient failures are not cached.
* A kid missing from a cached set, or a cached key that fails to verify, allows one refetch
  per (URL, kid) every 5 minutes: that is how a key rotation is picked up before the TTL ends.
* Parsed key sets are memoised per process by body digest, so a cached JWKS costs one cache
  read, not a JSON parse and key construction.
"""

from __future__ import annotations

import dataclasses
import email.utils
import functools
import hashlib
import threading
import time
from dataclasses import dataclass
from typing import Any

from django.core.cache import cache as default_cache

from cards.signatures.keys import JwksError, KeySet, parse_jwks_bytes
from registry.http import FetchError, FetchPolicy, fetch

MAX_JWKS_BYTES = 64 * 1024
MIN_TTL = 60
MAX_TTL = 24 * 60 * 60
DEFAULT_TTL = 5 * 60
ERROR_TTL = 60
REFETCH_INTERVAL = 5 * 60
ACCEPT = "application/jwk-set+json, application/json;q=0.9"
_CACHE_PREFIX = "cards.signatures.jwks.v1:"
_MEMO_SIZE = 256
# Parsed key sets by SHA-256 of the JWKS body, shared by every JwksSource in the process (the
# lead builds one per crawl): a cached JWKS then costs a cache read, not a key construction.
_MEMO: dict[str, KeySet] = {}
_MEMO_LOCK = threading.Lock()


@dataclass
class JwksLookup:
    url: str
    keyset: KeySet | None = None
    error: str = ""  # why there is no keyset
    transient: bool = False
    cached: bool = False  # came from the cache rather than a fetch made now


def ttl_from_headers(
    headers: dict[str, str], *, default: int = DEFAULT_TTL, low: int = MIN_TTL, high: int = MAX_TTL
) -> int:
    """Seconds to keep a response, from Cache-Control / Age / Expires, clamped to [low, high]."""
    directives: dict[str, str] = {}
    for part in headers.get("cache-control", "").split(","):
        name, _, value = part.strip().partition("=")
        if name:
            directives[name.strip().lower()] = value.strip().strip('"')
    ttl: float = default
    if "no-store" in directives or "no-cache" in directives:
        ttl = low
    elif directives.get("max-age", "").isdigit():
        age = headers.get("age", "").strip()
        ttl = int(directives["max-age"]) - (int(age) if age.isdigit() else 0)
    elif headers.get("expires"):
        try:
            expires = email.utils.parsedate_to_datetime(headers["expires"]).timestamp()
            date_header = headers.get("date")
            now = (
                email.utils.parsedate_to_datetime(date_header).timestamp()
                if date_header
                else time.time()
            )
            ttl = expires - now
        except (TypeError, ValueError, IndexError, OverflowError):
            ttl = low  # an unreadable Expires means "already expired" (RFC 9111 5.3)
    return int(min(max(ttl, low), high))


class _FailOpenCache:
    """The shared cache, where an outage (Redis down) reads as a miss and skips writes.

    Verification must not fail because the cache is unreachable: it then fetches every time.
    """

    def __init__(self, cache: Any) -> None:
        self._cache = cache

    def get(self, key: str, default: Any = None) -> Any:
        try:
            return self._cache.get(key, default)
        except Exception:  # any backend error
            return default

    def set(self, key: str, value: Any, timeout: float | None = None) -> None:
        try:
            self._cache.set(key, value, timeout)
        except Exception:  # any backend error
            return

    def add(self, key: str, value: Any, timeout: float | None = None) -> bool:
        try:
            return bool(self._cache.add(key, value, timeout))
        except Exception:  # any backend error: allow the refetch
            return True


class JwksSource:
    """Gets JWK sets by URL for ``verify_document``; build one per process or per crawl."""

    def __init__(
        self,
        policy: FetchPolicy | None = None,
        *,
        cache: Any = None,
        max_bytes: int = MAX_JWKS_BYTES,
        min_ttl: int = MIN_TTL,
        max_ttl: int = MAX_TTL,
        default_ttl: int = DEFAULT_TTL,
    ) -> None:
        self._policy = policy
        self._cache = cache
        self.max_bytes = max_bytes
        self.min_ttl, self.max_ttl, self.default_ttl = min_ttl, max_ttl, default_ttl
        self.fetches = 0  # fetches made through this source (tests, benchmarks)

    @classmethod
    def from_settings(cls) -> JwksSource:
        return cls(FetchPolicy.from_settings())

    @property
    def policy(self) -> FetchPolicy:
        if self._policy is None:
            self._policy = FetchPolicy.from_settings()
        return self._policy

    @property
    def cache(self) -> Any:
        if self._cache is None:
            # The proxy, kept: it still finds the current thread's connection on each call.
            self._cache = _FailOpenCache(default_cache)
        return self._cache

    @property
    def allow_http(self) -> bool:
        return self.policy.allow_http

    @staticmethod
    @functools.lru_cache(maxsize=1024)
    def _key(url: str, *extra: str) -> str:
        digest = hashlib.sha256("\n".join((url, *extra)).encode("utf-8", "replace")).hexdigest()
        return _CACHE_PREFIX + digest[:40]

    def get(self, url: str) -> JwksLookup:
        """The key set at ``url``, from the cache when it is there."""
        entry = self.cache.get(self._key(url))
        if isinstance(entry, dict):
            lookup = self._from_entry(url, entry)
            if lookup is not None:
                lookup.cached = True
                return lookup
        return self._fetch(url)

    def refetch(self, url: str, kid: str) -> JwksLookup | None:
        """Fetch again because ``kid`` was missing or failed; None when done recently."""
        if not self.cache.add(self._key(url, "refetch", kid), 1, REFETCH_INTERVAL):
            return None
        return self._fetch(url)

    def _from_entry(self, url: str, entry: dict[str, Any]) -> JwksLookup | None:
        if "error" in entry:
            return JwksLookup(url, error=str(entry["error"]))
        body, digest = entry.get("body"), entry.get("digest")
        if not isinstance(body, bytes) or not isinstance(digest, str):
            return None
        keyset = _MEMO.get(digest)
        if keyset is None:
            try:
                keyset = parse_jwks_bytes(body)
            except JwksError:
                return None
            self._remember(digest, keyset)
        return JwksLookup(url, keyset=keyset)

    @staticmethod
    def _remember(digest: str, keyset: KeySet) -> None:
        with _MEMO_LOCK:
            if len(_MEMO) >= _MEMO_SIZE:
                _MEMO.clear()
            _MEMO[digest] = keyset

    def _fetch(self, url: str) -> JwksLookup:
        self.fetches += 1
        policy = dataclasses.replace(
            self.policy, max_bytes=min(self.policy.max_bytes, self.max_bytes)
        )
        try:
            result = fetch(url, policy=policy, headers={"Accept": ACCEPT}, expect_json=True)
        except FetchError as err:
            lookup = JwksLookup(
                url,
                error=f"the JWKS at {url} could not be fetched: {err.reason}",
                transient=err.transient,
            )
            if not err.transient:
                self.cache.set(self._key(url), {"error": lookup.error}, ERROR_TTL)
            return lookup
        try:
            keyset = parse_jwks_bytes(result.body)
        except JwksError as exc:
            error = f"the JWKS at {url} is unusable: {exc}"
            self.cache.set(self._key(url), {"error": error}, ERROR_TTL)
            return JwksLookup(url, error=error)
        digest = hashlib.sha256(result.body).hexdigest()
        self._remember(digest, keyset)
        ttl = ttl_from_headers(
            result.headers, default=self.default_ttl, low=self.min_ttl, high=self.max_ttl
        )
        self.cache.set(self._key(url), {"body": result.body, "digest": digest}, ttl)
        return JwksLookup(url, keyset=keyset)
