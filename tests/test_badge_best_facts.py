"""The default badge tells a working agent's best true facts (issue 47): a valid card whose live
checks passed says "valid, live checks passed" (or "verified, ..."), not only "unsigned"; an
unsigned valid card says "valid" first (docs/badges-and-attestations.md)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any

import pytest
from django.test import Client

from cards.badges import STATES, badge_state
from cards.models import Agent
from tests.factories import agent_from_card, minimal_card

SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture
def agent(db: None) -> Agent:
    return agent_from_card(minimal_card(name="Working agent"))


def _shown(client: Client, agent: Agent) -> tuple[str, str]:
    """(message, its colour) of the default badge as served."""
    root = ET.fromstring(client.get(f"/badges/{agent.pk}.svg").content)
    message = [node.text for node in root.iter(f"{SVG}text")][2]
    colour = [rect.get("fill") for rect in root.iter(f"{SVG}rect")][2]
    return str(message), str(colour)


@pytest.mark.parametrize(
    ("fields", "message", "colour"),
    [
        ({"signature_status": "unsigned", "live_outcome": "pass"},
         "valid, live checks passed", "#97ca00"),
        ({"signature_status": "unbound-key", "live_outcome": "pass"},
         "valid, live checks passed", "#97ca00"),
        ({"signature_status": "verified", "live_outcome": "pass"},
         "verified, live checks passed", "#44cc11"),
        ({"signature_status": "unsigned", "live_outcome": "fail"}, "valid, unsigned", "#607d8b"),
        ({"signature_status": "unsigned", "live_outcome": ""}, "valid, unsigned", "#607d8b"),
        ({"signature_status": "unsigned", "live_outcome": "not-checked"},
         "valid, unsigned", "#607d8b"),
        ({"signature_status": "verified", "live_outcome": "fail"}, "verified", "#44cc11"),
        # A passing endpoint never hides what is wrong with the card.
        ({"signature_status": "unsigned", "live_outcome": "pass", "valid": False},
         "invalid", "#e05d44"),
        ({"signature_status": "invalid", "live_outcome": "pass"}, "bad signature", "#e05d44"),
        ({"signature_status": "unsigned", "live_outcome": "pass", "health": "unreachable"},
         "unreachable", "#fe7d37"),
    ],
)  # fmt: skip
def test_the_default_badge_says_the_best_true_facts(
    agent: Agent, client: Client, fields: dict[str, Any], message: str, colour: str
) -> None:
    Agent.objects.filter(pk=agent.pk).update(**{"valid": True, "health": "healthy", **fields})
    agent.refresh_from_db()
    assert badge_state(agent).message == message
    assert _shown(client, agent) == (message, colour)


def test_the_live_badge_is_unchanged(agent: Agent, client: Client) -> None:
    Agent.objects.filter(pk=agent.pk).update(valid=True, live_outcome="pass")
    root = ET.fromstring(client.get(f"/badges/{agent.pk}.svg?show=live").content)
    assert [node.text for node in root.iter(f"{SVG}text")][2] == STATES["live-pass"].message
