"""Who an agent is and who owns it, once a crawl knows where its card really is (issue 44 §4).

* An agent is its card URL in normal form, after redirects. A fetch whose redirects end at a URL
  that another agent already holds (as the URL it was registered with, or as the card URL of an
  agent registered earlier) stores nothing: the card belongs to that agent, in whatever state it
  is (rejected, deleted and hidden included), and the crawl records ``registered-elsewhere``
  without naming it. Before this rule, a redirect gave another account a public copy of it.
* An agent belongs to the verified publisher of its card's origin: the apps above ``cards`` say
  who that is through :data:`cards.hooks.publisher_lookups` (``publishers`` registers one), and
  a crawl that finds the card on a proven origin moves the agent to its publisher, audited.
"""

from __future__ import annotations

from django.db.models import Q

from cards import hooks
from cards.models import Agent, AuditEntry

REGISTERED_ELSEWHERE = "registered-elsewhere"
REGISTERED_ELSEWHERE_REASON = (
    "the card was found at {url}, a URL already registered as another agent: that agent is the "
    "one for this card (submit {url} to reach it, if you may see it); nothing was stored here"
)


def holder_of(agent: Agent, card_url: str) -> Agent | None:
    """The agent that already is ``card_url`` (normal form), if it is not ``agent``: the one
    registered with that URL, else one registered earlier whose card was found there."""
    if not card_url or card_url == agent.url:
        return None
    earlier = Q(created_at__lt=agent.created_at) | Q(created_at=agent.created_at, id__lt=agent.id)
    return (
        Agent.objects.filter(Q(url=card_url) | (Q(card_url=card_url) & earlier))
        .exclude(pk=agent.pk)
        .only("id")
        .order_by("created_at", "id")
        .first()
    )


def apply_publisher(agent: Agent, card_url: str) -> None:
    """Set ``agent``'s owner and ``publisher_origin`` from its card's origin (not saved here)."""
    found = None
    for lookup in hooks.publisher_lookups:
        found = lookup(card_url)
        if found is not None:
            break
    if found is None:
        agent.publisher_origin = ""
        return
    account_id, origin = found
    if agent.submitted_by_id != account_id:
        AuditEntry.objects.create(
            actor_id=account_id,
            agent=agent,
            action="owner-moved",
            reason=f"The verified publisher of {origin} owns the agents on it.",
            detail={"origin": origin, "previous_owner": agent.submitted_by_id, "owner": account_id},
        )
        agent.submitted_by_id = account_id
    agent.publisher_origin = origin
