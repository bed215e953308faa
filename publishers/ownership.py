"""Ownership follows proof (issue 44 §4): an agent belongs to the verified publisher of its
card's origin.

The card's origin is that of the URL its card was found at (``Agent.card_url``, after
redirects), or of the submitted URL before the first crawl. When an account proves an origin,
every agent on it moves to that account: each move is audited on the agent (action
``owner-moved``, naming the previous owner, who sees it on their own "My agents" page) and once
on the origin (``agents-moved``). When the proof goes (lapsed, removed, superseded with no
successor) the agents keep their owner and show "publisher not verified" again.

``cards`` never imports this module: it asks :func:`publisher_of` through its hooks at every
crawl (a new agent on a proven origin goes to its publisher at once), and renders
``Agent.publisher_origin``, the column this module keeps.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models import Q, QuerySet

from cards.models import Agent, AuditEntry
from publishers.models import Origin, OriginEvent
from publishers.origin_form import try_origin_of_url


def agents_on(origin: str) -> QuerySet[Agent]:
    """Agents whose card is (or, before a card, whose submitted URL is) on ``origin``."""
    under = origin + "/"
    on_card = Q(card_url=origin) | Q(card_url__startswith=under)
    on_url = Q(card_url="") & (Q(url=origin) | Q(url__startswith=under))
    return Agent.objects.filter(on_card | on_url)


def publisher_of(url: str) -> tuple[int, str] | None:
    """(account id, origin) of the verified publisher of ``url``'s origin, or None."""
    origin = try_origin_of_url(url) if url else None
    if origin is None:
        return None
    row = (
        Origin.objects.filter(origin=origin, state=Origin.State.VERIFIED)
        .values_list("account_id", flat=True)
        .first()
    )
    return None if row is None else (row, origin)


def moved(agent: Agent, *, to: Any, origin: str, previous: Any) -> None:
    """Audit a move of ``agent`` to the account ``to`` (ids), told to ``previous``."""
    AuditEntry.objects.create(
        actor_id=to,
        agent=agent,
        action="owner-moved",
        reason=f"The verified publisher of {origin} owns the agents on it.",
        detail={"origin": origin, "previous_owner": previous, "owner": to},
    )


def origin_verified(proof: Origin) -> None:
    """``proof`` became the verified row of its origin: its agents move to its account."""
    moved_ids: list[str] = []
    with transaction.atomic():
        for agent in agents_on(proof.origin).select_for_update().order_by("created_at", "id"):
            previous = agent.submitted_by_id
            fields = []
            if previous != proof.account_id:
                agent.submitted_by_id = proof.account_id
                fields.append("submitted_by")
                moved(agent, to=proof.account_id, origin=proof.origin, previous=previous)
                moved_ids.append(str(agent.pk))
            if agent.publisher_origin != proof.origin:
                agent.publisher_origin = proof.origin
                fields.append("publisher_origin")
            if fields:
                agent.save(update_fields=[*fields, "updated_at"])  # re-renders its documents
        if moved_ids:
            OriginEvent.objects.create(
                origin=proof,
                origin_text=proof.origin,
                account_id=proof.account_id,
                action=OriginEvent.Action.AGENTS_MOVED,
                detail={"agents": moved_ids[:1000], "count": len(moved_ids)},
            )


def origin_lost(origin_text: str) -> None:
    """No account holds ``origin_text`` verified any more: its agents show "not verified"."""
    with transaction.atomic():
        for agent in (
            Agent.objects.filter(publisher_origin=origin_text).select_for_update().order_by("id")
        ):
            agent.publisher_origin = ""
            agent.save(update_fields=["publisher_origin", "updated_at"])
