"""Which addresses and host names the registry may fetch from (DESIGN section 6).

Pure functions, no network traffic: the fetcher calls them on every IP literal in a URL, on
every host name before DNS, and on every address a name resolves to before connecting.

The rules follow ``reference/fetching-and-crawling.md`` section 1. CPython 3.11's ``ipaddress``
flags are not enough on their own (``::ffff:127.0.0.1`` is not "loopback", ``64:ff9b::a9fe:a9fe``
and ``192.0.0.8`` are "global"), hence the explicit unwrap and deny list below.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Sequence

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Address = ipaddress.IPv4Address | ipaddress.IPv6Address

# Ranges the stdlib flags miss (or that embed an IPv4 address that could be private), each
# with the noun phrase used in refusal messages. Reference section 1.1.
_DENY_LIST: tuple[tuple[Network, str], ...] = tuple(
    (ipaddress.ip_network(cidr), phrase)
    for cidr, phrase in (
        ("0.0.0.0/8", "a 'this network' address"),
        ("100.64.0.0/10", "a shared (CGNAT) address"),
        ("192.0.0.0/24", "an IETF protocol assignment address"),
        ("192.88.99.0/24", "a 6to4 relay anycast address"),
        ("198.18.0.0/15", "a benchmarking address"),
        ("224.0.0.0/4", "a multicast address"),
        ("240.0.0.0/4", "a reserved address"),
        ("::/96", "an IPv4-compatible IPv6 address"),
        ("64:ff9b::/96", "a NAT64 address"),
        ("64:ff9b:1::/48", "a local-use NAT64 address"),
        ("100::/64", "a discard-only address"),
        ("2001::/32", "a Teredo address"),
        ("2001:10::/28", "an ORCHID address"),
        ("2001:20::/28", "an ORCHIDv2 address"),
        ("2001:db8::/32", "a documentation address"),
        ("2002::/16", "a 6to4 address"),
        ("3fff::/20", "a documentation address"),
        ("fc00::/7", "a unique local (private) address"),
        ("fe80::/10", "a link-local address"),
        ("fec0::/10", "a site-local address"),
        ("ff00::/8", "a multicast address"),
    )
)

# Suffixes of names that only mean something on a local network (cheap early denial; the
# address check after DNS still decides for everything else).
_LOCAL_SUFFIXES: tuple[str, ...] = (
    ".localhost",
    ".local",
    ".internal",
    ".home.arpa",
    ".lan",
    ".corp",
    ".intranet",
    ".onion",
    ".i2p",
)

_HOST_LABEL = re.compile(r"^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$")
_NUMERIC_LABEL = re.compile(r"^(?:[0-9]+|0[x][0-9a-f]*)$")
_LOOPBACK_V4 = ipaddress.IPv4Address("127.0.0.1")
_LOOPBACK_V6 = ipaddress.IPv6Address("::1")


def _in_networks(ip: Address, networks: Sequence[Network]) -> bool:
    # ``in`` is simply False across IP versions, so mixed lists are fine.
    return any(ip in network for network in networks)


def _refusal_phrase(ip: Address, allowed_networks: Sequence[Network]) -> str | None:
    """The noun phrase saying why ``ip`` is refused ("a private address"), or None."""
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.scope_id:
            # A zone index pins the address to a local interface: never a public destination.
            return "a scoped (link-local) address"
        if ip.ipv4_mapped is not None:
            # CPython 3.11 does not look through ::ffff:a.b.c.d, so judge the IPv4 address.
            ip = ip.ipv4_mapped
    if _in_networks(ip, allowed_networks):
        return None
    # Rejections below all refuse; the order only picks the clearest message.
    if ip.is_unspecified:
        return "the unspecified address"
    if ip.is_loopback:
        return "a loopback address"
    for network, phrase in _DENY_LIST:
        if ip in network:
            return phrase
    if ip.is_link_local:
        return "a link-local address"
    if ip.is_multicast:
        return "a multicast address"
    if ip.is_private:
        return "a private address"
    if ip.is_reserved:
        return "a reserved address"
    if not ip.is_global:
        return "a non-public address"
    return None


def _display(ip: Address) -> str:
    """How an address is named in messages; mapped addresses also show their IPv4 form."""
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return f"{ip} (IPv4 {ip.ipv4_mapped})"
    return str(ip)


def address_refusal(ip: Address, allowed_networks: Sequence[Network] = ()) -> str | None:
    """None if the registry may connect to ``ip``, else a short reason.

    Rule order (reference 1.1): reject a scope id, unwrap IPv4-mapped, allow the configured
    networks (tests and development only), reject the deny list, then require ``is_global``
    and none of the special-purpose flags.
    """
    phrase = _refusal_phrase(ip, allowed_networks)
    if phrase is None:
        return None
    return f"{_display(ip)} is {phrase}"


def resolved_address_refusal(
    host: str, ip: Address, allowed_networks: Sequence[Network] = ()
) -> str | None:
    """Like address_refusal, worded for an address that ``host`` resolved to."""
    phrase = _refusal_phrase(ip, allowed_networks)
    if phrase is None:
        return None
    return f"{host} resolves to {_display(ip)}, {phrase}"


def _parse_ipv4_part(part: str) -> int | None:
    """One dotted part as inet_aton reads it: 0x.. hex, 0.. octal, else decimal."""
    lowered = part.lower()
    try:
        if lowered.startswith("0x"):
            return int(lowered[2:], 16) if len(lowered) > 2 else 0
        if len(lowered) > 1 and lowered.startswith("0"):
            return int(lowered[1:], 8)
        if lowered.isdigit():
            return int(lowered, 10)
    except ValueError:
        return None
    return None


def _parse_legacy_ipv4(host: str) -> ipaddress.IPv4Address | None:
    """Parse what inet_aton accepts besides dotted quads (``127.1``, ``0x7f.1``, ``2130706433``).

    Resolvers hand these straight to inet_aton, so a URL host like ``0177.0.0.1`` reaches
    127.0.0.1 without DNS. Recognising them lets the address check see the real target.
    """
    text = host[:-1] if host.endswith(".") else host  # "127.0.0.1." is still the literal
    parts = text.split(".")
    if not 1 <= len(parts) <= 4 or any(not part for part in parts):
        return None
    values = [_parse_ipv4_part(part) for part in parts]
    if any(value is None for value in values):
        return None
    numbers = [value for value in values if value is not None]
    # Every part but the last is one byte; the last fills the remaining bytes.
    if any(value > 255 for value in numbers[:-1]):
        return None
    remaining_bytes = 5 - len(numbers)
    if numbers[-1] >= 256**remaining_bytes:
        return None
    total = 0
    for value in numbers[:-1]:
        total = total * 256 + value
    total = (total << (8 * remaining_bytes)) + numbers[-1]
    return ipaddress.IPv4Address(total)


def parse_ip_literal(host: str) -> Address | None:
    """The address a URL host denotes without DNS, or None for a host name.

    Accepts dotted IPv4, IPv6 with or without brackets (``%25`` zone separators as in URLs),
    and the legacy IPv4 forms: decimal integer, octal, hex and short forms.
    """
    text = host.strip()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
        if ":" not in text:
            return None
    if ":" in text:
        try:
            return ipaddress.IPv6Address(text.replace("%25", "%"))
        except ValueError:
            return None
    return _parse_legacy_ipv4(text)


def in_allowed_networks(ip: Address, allowed_networks: Sequence[Network]) -> bool:
    """True when ``ip`` is covered by an exemption (after the same unwrapping as the check)."""
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.scope_id:
            return False
        if ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped
    return _in_networks(ip, allowed_networks)


def loopback_allowed(allowed_networks: Sequence[Network]) -> bool:
    """True when the configured exemptions cover loopback (tests and development)."""
    return _in_networks(_LOOPBACK_V4, allowed_networks) or _in_networks(
        _LOOPBACK_V6, allowed_networks
    )


def loopback_addresses(allowed_networks: Sequence[Network]) -> list[Address]:
    """What ``localhost`` means when loopback is exempt: only the exempt loopback addresses.

    ``localhost`` is answered here instead of by DNS (RFC 6761 says it must be loopback), so a
    policy exempting only 127.0.0.0/8 does not trip over a ``::1`` answer.
    """
    candidates: list[Address] = [_LOOPBACK_V4, _LOOPBACK_V6]
    return [ip for ip in candidates if _in_networks(ip, allowed_networks)]


def _name_refusal(name: str, allowed_networks: Sequence[Network]) -> str | None:
    if not name:
        return "the host name is empty"
    if name == "localhost":
        if loopback_allowed(allowed_networks):
            return None
        return "localhost is a local name"
    for suffix in _LOCAL_SUFFIXES:
        if name.endswith(suffix):
            return f"{name} is a local or private name ({suffix})"
    labels = name.split(".")
    if len(labels) == 1:
        return f"{name} is a single-label name, not a public host name"
    if len(name) > 253 or not all(_HOST_LABEL.match(label) for label in labels):
        return f"{name} is not a valid host name"
    if _NUMERIC_LABEL.match(labels[-1]):
        # Looks like an address but is not one we can parse: resolvers disagree on such
        # names, and no public domain ends in a number.
        return f"{name} is not a valid host name or IP address"
    return None


def host_refusal(host: str, allowed_networks: Sequence[Network] = ()) -> str | None:
    """The pre-DNS check of a URL host: None if it may be fetched, else a short reason.

    IP literals (every form ``parse_ip_literal`` knows) go through ``address_refusal``; names
    must be public-looking: at least two labels and no local-only suffix. ``localhost`` is
    allowed only when loopback is in ``allowed_networks``.
    """
    ip = parse_ip_literal(host)
    if ip is not None:
        return address_refusal(ip, allowed_networks)
    name = host.strip().lower()
    if name.endswith("."):
        name = name[:-1]  # the fully qualified form names the same host
    return _name_refusal(name, allowed_networks)
