"""Settings and safety helpers shared by the catalogue's pages."""

from __future__ import annotations

from urllib.parse import urlsplit

from django.http import HttpResponse

PAGE_SIZE = 20
FEATURED_LIMIT = 6
FACET_LIMIT = 12
FACET_CACHE_KEY = "catalogue:facets:v2"
FACET_CACHE_SECONDS = 120
MAX_TAGS = 10
MAX_PARAM_LENGTH = 1000
# What a result row shows: large columns (findings, search text, signature) are left unread.
LIST_FIELDS = (
    "id",
    "url",
    "name",
    "description",
    "version",
    "provider_organization",
    "signature_status",
    "publisher_origin",
    "valid",
    "health",
    "moderation",
    "created_at",
)

# No script may run on a catalogue page, whatever a card contains; styles are inline in
# base.html and images (the badge) come from the registry itself.
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; form-action 'self'; "
    "base-uri 'none'; frame-ancestors 'none'"
)


# A page with a section that brings its own scripts (the "Try it" form, tryit/): scripts,
# stylesheets and requests from the registry's origin only; still nothing inline, no eval.
SCRIPT_POLICY = (
    "default-src 'none'; img-src 'self'; style-src 'self' 'unsafe-inline'; script-src 'self'; "
    "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)


def _secure(response: HttpResponse, *, scripts: bool = False) -> HttpResponse:
    response["Content-Security-Policy"] = SCRIPT_POLICY if scripts else CONTENT_SECURITY_POLICY
    response["X-Content-Type-Options"] = "nosniff"
    response["Referrer-Policy"] = "same-origin"
    return response


def safe_link(url: str) -> str | None:
    """``url`` if it may be an href (http or https with a host); None for anything else, such
    as ``javascript:`` or ``data:``, which are then shown as text only."""
    if not url or any(ch.isspace() or ord(ch) < 32 for ch in url):
        return None
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        return None
    return url
