"""Two rough edges of the catalogue (issue 47, item 6): list rows carry a live-check chip where
the agent has been checked, read from the row's stored summary (no query per row), and the
agent page says "unsigned" once at its top, not in both the badge and a chip."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from cards.models import Agent
from live.report import SKIP, Check
from tests.factories import agent_from_card, minimal_card
from tests.live_reports import failing_method, passing_get, record

pytestmark = pytest.mark.django_db

T0 = dt.datetime(2026, 11, 20, 8, 30, tzinfo=dt.UTC)
CHIPS = {
    "pass": '<span class="state good">live checks pass</span>',
    "fail": '<span class="state bad">live checks fail</span>',
    "not-checked": '<span class="state">live checks: nothing checked</span>',
}


def skipped() -> Check:
    return Check(id="CORE-GET-002", title="GetTask", level="MUST", outcome=SKIP, detail="gRPC only")


def row_of(body: str, agent: Agent) -> str:
    """The list row (<li>) of ``agent`` on a catalogue page."""
    rows = re.findall(r"<li>\s*<h3>.*?</li>", body, re.S)
    found = [row for row in rows if f'href="/agents/{agent.pk}"' in row]
    assert len(found) == 1, f"{agent.name} is not listed once"
    return found[0]


def chips_of(row: str) -> list[str]:
    return [outcome for outcome, chip in CHIPS.items() if chip in row]


@pytest.fixture
def agents() -> dict[str, Agent]:
    owner = get_user_model().objects.create_user("owner")
    made = {
        name: agent_from_card(minimal_card(name=f"Agent that {name}"))
        for name in ("passes", "fails", "was never checked", "could not be checked")
    }
    Agent.objects.filter(pk__in=[a.pk for a in made.values()]).update(submitted_by=owner)
    record(made["passes"], [passing_get()], at=T0)
    record(made["fails"], [failing_method()], at=T0)
    record(made["could not be checked"], [skipped()], at=T0, endpoint="not-checked")
    return made


@pytest.mark.parametrize("path", ["/", "/?input_mode=text%2Fplain", "/?tag=echo"])
def test_list_rows_show_the_live_checks_outcome(
    client: Client, agents: dict[str, Agent], path: str
) -> None:
    body = client.get(path).content.decode()
    assert chips_of(row_of(body, agents["passes"])) == ["pass"]
    assert chips_of(row_of(body, agents["fails"])) == ["fail"]
    assert chips_of(row_of(body, agents["could not be checked"])) == ["not-checked"]
    never = row_of(body, agents["was never checked"])
    assert chips_of(never) == [] and "live checks" not in never


def test_my_agents_rows_show_the_live_checks_outcome(agents: dict[str, Agent]) -> None:
    client = Client()
    client.force_login(get_user_model().objects.get(username="owner"))
    body = client.get("/my-agents").content.decode()
    assert chips_of(row_of(body, agents["passes"])) == ["pass"]
    assert chips_of(row_of(body, agents["fails"])) == ["fail"]
    assert chips_of(row_of(body, agents["was never checked"])) == []


def test_the_chips_cost_no_query_per_row(client: Client, agents: dict[str, Agent]) -> None:
    def queries() -> int:
        with CaptureQueriesContext(connection) as seen:
            assert client.get("/").status_code == 200
        return len(seen.captured_queries)

    queries()  # the facets, counted once and cached
    before = queries()
    for number in range(5):
        record(agent_from_card(minimal_card(name=f"More {number}")), [passing_get()], at=T0)
    assert queries() == before
    assert client.get("/").content.decode().count(CHIPS["pass"]) == 6


def test_the_agent_page_says_unsigned_once_at_its_top(client: Client) -> None:
    agent = agent_from_card(minimal_card(name="Unsigned agent"))
    assert agent.signature_status == "unsigned"
    body = client.get(f"/agents/{agent.pk}").content.decode()
    top = body.split('<div class="badge-row">', 1)[1].split("</div>", 1)[0]
    badge: Any = client.get(f"/badges/{agent.pk}.svg")
    # What the badge shows: its text drawn (not the shadow copies, hidden from readers).
    drawn = re.findall(r"<text(?![^>]*aria-hidden)[^>]*>([^<]*)</text>", badge.content.decode())
    said = top.count("unsigned") + " ".join(drawn).count("unsigned")
    assert said <= 1, "the top of the agent page says unsigned twice"
    assert "<tr><th>Signature</th><td>unsigned</td></tr>" in body  # said where it is asked
    # A list row still says it: there is no badge there.
    assert '<span class="state">unsigned</span>' in row_of(client.get("/").content.decode(), agent)
