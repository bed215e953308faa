"""Proof by DNS: a TXT record ``a2a-registry-verification=<challenge>`` at ``_a2a-registry.<host>``.

Looked up with dnspython, through the resolvers of ``REGISTRY_DNS_NAMESERVERS`` (``ip:port``
list) or, unset, the system's, within ``REGISTRY_DNS_TIMEOUT_SECONDS``. The name is absolute
(no search domains). One of the name's TXT records (its strings joined, as a long record is
split into 255-byte strings) must be exactly the expected value; other records are ignored, so
several accounts or other services may keep theirs beside it. The record proves the host: the
origin's scheme and port are the claim's. An IP-literal host has no DNS name to hold a record.
"""

from __future__ import annotations

import hmac
import ipaddress
from typing import Any

import dns.exception
import dns.name
import dns.nameserver
import dns.resolver
from django.conf import settings

from publishers.models import Origin
from publishers.proofs import Outcome, failed, passed

RECORD_PREFIX = "_a2a-registry."
VALUE_PREFIX = "a2a-registry-verification="
SHOWN_RECORDS = 5
SHOWN_CHARACTERS = 80


def record_name(origin: Origin) -> str:
    return RECORD_PREFIX + origin.host


def expected_value(origin: Origin) -> str:
    return VALUE_PREFIX + origin.challenge


def ip_literal(origin: Origin) -> bool:
    try:
        ipaddress.ip_address(origin.host)
    except ValueError:
        return False
    return True


def instructions(origin: Origin) -> dict[str, Any] | None:
    """The record to publish; None for an IP-literal host (no DNS name)."""
    if ip_literal(origin):
        return None
    return {"name": record_name(origin), "type": "TXT", "value": expected_value(origin)}


def resolver() -> dns.resolver.Resolver:
    """A resolver on the configured name servers (or the system's), with the timeout."""
    servers: list[tuple[str, int]] = list(settings.REGISTRY_DNS_NAMESERVERS)
    if servers:
        made = dns.resolver.Resolver(configure=False)
        made.nameservers = [dns.nameserver.Do53Nameserver(ip, port) for ip, port in servers]
    else:
        made = dns.resolver.Resolver()
    timeout = float(settings.REGISTRY_DNS_TIMEOUT_SECONDS)
    made.timeout = timeout
    made.lifetime = timeout
    return made


def _text(rdata: Any) -> str:
    return b"".join(rdata.strings).decode("utf-8", "replace")


def _shown(values: list[str]) -> str:
    quoted = [
        repr(v[:SHOWN_CHARACTERS] + ("…" if len(v) > SHOWN_CHARACTERS else ""))
        for v in values[:SHOWN_RECORDS]
    ]
    more = f" and {len(values) - SHOWN_RECORDS} more" if len(values) > SHOWN_RECORDS else ""
    return ", ".join(quoted) + more


def lookup(name: str) -> tuple[list[str] | None, str, bool]:
    """(TXT values, "", False), or (None, why not, transient)."""
    try:
        absolute = dns.name.from_text(name)
    except dns.exception.DNSException as exc:
        return None, f"{name} is not a DNS name: {exc}", False
    try:
        answer = resolver().resolve(absolute, "TXT", raise_on_no_answer=False, search=False)
    except dns.resolver.NXDOMAIN:
        return None, f"the name {name} does not exist in DNS (NXDOMAIN)", False
    except dns.resolver.NoNameservers as exc:
        return None, f"no name server answered for {name}: {exc}", True
    except dns.exception.Timeout:
        return None, f"the DNS lookup of {name} timed out", True
    except dns.resolver.NoResolverConfiguration:
        return None, "the registry has no DNS resolver configured", True
    except dns.exception.DNSException as exc:
        return None, f"the DNS lookup of {name} failed: {exc}", True
    if answer.rrset is None:
        return [], "", False
    return [_text(rdata) for rdata in answer.rrset], "", False


def check(origin: Origin) -> Outcome:
    if ip_literal(origin):
        return failed(
            f"{origin.origin} has an IP address for host, which has no DNS name to hold a TXT "
            "record; prove it with the http or jwks method"
        )
    name, expected = record_name(origin), expected_value(origin)
    values, reason, transient = lookup(name)
    if values is None:
        return failed(f"{reason}; expected a TXT record {expected!r} there", transient=transient)
    for value in values:
        if hmac.compare_digest(value.encode("utf-8"), expected.encode("utf-8")):
            return passed()
    found = f"TXT records {_shown(values)}" if values else "no TXT record"
    return failed(f"{name} has {found}; expected a TXT record {expected!r}")
