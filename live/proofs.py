"""The proofs an agent's owner needs before the registry reaches its endpoints on demand
(issue 44 §5; publishers/gates.py): opting in to messages, a probe, "Try it"'s Send, and every
scheduled run that sends messages (a proof may lapse after the opt-in).

The URLs reached are the card's own (its origin is the publisher's) and every interface the live
checks would check (live/selection.py): all of their origins need a proof.
"""

from __future__ import annotations

from typing import Any

from cards.models import Agent
from live import selection
from live.interfaces import interfaces_of
from publishers import gates

OPT_IN = "probe_messages-on"


def endpoint_urls(agent: Agent) -> list[str]:
    """The card URL and the URLs of the interfaces the live checks would reach."""
    urls = [agent.card_url or agent.url]
    snapshot = agent.latest_snapshot if agent.latest_snapshot_id is not None else None
    card = snapshot.card if snapshot is not None and isinstance(snapshot.card, dict) else None
    if card:
        urls.extend(i.url for i in selection.select(interfaces_of(card, agent.shape)).checked)
    return urls


def missing(agent: Agent) -> list[str]:
    """The origins the agent's owner has not proven among those its endpoints are on."""
    return gates.missing(agent.submitted_by_id, endpoint_urls(agent))


def require(agent: Agent, what: str, also: tuple[str, ...] = ()) -> None:
    """A 403 problem unless the agent's owner proved every origin ``what`` would reach (the
    endpoints, and ``also``: a URL only ``what`` reaches)."""
    gates.require(agent.submitted_by_id, [*endpoint_urls(agent), *also], what)


def guard(user: Any, agent: Agent, action: str) -> None:
    """cards.hooks' guard: opting in to messages needs the proofs (opting out never does)."""
    if action == OPT_IN:
        require(agent, "Opting in to message checks")
