"""Which of a card's interfaces one run checks, and the rows that say why the others were not.

A card is written by whoever publishes it and may declare thousands of interfaces on one host.
A run checks at most ``REGISTRY_LIVE_MAX_INTERFACES`` of them, in the card's order, one per
(origin in its normal form, binding, protocol version): a second path on the same origin with
the same binding and version adds requests to the same server and nothing to the verdict. gRPC
and unknown bindings are never sent anything and take no place. Every interface not checked is
accounted for: one ``skip`` row each while they are few, one summary row when they are many, so
the stored report stays small whatever the card says.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from urllib.parse import urlsplit

from django.conf import settings

from cards.discovery import origin_of
from cards.url_form import normalise_fetched
from live.interfaces import GRPC, HTTP_JSON, JSONRPC, Interface
from live.report import REGISTRY, SKIP, Check

ROW = "REG-INTERFACE"
TITLE = "The interface can be checked"
# Up to this many interfaces not checked get a row each; more get one summary row.
ROWS_EACH = 8


@lru_cache(maxsize=256)
def _normal_origin(scheme_and_netloc: str) -> str:
    return origin_of(normalise_fetched(scheme_and_netloc)).lower()


def key_of(interface: Interface) -> tuple[str, str, str]:
    """(origin in normal form, binding, version): what makes two interfaces worth two checks.
    Only the scheme and authority are normalised (once each: a card repeats one host)."""
    try:
        parts = urlsplit(interface.url)
        origin = _normal_origin(f"{parts.scheme}://{parts.netloc}")
    except ValueError:
        origin = interface.url
    return origin, interface.binding, interface.version


def unchecked_reason(interface: Interface) -> str | None:
    """Why the registry sends this interface nothing whatever the cap, or None."""
    if interface.binding in (JSONRPC, HTTP_JSON):
        return None
    if interface.binding == GRPC:
        return "gRPC is not checked: the registry has no HTTP/2 gRPC client over its safe transport"
    return f"unknown protocol binding {interface.binding!r}"


@dataclass
class Selection:
    checked: list[Interface] = field(default_factory=list)
    # (interface, reason, whether it was left out by the cap or as a repeat)
    skipped: list[tuple[Interface, str, bool]] = field(default_factory=list)


def select(interfaces: list[Interface], cap: int | None = None) -> Selection:
    """The interfaces to check (at most ``cap``, distinct keys) and the others with reasons."""
    cap = settings.REGISTRY_LIVE_MAX_INTERFACES if cap is None else cap
    out = Selection()
    chosen: dict[tuple[str, str, str], Interface] = {}
    for interface in interfaces:
        reason = unchecked_reason(interface)
        if reason is not None:
            out.skipped.append((interface, reason, False))
            continue
        if len(out.checked) >= cap:
            # Past the cap nothing is sent whatever its key: no need to work the key out.
            limit = f"not checked: the registry checks at most {cap} interfaces per agent"
            out.skipped.append((interface, limit, True))
            continue
        key = key_of(interface)
        if key in chosen:
            reason = (
                f"not checked: the same origin, binding and version as {chosen[key].url}, "
                "which is checked"
            )
            out.skipped.append((interface, reason, True))
            continue
        chosen[key] = interface
        out.checked.append(interface)
    return out


def row(detail: str, interface: Interface | None) -> Check:
    return Check(
        id=ROW,
        title=TITLE,
        level=REGISTRY,
        outcome=SKIP,
        detail=detail,
        interface=interface.url if interface else None,
    )


def skip_rows(skipped: list[tuple[Interface, str, bool]], cap: int | None = None) -> list[Check]:
    """A row per interface not checked while there are at most ROWS_EACH, else one row."""
    if len(skipped) <= ROWS_EACH:
        return [row(reason, interface) for interface, reason, _ in skipped]
    cap = settings.REGISTRY_LIVE_MAX_INTERFACES if cap is None else cap
    capped = sum(1 for _, _, by_cap in skipped if by_cap)
    parts = []
    if capped:
        parts.append(
            f"the registry checks at most {cap} per agent, one per origin, binding and version"
        )
    if len(skipped) - capped:
        parts.append(
            f"{len(skipped) - capped:,} of them gRPC or of a binding the registry does not check"
        )
    detail = f"{len(skipped):,} more interfaces not checked: " + "; ".join(parts)
    return [row(detail, None)]


def all_skipped(interfaces: list[Interface], reason: str) -> list[Check]:
    """Every interface skipped for one reason (a card that requires authentication)."""
    if len(interfaces) <= ROWS_EACH:
        return [row(reason, interface) for interface in interfaces]
    return [row(f"{len(interfaces):,} interfaces not checked: {reason}", None)]
