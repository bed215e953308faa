"""Search by meaning's lexical statement stays on its fast path (docs/search.md, "How it
works", step 3; issue 49): the gate's condition, and the filters' when they read only the
agents' own table, are compiled once into one statement instead of Django building a union.

The gate's ``latest_snapshot__isnull=False`` (issue 39) left ``cards_snapshot`` in the query's
aliases with no reference (Django trims that join) and sent every search to Django's query
builder: about 1 ms of CPU a search, unnoticed because both paths give the same shares."""

from __future__ import annotations

from typing import Any

import pytest

from cards.models import Agent
from cards.reads import gate
from search import lexical
from search.filters import AgentSearch

pytestmark = pytest.mark.django_db


def test_the_gates_condition_is_compiled_for_every_viewer(django_user_model: Any) -> None:
    owner = django_user_model.objects.create_user("speed-owner", password="pw-speed-1")
    viewers = (gate.ANONYMOUS, gate.Viewer(user_id=owner.pk), gate.Viewer(user_id=1, staff=True))
    for viewer in viewers:
        for agents in (
            gate.agents(viewer),
            gate.agents(viewer, include_gone=False),
            AgentSearch().apply(gate.agents(viewer)),  # the REST door's, without filters
            AgentSearch(streaming=True, valid=True).apply(gate.agents(viewer)),
        ):
            condition = lexical._condition_of(agents)
            assert condition is not None, (viewer, str(agents.query))
            where, _ = condition
            assert where is not None and "cards_snapshot" not in where


def test_a_real_join_still_goes_to_django() -> None:
    assert lexical._condition_of(gate.agents().filter(skills__name="x")) is None
    assert lexical._condition_of(Agent.objects.all()) is None  # no alias yet: nothing to read
