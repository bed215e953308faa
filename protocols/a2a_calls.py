"""One JSON-RPC call to the A2A endpoint read: its size, its JSON, and the version it asks for."""

from __future__ import annotations

import json
import re
from typing import Any

from django.http import HttpRequest

from protocols.a2a_errors import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    PARSE_ERROR,
    VERSION_NOT_SUPPORTED,
    RpcError,
)
from protocols.asgi_app import INVALID_REQUEST as INVALID_REQUEST_MESSAGE
from protocols.asgi_app import (
    MAX_BODY,
    MAX_DEPTH,
    nesting_depth,
    parse_error_message,
    surrogate_message,
    surrogate_pointer,
)

# The A2A-Version values (major.minor; a patch is ignored) this endpoint answers. An absent
# header means 0.3 (specification section 3.6), which the v0.3 method names still serve.
VERSIONS = ("1.0", "0.3")
_VERSION = re.compile(r"(\d{1,4})\.(\d{1,4})(?:\.\d{1,4})?")


def version_refused(request: HttpRequest) -> RpcError | None:
    """VersionNotSupportedError when the request asks for a version this endpoint does not
    speak (the header, else the ``A2A-Version`` query parameter; section 3.6.1)."""
    asked = request.headers.get("A2A-Version") or request.GET.get("A2A-Version") or ""
    asked = asked.strip()
    if not asked:
        return None  # an empty value means 0.3 (section 3.6.2), which is spoken
    # Major.Minor decides; a patch number is ignored (section 3.6).
    found = _VERSION.fullmatch(asked)
    if found and f"{int(found[1])}.{int(found[2])}" in VERSIONS:
        return None
    return RpcError(
        VERSION_NOT_SUPPORTED,
        f"A2A-Version {asked[:40]!r} is not supported; this endpoint speaks "
        + " and ".join(VERSIONS),
    )


def declared_length(request: HttpRequest) -> int:
    try:
        return int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return 0


def parse_call(body: bytes) -> dict[str, Any]:
    if len(body) > MAX_BODY:
        raise RpcError(INVALID_REQUEST, f"Request too large (limit {MAX_BODY} bytes)")
    try:
        call = json.loads(body)
    except RecursionError:
        raise RpcError(INVALID_REQUEST, f"Request nested deeper than {MAX_DEPTH} levels") from None
    except ValueError:
        raise RpcError(PARSE_ERROR, parse_error_message(body)) from None
    if nesting_depth(call, MAX_DEPTH) > MAX_DEPTH:
        raise RpcError(INVALID_REQUEST, f"Request nested deeper than {MAX_DEPTH} levels")
    pointer = surrogate_pointer(call)
    if pointer is not None:
        raise RpcError(INVALID_PARAMS, surrogate_message(pointer))
    if (
        not isinstance(call, dict)
        or call.get("jsonrpc") != "2.0"
        or not isinstance(call.get("method"), str)
    ):
        raise RpcError(INVALID_REQUEST, INVALID_REQUEST_MESSAGE)
    if not isinstance(call.get("params", {}), dict):
        raise RpcError(INVALID_PARAMS, "params must be an object")
    return call
