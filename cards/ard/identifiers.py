"""ARD identifiers: ``urn:air:<publisher>:<namespace>:<name>`` (ARD Appendix C).

An agent keeps the first identifier it is given: the one its manifest entry declares (when the
manifest's domain has authority over the publisher segment) or one derived from its card's host
and name. The column is unique, and a soft-deleted agent keeps its row, so an identifier is never
reused for another agent.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from django.db import IntegrityError, transaction

from cards.models import Agent

# The shape the ARD conformance tester and entry schema accept.
URN = re.compile(r"^urn:air:([A-Za-z0-9.-]+)(?::([A-Za-z0-9._:-]+))?:([A-Za-z0-9._-]+)$")
MAX_LENGTH = 512
NAMESPACE = "a2a"
_SLUG = re.compile(r"[^a-z0-9._-]+")


class InvalidIdentifier(ValueError):
    """Not an ARD identifier; the message says why."""


@dataclass(frozen=True)
class Identifier:
    publisher: str
    namespace: str
    name: str

    def __str__(self) -> str:
        middle = f":{self.namespace}" if self.namespace else ""
        return f"urn:air:{self.publisher}{middle}:{self.name}"


def parse(text: str) -> Identifier:
    """Split an identifier; the publisher is lower-cased (a domain name)."""
    if not isinstance(text, str) or len(text) > MAX_LENGTH:
        raise InvalidIdentifier(f"an identifier is a string of at most {MAX_LENGTH} characters")
    match = URN.match(text)
    if match is None:
        raise InvalidIdentifier(
            "not an ARD identifier: expected urn:air:<publisher>:<namespace>:<name>"
        )
    publisher, namespace, name = match.groups()
    if publisher.startswith((".", "-")) or ".." in publisher:
        raise InvalidIdentifier("the publisher segment is not a domain name")
    return Identifier(publisher.lower(), namespace or "", name)


def decode_path(raw: str) -> str:
    """The identifier in a URL path, percent-decoded exactly once. Bad escapes are refused."""
    if re.search(r"%(?![0-9A-Fa-f]{2})", raw):
        raise InvalidIdentifier("the identifier has a malformed percent-encoding")
    try:
        decoded = unquote(raw, errors="strict")
    except UnicodeDecodeError:
        raise InvalidIdentifier("the identifier's percent-encoding is not UTF-8") from None
    parse(decoded)
    return decoded


def publisher_of(identifier: str) -> str:
    try:
        return parse(identifier).publisher
    except InvalidIdentifier:
        return ""


def has_authority(domain: str, publisher: str) -> bool:
    """A manifest served from ``domain`` may name ``publisher`` itself or one of its subdomains
    (ARD 4.5.1: the publisher segment is bound to the domain that vouches for it)."""
    domain, publisher = domain.lower().rstrip("."), publisher.lower().rstrip(".")
    return publisher == domain or publisher.endswith("." + domain)


def identity_domain(identity: str) -> str:
    """The trust domain of a ``trustManifest.identity`` (spiffe://, did:web:, https://)."""
    if identity.startswith("did:web:"):
        return unquote(identity[len("did:web:") :].split(":")[0]).lower()
    parts = urlsplit(identity)
    return (parts.hostname or "").lower()


def _slug(text: str) -> str:
    slug = _SLUG.sub("-", text.lower()).strip("-._")
    return slug[:120] or "agent"


def _host(url: str) -> str:
    host = (urlsplit(url).hostname or "").lower()
    # An IPv6 literal has colons, which the URN uses as separators.
    return _SLUG.sub("-", host.replace(":", "-")).strip("-.") or "unknown"


def derived(card_url: str, name: str) -> str:
    """The identifier an agent gets from its card: the card's host and the card's name."""
    return str(Identifier(_host(card_url), NAMESPACE, _slug(name)))


def assign(agent: Agent, wanted: str, *, source: str) -> str | None:
    """Give ``agent`` the identifier ``wanted``, or ``wanted-2``, ``-3``... when another agent
    holds it. Saves the two columns at once; does nothing if the agent already has one.
    Returns the identifier given, or None when it already had one."""
    if agent.ard_identifier:
        return None
    base = wanted
    for attempt in range(1, 50):
        candidate = base if attempt == 1 else f"{base}-{attempt}"
        if len(candidate) > MAX_LENGTH:
            break
        try:
            with transaction.atomic():
                updated = Agent.objects.filter(pk=agent.pk, ard_identifier__isnull=True).update(
                    ard_identifier=candidate, ard_identifier_source=source
                )
        except IntegrityError:
            continue
        if updated:
            agent.ard_identifier, agent.ard_identifier_source = candidate, source
            return candidate
        return None
    return None


def holder(identifier: str) -> Agent | None:
    return Agent.objects.filter(ard_identifier=identifier).first()
