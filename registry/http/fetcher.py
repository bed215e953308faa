"""The safe fetcher: every outbound HTTP request of the registry goes through ``fetch``.

Policy (DESIGN section 6, reference ``fetching-and-crawling.md`` sections 1, 3 and 4):

* URLs are checked before any DNS (``urls.check_url``): scheme, userinfo, length, host, port.
* The TCP destination is decided by ``pinning.PinningBackend.connect_tcp``: it resolves the
  name once, refuses the whole lookup if any address is refused, and dials only the checked
  addresses. httpcore keeps the URL host for TLS SNI, certificate checks and ``Host``, so
  pinning changes nothing but the socket's peer. A check in a transport wrapper followed by a
  second lookup inside httpx would leave a DNS-rebinding gap; the backend is the only place
  without one.
* Redirects are followed here, not by httpx, so each hop is checked again.
* Bodies are read raw with a byte cap and decoded by a capped ``decompressobj`` (httpx's own
  decoder can turn 64 KiB into 64 MiB in one step), under a total deadline that the per-read
  timeouts alone would not enforce (``body.read_body``, ``pinning.DeadlineStream``).

The pieces live in ``policy``, ``errors``, ``urls``, ``pinning``, ``transport`` and ``body``;
this module follows redirects and assembles the result. The names it re-exports keep
``from registry.http.fetcher import ...`` working.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field

import httpx

from registry.http.body import check_content_type, media_type, read_body
from registry.http.errors import FetchError, parse_retry_after, status_error, translate_error
from registry.http.gate import answered, wait_turn
from registry.http.pinning import Resolutions
from registry.http.policy import FetchPolicy, Resolver
from registry.http.transport import build_client
from registry.http.urls import check_url, checked_url, effective_port

__all__ = [
    "FetchError",
    "FetchPolicy",
    "FetchResult",
    "Resolver",
    "check_url",
    "fetch",
    "media_type",
    "parse_retry_after",
]

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

    @classmethod
    def local(cls, url: str, body: bytes) -> FetchResult:
        """A JSON document that did not come over the network (demo data, tests, benchmarks)."""
        json_type = "application/json"
        return cls(
            url=url,
            status=200,
            headers={"content-type": json_type},
            body=body,
            content_type=json_type,
        )


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
    return (url.scheme, url.raw_host.lower(), effective_port(url))


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
        checked = checked_url(target, policy)
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
    method: str = "GET",
    content: bytes | None = None,
    any_status: bool = False,
) -> FetchResult:
    """GET ``url`` under the fetch policy. Every failure is a FetchError.

    ``any_status``: an answer outside 2xx is returned with its (capped) body instead of raised
    (the live checks read the error documents agents send).

    ``method="POST"`` with ``content`` sends a JSON body (federated ARD searches); a POST is
    never redirected: a redirect answer is a failure.

    ``headers`` adds request headers (If-None-Match, If-Modified-Since, Accept); they are
    dropped when a redirect leaves the original origin, because validators and credentials
    belong to the original resource.
    """
    policy = policy or FetchPolicy.from_settings()
    current = checked_url(url, policy)
    resolutions = Resolutions(policy)
    # The first turn is waited for before the deadline starts: a request queued behind
    # others at its destination keeps its whole time for the answer.
    names = wait_turn(current, policy, resolutions, time.monotonic() + policy.connect_timeout)
    started = time.monotonic()
    deadline = started + policy.total_timeout
    caller_headers = _clean_caller_headers(headers)
    first_origin = _origin(current)
    redirects: list[str] = []
    with build_client(policy, deadline, resolutions) as client:
        while True:
            if redirects:
                names = wait_turn(current, policy, resolutions, deadline)
            hop_headers = caller_headers if _origin(current) == first_origin else {}
            response = _send(client, current, hop_headers, deadline, method, content)
            answered(names, response.status_code, response.headers.get("retry-after"))
            try:
                if response.has_redirect_location and method != "GET":
                    raise FetchError(
                        "redirect-refused",
                        f"a {method} request is not redirected",
                        url=str(current),
                    )
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
                return _complete(
                    response,
                    str(current),
                    policy,
                    expect_json,
                    redirects,
                    started,
                    deadline,
                    any_status=any_status,
                )
            except FetchError:
                raise
            except Exception as exc:
                mapped = translate_error(exc, str(current), deadline)
                if mapped is None:
                    raise
                raise mapped from exc
            finally:
                response.close()


def _send(
    client: httpx.Client,
    url: httpx.URL,
    headers: Mapping[str, str],
    deadline: float,
    method: str = "GET",
    content: bytes | None = None,
) -> httpx.Response:
    try:
        if content is not None:
            headers = {**headers, "content-type": "application/json"}
        request = client.build_request(method, url, headers=headers, content=content)
        return client.send(request, stream=True)
    except FetchError:
        raise
    except Exception as exc:
        mapped = translate_error(exc, str(url), deadline)
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
    *,
    any_status: bool = False,
) -> FetchResult:
    status = response.status_code
    if status == 304:
        return _result(
            response, url=url, body=b"", lenient=False, redirects=redirects, started=started
        )
    if not 200 <= status < 300 and not any_status:
        raise status_error(response, url)
    lenient = False
    if expect_json:
        # Checked before reading: no point downloading an HTML page.
        lenient = check_content_type(media_type(response.headers.get("content-type")), url)
    body = read_body(response, policy, url, deadline)
    return _result(
        response, url=url, body=body, lenient=lenient, redirects=redirects, started=started
    )
