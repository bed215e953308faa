"""An origin in normal form: ``scheme://host[:port]``, as the URL normaliser writes hosts.

The host is lower-cased, IDNA-encoded, a numeric IPv4 spelling is its dotted quad and a mapped
IPv6 address its IPv4 one (cards/url_form.py); the port is left out where it is the scheme's
default. So ``https://Example.COM:443/`` and ``https://example.com`` are one origin, and the
origin of any URL the registry stored is the origin an account proves.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from cards.url_form import InvalidURL, normalise_url

SCHEMES = ("https", "http")


def origin_of_url(url: str) -> str:
    """The origin of an absolute http(s) URL, in normal form; ``InvalidURL`` otherwise."""
    normal = normalise_url(url)
    parts = urlsplit(normal)
    if parts.scheme not in SCHEMES:
        raise InvalidURL("an origin is http or https")
    return f"{parts.scheme}://{parts.netloc}"


def normal_origin(text: str) -> str:
    """``text`` as an origin: scheme, host and optional port; no path, query or fragment."""
    if not isinstance(text, str):
        raise InvalidURL("the origin must be a string such as https://agents.example.com")
    parts = urlsplit(text.strip())
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise InvalidURL("an origin is scheme, host and port only, such as https://example.com")
    return origin_of_url(text)


def try_origin_of_url(url: str) -> str | None:
    """The origin of ``url``, or None where it has none (not http(s), or not a URL)."""
    try:
        return origin_of_url(url)
    except InvalidURL:
        return None
