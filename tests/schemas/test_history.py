"""Compatibility verdicts recorded when an agent's named schemas change between snapshots."""

from __future__ import annotations

import copy

import pytest
from rest_framework.test import APIClient

from cards.models import Snapshot
from schemas_app.models import SchemaChange
from tests.factories import agent_from_card
from tests.schemas.cards import FIGHT_COMPARISON, FIGHT_RESPONSE, fight_card, ingest

pytestmark = pytest.mark.django_db


def card_with(comparison: dict | None = None, response: dict | None = None, **over: object) -> dict:
    card = fight_card(**over)
    if comparison is not None:
        card["schemas"]["fightComparison"] = comparison
    if response is not None:
        card["schemas"]["fightResponse"] = response
    return card


def test_a_first_card_records_no_change() -> None:
    agent_from_card(fight_card())
    assert SchemaChange.objects.count() == 0


def test_an_input_schema_gaining_a_required_property_is_breaking_and_shown() -> None:
    agent = agent_from_card(fight_card())
    first = agent.latest_snapshot
    stricter = copy.deepcopy(FIGHT_COMPARISON)
    stricter["properties"]["arena"] = {"type": "string"}
    stricter["required"] = ["a", "b", "arena"]
    assert ingest(agent, card_with(stricter, version="1.1.0")) == "stored"
    agent.refresh_from_db()
    change = SchemaChange.objects.get()
    assert (change.name, change.kind, change.direction, change.verdict) == (
        "fightComparison",
        "changed",
        "input",
        "breaking",
    )
    assert change.snapshot_id == agent.latest_snapshot_id and change.previous_snapshot == first
    assert [r["type"] for r in change.reasons] == [
        "REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL"
    ]
    api = APIClient()
    detail = api.get("/api/v1/schemas/fightComparison").json()
    assert detail["compatibility"][0]["verdict"] == "breaking"
    assert detail["compatibility"][0]["snapshot"]["sha256"] == agent.latest_snapshot.sha256
    assert detail["compatibility"][0]["agent"]["id"] == str(agent.pk)
    history = api.get(f"/api/v1/agents/{agent.pk}/schema-changes").json()
    assert [c["name"] for c in history["results"]] == ["fightComparison"]


def test_output_schema_changes_are_judged_the_other_way() -> None:
    agent = agent_from_card(fight_card())
    wider = copy.deepcopy(FIGHT_RESPONSE)
    wider["properties"]["venue"] = {"type": "string"}  # closed model: outputs may now carry it
    ingest(agent, card_with(response=wider, version="1.1.0"))
    change = SchemaChange.objects.get()
    assert (change.direction, change.verdict) == ("output", "breaking")
    narrower = copy.deepcopy(FIGHT_RESPONSE)
    del narrower["properties"]["explanation"]
    narrower["required"] = ["winner", "probability"]
    ingest(agent, card_with(response=narrower, version="1.2.0"))
    latest = SchemaChange.objects.order_by("-id").first()
    assert latest is not None
    # From "wider" to "narrower": outputs lose venue and explanation may be absent -> breaking.
    assert latest.verdict == "breaking"
    ingest(agent, card_with(response=FIGHT_RESPONSE, version="1.3.0"))
    ingest(agent, card_with(response=narrower, version="1.4.0"))
    last = SchemaChange.objects.order_by("-id").first()
    assert last is not None
    # FIGHT_RESPONSE -> narrower: explanation no longer required, still allowed: outputs that
    # omit it were not allowed before -> breaking for consumers.
    assert last.verdict == "breaking"


def test_an_output_schema_that_only_narrows_is_compatible() -> None:
    agent = agent_from_card(fight_card())
    tighter = copy.deepcopy(FIGHT_RESPONSE)
    tighter["properties"]["explanation"]["maxLength"] = 500
    ingest(agent, card_with(response=tighter, version="1.1.0"))
    change = SchemaChange.objects.get()
    assert (change.direction, change.verdict, change.semantic) == ("output", "compatible", "yes")


def test_names_added_and_removed() -> None:
    agent = agent_from_card(fight_card())
    card = fight_card(version="1.1.0")
    card["schemas"]["spare"] = {"type": "object"}
    ingest(agent, card)
    added = SchemaChange.objects.get()
    assert (added.name, added.kind, added.verdict, added.direction) == (
        "spare",
        "added",
        "compatible",
        "unused",
    )
    card = fight_card(version="1.2.0")
    del card["schemas"]["fightComparison"]
    card["skills"][0]["inputModes"] = ["text/plain"]
    ingest(agent, card)
    removed = SchemaChange.objects.filter(kind="removed").order_by("name")
    assert [(c.name, c.verdict) for c in removed] == [
        ("fightComparison", "breaking"),
        ("spare", "compatible"),
    ]


def test_an_unchanged_card_or_unchanged_schemas_record_nothing() -> None:
    agent = agent_from_card(fight_card())
    assert ingest(agent, fight_card()) == "unchanged"
    ingest(agent, fight_card(description="Now with a new description."))
    assert SchemaChange.objects.count() == 0
    assert Snapshot.objects.filter(agent=agent).count() == 2


def test_going_back_to_an_earlier_snapshot_is_a_change_too() -> None:
    agent = agent_from_card(fight_card())
    stricter = copy.deepcopy(FIGHT_COMPARISON)
    stricter["properties"]["a"]["maxLength"] = 10
    ingest(agent, card_with(stricter))
    ingest(agent, fight_card())
    verdicts = list(SchemaChange.objects.order_by("id").values_list("verdict", flat=True))
    assert verdicts == ["breaking", "compatible"]


def test_verdicts_per_snapshot_for_the_history_page() -> None:
    from schemas_app.selectors import changes_by_snapshot

    agent = agent_from_card(fight_card())
    stricter = copy.deepcopy(FIGHT_COMPARISON)
    stricter["required"] = ["a"]  # fewer required names: compatible for an input
    ingest(agent, card_with(stricter))
    agent.refresh_from_db()
    found = changes_by_snapshot([agent.latest_snapshot_id])
    assert [(c["name"], c["verdict"]) for c in found[agent.latest_snapshot_id]] == [
        ("fightComparison", "compatible")
    ]


def test_reindex_rebuilds_the_schema_index_from_stored_cards() -> None:
    from django.core.management import call_command

    from schemas_app.models import SchemaUse

    agent = agent_from_card(fight_card())
    SchemaUse.objects.all().delete()
    call_command("reindex_schemas")
    assert SchemaUse.objects.filter(agent=agent).count() == 4
    assert SchemaChange.objects.count() == 0
