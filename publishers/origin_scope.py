"""What a token of scope ``origin`` may do: the short publish token of trusted publishing.

Such a token (minted by publishers/trusted_publishing.py for a CI job) covers one verified
origin. It may:

* submit an agent whose URL is on the origin (``POST /api/v1/agents {"url"}``) and import URLs
  that are all on it (``POST /api/v1/imports {"urls"}``; not a list fetched from a ``url``,
  whose entries are not known yet), and follow its imports;
* read, re-crawl, probe and change the settings of (``PATCH``) agents on the origin, and call
  their read-only checks (check-message, validate-payload);
* call what anyone may call without changing anything (``/validate``, ``/schemas/match``).

Nothing else: every other request is a 403 ``token-scope`` problem (publishers/auth.py). The
token stops working once the origin is no longer verified, as it does once it expires (a 401).
"""

from __future__ import annotations

from typing import Any

from publishers.models import Origin, PublisherToken
from publishers.origin_form import try_origin_of_url
from publishers.ownership import agents_on
from publishers.tokens import READ_ONLY_POSTS, SAFE_METHODS

# Routes of one agent (their ``pk``) and the methods that change it an origin token may use.
AGENT_CHANGES = {"agent-recrawl": {"POST"}, "agent-probe": {"POST"}, "agent-detail": {"PATCH"}}
SUBMIT, IMPORT, IMPORT_DETAIL = "agent-list", "import-create", "import-detail"


def _outside(token: PublisherToken) -> str:
    where = token.origin.origin if token.origin is not None else "one origin"
    return (
        f"This token ({token.prefix}…) is a CI publish token for {where}: it may "
        "submit, import, read, re-crawl, probe and change agents on that origin only."
    )


def _on_origin(url: Any, origin: str) -> bool:
    return isinstance(url, str) and try_origin_of_url(url) == origin


def _body(request: Any) -> dict[str, Any] | None:
    data = request.data
    return data if isinstance(data, dict) else None


def refusal(
    token: PublisherToken, request: Any, *, method: str, kwargs: dict[str, Any], route: str | None
) -> str | None:
    """Why the origin token does not cover this request (None when it does)."""
    origin = token.origin
    if origin is None or origin.state != Origin.State.VERIFIED:
        return (
            f"This token ({token.prefix}…) covers an origin that is no longer verified; its "
            "owner must prove it again, then the CI job exchanges a new ID token."
        )
    verb = method.upper()
    reads = verb in SAFE_METHODS
    if "pk" in kwargs and route is not None and route.startswith("agent-"):
        allowed = reads or route in READ_ONLY_POSTS or verb in AGENT_CHANGES.get(route, set())
        if allowed and agents_on(origin.origin).filter(pk=kwargs["pk"]).exists():
            return None
        return _outside(token)
    if route in READ_ONLY_POSTS and verb == "POST":
        return None
    if route == IMPORT_DETAIL and reads:
        return None
    if route == SUBMIT and verb == "POST":
        body = _body(request)
        if body is not None and _on_origin(body.get("url"), origin.origin):
            return None
        return _outside(token) + f' The "url" must be on {origin.origin}.'
    if route == IMPORT and verb == "POST":
        body = _body(request)
        urls = body.get("urls") if body is not None else None
        if (
            body is not None
            and "url" not in body
            and isinstance(urls, list)
            and urls
            and all(_on_origin(url, origin.origin) for url in urls)
        ):
            return None
        return _outside(token) + f' Every one of "urls" must be on {origin.origin}.'
    return _outside(token)
