"""The one normal form of a URL: every URL the registry stores or compares goes through it.

Two spellings of one resource must be one string, or a second spelling registers a second agent
for the same card and gets round moderation, deletion and one-agent-per-URL (issue 35). What is
folded, in this order (RFC 3986 section 6.2.2, and the registry's choices marked as such):

* scheme and host lower-cased; a host's trailing dot dropped; an internationalised host
  converted to punycode (IDNA 2008 with the UTS 46 mapping); an IPv6 literal compressed; an
  IPv4 address in any spelling the fetch policy reads as one (``127.1``, ``2130706433``,
  ``0x7f000001``, ``0177.0.0.1``, and an IPv4-mapped IPv6 literal ``[::ffff:127.0.0.1]``, which
  the fetcher dials as the IPv4 address it carries) is its dotted quad: every spelling of one
  address is one URL, as it is one destination (issue 44);
* the port dropped when it is the scheme's default (``https:443``, ``http:80``);
* percent-encoding: escapes of unreserved characters decoded (``%63`` is ``c``), the hex of
  every other escape upper-cased (``%2f`` is ``%2F``, and stays encoded), characters a URL may
  not hold as they are (``"``, ``|``, non-ASCII...) encoded as UTF-8, in the path and the query;
* path: duplicate slashes are one (registry's choice), then ``.`` and ``..`` segments removed
  (``..`` above the root stays at the root), then a trailing slash dropped (registry's choice:
  ``/card/`` and ``/card`` are one resource; servers that tell them apart redirect one to the
  other, and the fetcher follows). An empty path or ``/`` with no query is the origin form
  (``https://host``), which means "discover the card on the well-known paths";
* the fragment dropped; the query otherwise kept as it is (order, ``+``, empty values).

Refused (``InvalidURL``): no scheme or host, user name or password, whitespace, control
characters or backslashes, a ``%`` not followed by two hex digits, text that is not UTF-8, a
host with an empty label or characters no host name holds, an IPv6 zone, an invalid port.
Whether the URL may be fetched (scheme, address, port) is the fetch policy's business
(registry.http.check_url), checked on the normal form.
"""

from __future__ import annotations

import ipaddress
import string
from urllib.parse import SplitResult, unquote, urlsplit, urlunsplit

import idna

from registry.http.addresses import parse_ip_literal

_DEFAULT_PORTS = {"http": 80, "https": 443}
_UNRESERVED = frozenset(string.ascii_letters + string.digits + "-._~")
# RFC 3986 pchar: unreserved, sub-delims, ":" and "@"; a path adds "/", a query "/" and "?".
_PATH_SAFE = _UNRESERVED | frozenset("!$&'()*+,;=:@/")
_QUERY_SAFE = _PATH_SAFE | frozenset("?")
_HEX = frozenset(string.hexdigits)
# What a reg-name may not hold once its escapes are decoded (delimiters and the like).
_NOT_IN_HOST = frozenset('/?#@:[]\\%<>"`{}|^ ')


class InvalidURL(ValueError):
    """The text is not a URL the registry can use; the message says why."""


def normalise_url(text: str) -> str:
    """The normal form of ``text`` (see the module's docstring), or ``InvalidURL``."""
    if not isinstance(text, str) or not text.strip():
        raise InvalidURL("the URL is empty")
    text = text.strip()
    if any(ch.isspace() or ord(ch) < 0x20 or ord(ch) == 0x7F for ch in text):
        raise InvalidURL("the URL contains whitespace or control characters")
    if "\\" in text:
        # Browsers read a backslash as a slash and servers do not: one text, two resources.
        raise InvalidURL("the URL contains a backslash")
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as exc:
        raise InvalidURL(f"not a valid URL ({exc})") from None
    scheme = parts.scheme.lower()
    if not scheme or not parts.netloc:
        raise InvalidURL("not an absolute URL: it needs a scheme and a host")
    if parts.username is not None or parts.password is not None:
        raise InvalidURL("URLs with a user name or password are refused")
    host = _host(parts)
    netloc = host if port is None or port == _DEFAULT_PORTS.get(scheme) else f"{host}:{port}"
    path = _path(parts.path)
    query = _percent(parts.query, _QUERY_SAFE)
    if path == "/" and not query:
        path = ""  # the origin form: https://host/ and https://host are one
    elif not path and query:
        path = "/"
    return urlunsplit((scheme, netloc, path, query, ""))


def _host(parts: SplitResult) -> str:
    raw = parts.hostname or ""
    if "[" in parts.netloc:
        return _ipv6(raw)
    if "%" in raw:
        _check_escapes(raw)
        try:
            raw = unquote(raw, errors="strict").lower()
        except UnicodeDecodeError:
            raise InvalidURL("the host name is not valid UTF-8 once decoded") from None
    if any(ch in _NOT_IN_HOST or ord(ch) < 0x20 for ch in raw):
        raise InvalidURL("the host name holds characters no host name holds")
    host = raw[:-1] if raw.endswith(".") else raw  # example.com. is example.com
    if not host.isascii():
        try:
            host = idna.encode(host, uts46=True).decode("ascii")
        except (idna.IDNAError, UnicodeError):
            raise InvalidURL("the host name is not a valid internationalised domain name") from None
        host = host[:-1] if host.endswith(".") else host  # a mapped full stop at the end
    if not host or any(not label for label in host.split(".")):
        raise InvalidURL("the host name has an empty label")
    literal = parse_ip_literal(host)
    return str(literal) if literal is not None else host


def _ipv6(raw: str) -> str:
    if "%" in raw:
        raise InvalidURL("an IPv6 zone identifier is refused: it names an interface, not a host")
    try:
        address = ipaddress.IPv6Address(raw)
    except ValueError:
        raise InvalidURL("the host is not a valid IPv6 address") from None
    mapped = address.ipv4_mapped
    # The fetcher dials a mapped address as the IPv4 address it carries: that is its form.
    return str(mapped) if mapped is not None else f"[{address.compressed}]"


def _check_escapes(text: str) -> None:
    at = text.find("%")
    while at != -1:
        if len(text) < at + 3 or not (text[at + 1] in _HEX and text[at + 2] in _HEX):
            raise InvalidURL("a % in the URL is not followed by two hex digits")
        at = text.find("%", at + 3)


def _percent(text: str, safe: frozenset[str]) -> str:
    """Escapes of unreserved characters decoded, others upper-cased, unsafe characters encoded."""
    _check_escapes(text)
    out: list[str] = []
    at = 0
    while at < len(text):
        ch = text[at]
        if ch == "%":
            pair = text[at + 1 : at + 3]
            decoded = chr(int(pair, 16))
            out.append(decoded if decoded in _UNRESERVED else "%" + pair.upper())
            at += 3
            continue
        if ch in safe:
            out.append(ch)
        else:
            try:
                encoded = ch.encode("utf-8")
            except UnicodeEncodeError:  # a lone surrogate
                raise InvalidURL("the URL is not valid UTF-8 text") from None
            out.append("".join(f"%{byte:02X}" for byte in encoded))
        at += 1
    return "".join(out)


def _path(raw: str) -> str:
    """Percent-normalised, duplicate slashes as one, dot segments removed, no trailing slash."""
    if not raw:
        return ""
    kept: list[str] = []
    for segment in _percent(raw, _PATH_SAFE).split("/"):
        if segment in ("", "."):
            continue
        if segment == "..":
            if kept:
                kept.pop()
            continue
        kept.append(segment)
    return "/" + "/".join(kept)


def normalise_fetched(url: str) -> str:
    """A URL the fetcher requested or was redirected to (where a card or a manifest was found),
    in the normal form; as it is in the rare case it has none (the fetcher's own checks let it
    through), so a crawl never fails on its bookkeeping."""
    try:
        return normalise_url(url)
    except InvalidURL:
        return url
