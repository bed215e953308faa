"""Response bodies: the content-type check, size caps, and capped gzip/deflate decoding.

Bodies are read raw with a byte cap and decoded by a capped ``decompressobj`` (httpx's own
decoder can turn 64 KiB into 64 MiB in one step), under the fetch's total deadline.
"""

from __future__ import annotations

import time
import zlib
from typing import Any

import httpx

from registry.http.errors import DEADLINE_REASON, FetchError
from registry.http.policy import FetchPolicy

# Only encodings we decode ourselves with a cap; httpx would add br/zstd if installed.
ACCEPT_ENCODING = "gzip, deflate"


# --- Content type ---------------------------------------------------------------------------


def media_type(content_type: str | None) -> str:
    """The media type essence of a Content-Type value, lower-cased ('' when absent)."""
    if not content_type:
        return ""
    return content_type.split(";", 1)[0].strip().lower()


def _is_json_type(essence: str) -> bool:
    kind, _, subtype = essence.partition("/")
    return kind == "application" and (subtype == "json" or subtype.endswith("+json"))


def check_content_type(essence: str, url: str) -> bool:
    """Return True when the type is only leniently accepted; raise for non-JSON types."""
    if _is_json_type(essence):
        return False
    if essence in ("", "text/plain"):
        return True
    raise FetchError("content-type", f"the server sent {essence}, not JSON", url=url)


# --- Size caps and decoding -----------------------------------------------------------------


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
            "decompression-failed",
            f"the compressed body could not be decoded: {detail}",
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
    raise FetchError("decompression-failed", f"unsupported content encoding {value!r}", url=url)


def _check_declared_length(response: httpx.Response, policy: FetchPolicy, url: str) -> None:
    declared = response.headers.get("content-length")
    if declared is not None and declared.strip().isdigit() and int(declared) > policy.max_bytes:
        raise _too_large(policy, url)


def read_body(response: httpx.Response, policy: FetchPolicy, url: str, deadline: float) -> bytes:
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
            raise FetchError("timeout", DEADLINE_REASON, url=url)
        decoder.feed(chunk)
    return decoder.finish()
