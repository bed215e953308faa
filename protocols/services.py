"""Writes of the protocols app: the registry submits its own card like anyone else's."""

from __future__ import annotations

from cards import services
from cards.models import Agent

OWN_CARD_PATH = "/.well-known/agent-card.json"


def own_card_submit(*, base_url: str, enqueue: bool = True) -> tuple[Agent, bool]:
    """Submit the registry's own card (served at ``base_url``) for crawling, once."""
    return services.agent_submit(
        url=base_url.rstrip("/") + OWN_CARD_PATH, user=None, enqueue=enqueue
    )
