"""JWKS fetching through the safe fetcher (real loopback servers) and its cache."""

from __future__ import annotations

import socket
from typing import Any

import pytest

from cards.signatures import JwksSource
from cards.signatures.jwks import ERROR_TTL, ttl_from_headers
from tests.signatures.helpers import LOOPBACK_POLICY, jwks_bytes, public_jwk, shared_key
from tests.support import CardServer

PATH = "/.well-known/jwks.json"


@pytest.mark.parametrize(
    ("headers", "ttl"),
    [
        ({}, 300),
        ({"cache-control": "max-age=10"}, 60),
        ({"cache-control": "public, max-age=600"}, 600),
        ({"cache-control": "max-age=600", "age": "100"}, 500),
        ({"cache-control": 'max-age="7200"'}, 7200),
        ({"cache-control": "max-age=99999999"}, 86400),
        ({"cache-control": "no-store"}, 60),
        ({"cache-control": "no-cache, max-age=3600"}, 60),
        ({"cache-control": "max-age=-5"}, 300),
        (
            {"expires": "Thu, 01 Jan 2026 01:00:00 GMT", "date": "Thu, 01 Jan 2026 00:00:00 GMT"},
            3600,
        ),
        ({"expires": "0"}, 60),
    ],
)
def test_ttl_is_bounded(headers: dict[str, str], ttl: int) -> None:
    assert ttl_from_headers(headers) == ttl


class RecordingCache:
    """A dict-backed cache that remembers the timeouts it was given."""

    def __init__(self) -> None:
        self.data: dict[str, Any] = {}
        self.timeouts: dict[str, int] = {}

    def get(self, key: str) -> Any:
        return self.data.get(key)

    def set(self, key: str, value: Any, timeout: int) -> None:
        self.data[key] = value
        self.timeouts[key] = timeout

    def add(self, key: str, value: Any, timeout: int) -> bool:
        if key in self.data:
            return False
        self.set(key, value, timeout)
        return True


def _jwks(site: CardServer, **headers: str) -> str:
    return site.serve(PATH, jwks_bytes(public_jwk(shared_key("EdDSA"), "k1")), headers=headers)


def test_a_jwks_is_fetched_once_and_cached_per_cache_control(site: CardServer) -> None:
    url = _jwks(site, **{"Cache-Control": "max-age=1200"})
    cache = RecordingCache()
    source = JwksSource(LOOPBACK_POLICY, cache=cache)
    first, second = source.get(url), source.get(url)
    assert first.keyset is not None and first.keyset.find("k1") and not first.cached
    assert second.cached and second.keyset is first.keyset  # memoised parse
    assert site.hits(PATH) == 1
    assert list(cache.timeouts.values()) == [1200]
    assert site.requests[0][1]["Accept"].startswith("application/jwk-set+json")


def test_the_django_cache_is_shared_between_sources(site: CardServer) -> None:
    url = _jwks(site)
    JwksSource(LOOPBACK_POLICY).get(url)
    again = JwksSource(LOOPBACK_POLICY)
    assert again.get(url).cached and again.fetches == 0 and site.hits(PATH) == 1


def test_permanent_failures_are_cached_briefly(site: CardServer) -> None:
    url = site.url(PATH)  # 404
    cache = RecordingCache()
    source = JwksSource(LOOPBACK_POLICY, cache=cache)
    first = source.get(url)
    assert first.keyset is None and "404" in first.error and not first.transient
    assert source.get(url).error == first.error and site.hits(PATH) == 1
    assert list(cache.timeouts.values()) == [ERROR_TTL]


def test_transient_failures_are_not_cached(site: CardServer) -> None:
    url = site.serve(PATH, b"busy", status=503)
    source = JwksSource(LOOPBACK_POLICY)
    assert source.get(url).transient and source.get(url).transient
    assert site.hits(PATH) == 2


def test_connection_refused_is_transient() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    lookup = JwksSource(LOOPBACK_POLICY).get(f"http://127.0.0.1:{port}{PATH}")
    assert lookup.keyset is None and lookup.transient and "could not be fetched" in lookup.error


@pytest.mark.parametrize(
    ("body", "content_type", "message"),
    [
        (b'{"keys": [' + b'{"kty":"EC"},' * 6000 + b"{}]}", "application/json", "64 KiB"),
        (b"<html>keys</html>", "text/html", "text/html"),
        (b"not json", "application/json", "not valid JSON"),
        (b'{"no": "keys"}', "application/jwk-set+json", "no 'keys'"),
    ],
)
def test_unusable_jwks_responses(
    site: CardServer, body: bytes, content_type: str, message: str
) -> None:
    url = site.serve(PATH, body, content_type=content_type)
    lookup = JwksSource(LOOPBACK_POLICY).get(url)
    assert lookup.keyset is None and not lookup.transient and message in lookup.error


def test_refused_addresses_are_never_contacted() -> None:
    for url in ("http://169.254.169.254/jwks.json", "http://10.0.0.1/jwks.json", "file:///etc/x"):
        lookup = JwksSource(LOOPBACK_POLICY).get(url)
        assert lookup.keyset is None and not lookup.transient


def test_https_only_without_allow_http(site: CardServer) -> None:
    url = _jwks(site)
    strict = JwksSource(
        LOOPBACK_POLICY.__class__(allowed_networks=LOOPBACK_POLICY.allowed_networks)
    )
    lookup = strict.get(url)
    assert lookup.keyset is None and "http" in lookup.error and site.hits(PATH) == 0


def test_refetch_is_rate_limited_per_url_and_kid(site: CardServer) -> None:
    url = _jwks(site)
    source = JwksSource(LOOPBACK_POLICY)
    source.get(url)
    assert source.refetch(url, "new-kid") is not None
    assert source.refetch(url, "new-kid") is None
    assert source.refetch(url, "another-kid") is not None
    assert site.hits(PATH) == 3
