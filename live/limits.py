"""Limits of the registry's own, told apart from what an agent did.

The specification sets no time or size on an answer: a read or total timeout of the live-check
policy, or an answer over ``REGISTRY_LIVE_MAX_BYTES``, says that the answer was too slow or too
large *for the registry*, not that the agent broke a rule. Such a check is reported under a
``REG-`` id at the registry's level, as ``skip``, never as the check's failure. A request the
registry itself held back (the per-destination politeness gate: no turn in time, or the hourly
ceiling reached) was never sent: the check is ``skip`` with that reason.
"""

from __future__ import annotations

from django.conf import settings

from live.exchange import Exchange
from live.interfaces import Interface
from live.report import REGISTRY, SKIP, Check

TOO_SLOW = "REG-TOO-SLOW"
TOO_LARGE = "REG-TOO-LARGE"
TITLES = {
    TOO_SLOW: "Too slow for the registry",
    TOO_LARGE: "Too large for the registry",
}
# The fetcher's per-destination gate (registry/http): the destination's gap or turn could not
# be had in time, or its hourly request ceiling is reached.
HELD_BACK = frozenset({"destination-busy", "destination-ceiling"})
# A connect timeout is not "slow": nothing accepted the connection (the endpoint is unreachable).
_CONNECT_TIMEOUT = "connecting"


def held_back(exchange: Exchange) -> bool:
    """The registry did not send the request: its per-destination limit held it back."""
    return exchange.error_code in HELD_BACK


def held_back_why(exchange: Exchange) -> str:
    return f"the registry's per-destination limit ({exchange.error})"


def limit_of(exchange: Exchange) -> str | None:
    """``REG-TOO-SLOW`` or ``REG-TOO-LARGE`` when the answer hit one of the registry's limits."""
    if exchange.error_code == "too-large":
        return TOO_LARGE
    if exchange.error_code == "timeout" and not (exchange.error or "").startswith(_CONNECT_TIMEOUT):
        return TOO_SLOW
    return None


def _bounds(check_id: str) -> str:
    if check_id == TOO_LARGE:
        return f"the registry reads at most {settings.REGISTRY_LIVE_MAX_BYTES:,} bytes"
    return (
        f"the registry waits {settings.REGISTRY_LIVE_READ_TIMEOUT:g} s for data and "
        f"{settings.REGISTRY_LIVE_REQUEST_TIMEOUT:g} s in all"
    )


def limit_row(
    check: tuple[str, str, str],
    interface: Interface | None,
    exchange: Exchange,
    skill: str | None = None,
) -> Check | None:
    """The row that stands for the check ``(id, title, level)`` when ``exchange`` met a
    registry limit (a ``REG-`` row) or was held back by one (the check's own row, ``skip``),
    else None."""
    check_id, title, level = check
    if held_back(exchange):
        detail = f"not sent: {held_back_why(exchange)}"
    else:
        limit = limit_of(exchange)
        if limit is None:
            return None
        words = "too slow" if limit == TOO_SLOW else "too large"
        detail = (
            f"{check_id} not judged: the answer was {words} for the registry ({exchange.error}; "
            f"{_bounds(limit)}); the specification sets no such limit"
        )
        check_id, title, level = limit, TITLES[limit], REGISTRY
    return Check(
        id=check_id,
        title=title,
        level=level,
        outcome=SKIP,
        detail=detail,
        interface=interface.url if interface else None,
        exchange=exchange,
        skill=skill,
    )
