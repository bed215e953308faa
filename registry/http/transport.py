"""The per-fetch httpx client: a public httpcore pool over the pinning network backend."""

from __future__ import annotations

import functools
import ssl
from collections.abc import Iterable, Iterator

import httpcore
import httpx

from registry.http.body import ACCEPT_ENCODING
from registry.http.errors import translate_error
from registry.http.pinning import PinningBackend, Resolutions
from registry.http.policy import FetchPolicy

ACCEPT = "application/json, application/*+json;q=0.9, */*;q=0.1"


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
            mapped = translate_error(exc, self._url, self._deadline)
            if mapped is None:
                raise
            raise mapped from exc

    def close(self) -> None:
        close = getattr(self._stream, "close", None)
        if close is not None:
            close()


class PinnedTransport(httpx.BaseTransport):
    """httpx transport owning an httpcore pool whose network backend pins addresses.

    ``httpx.HTTPTransport`` takes no network backend, so this small transport is the public
    way to get one (reference 3.1).
    """

    def __init__(
        self, policy: FetchPolicy, deadline: float, resolutions: Resolutions | None = None
    ) -> None:
        self._deadline = deadline
        self._pool = httpcore.ConnectionPool(
            ssl_context=policy.ssl_context or _default_ssl_context(),
            max_connections=4,
            keepalive_expiry=5.0,
            http1=True,
            http2=False,
            retries=0,
            network_backend=PinningBackend(policy, deadline, resolutions),
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
            mapped = translate_error(exc, url, self._deadline)
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


def build_client(
    policy: FetchPolicy, deadline: float, resolutions: Resolutions | None = None
) -> httpx.Client:
    # One client per fetch: the backend carries this fetch's deadline, and no pooled
    # connection outlives it (pools must not cross a Celery fork either).
    return httpx.Client(
        transport=PinnedTransport(policy, deadline, resolutions),
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
