"""The live checks on the agent's catalogue page and in the admin (docs/catalogue.md)."""

from __future__ import annotations

import datetime as dt
import html
import re
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from cards.models import Agent, AuditEntry
from live.report import SKIP, Check
from tests.factories import agent_from_card, minimal_card
from tests.live_reports import exchange, failing_method, passing_get, record
from tests.publishers.granted import grant_endpoints

pytestmark = pytest.mark.django_db

T0 = dt.datetime(2026, 11, 20, 8, 30, tzinfo=dt.UTC)
T1 = dt.datetime(2026, 11, 21, 9, 45, tzinfo=dt.UTC)


def page(client: Client, agent: Agent) -> str:
    response = client.get(f"/agents/{agent.pk}")
    assert response.status_code == 200, response.content.decode()[:2000]
    return response.content.decode()


def section(body: str) -> str:
    """The "Live checks" section of a page, up to the next heading."""
    return body.split('<h2 id="live">', 1)[1].split("<h2>", 1)[0]


def row(body: str, check_id: str) -> str:
    """The table row of one check."""
    rows = section(body).split("<tr>")
    return next(r for r in rows if f"<code>{check_id}</code>" in r)


def endpoint_row(body: str) -> str:
    return body.split('<tr id="endpoint">', 1)[1].split("</tr>", 1)[0]


@pytest.fixture
def agent() -> Agent:
    return agent_from_card(minimal_card(name="Checked agent"))


def test_each_check_shows_its_id_outcome_reason_and_what_was_sent_and_received(
    client: Client, agent: Agent
) -> None:
    record(agent, [passing_get(), failing_method()], at=T0)
    body = page(client, agent)
    live = section(body)
    assert "2026-11-20 08:30 UTC" in live
    assert "1 passed" in live and "1 failed" in live

    good = row(body, "CORE-GET-002")
    assert "MUST" in good and '<span class="state good">pass</span>' in good
    assert "GetTask returns TaskNotFoundError for an unknown task id" in good
    assert "error -32001 (TaskNotFoundError)" in good
    assert "<code>https://agent.example.com/a2a</code>" in good
    assert "<details" in good and "HTTP 200" in good and "in 12.5 ms" in good
    sent = html.unescape(good)
    assert (
        'POST https://agent.example.com/a2a\n{"jsonrpc": "2.0", "id": 1, "method": "GetTask"}'
        in sent
    )
    assert '"code": -32001, "message": "Task not found"' in sent
    assert "since" not in good  # "since" is said of failures only

    bad = row(body, "REG-JSONRPC-METHOD")
    assert '<span class="state bad">fail</span>' in bad
    assert "expected error -32601 (Method not found), got a result" in bad
    assert "since 2026-11-20 08:30 UTC" in bad


def test_a_check_that_keeps_failing_says_since_when(client: Client, agent: Agent) -> None:
    record(agent, [passing_get(), failing_method()], at=T0)
    record(agent, [passing_get(), failing_method()], at=T1)
    body = page(client, agent)
    assert "checked 2026-11-21 09:45 UTC" in section(body)
    assert "since 2026-11-20 08:30 UTC" in row(body, "REG-JSONRPC-METHOD")
    assert "failing since 2026-11-20 08:30 UTC" in section(body)
    # Fixed, then broken again: the failure starts over.
    record(agent, [passing_get()], at=T1 + dt.timedelta(hours=1))
    record(agent, [passing_get(), failing_method()], at=T1 + dt.timedelta(hours=2))
    assert "since 2026-11-21 11:45 UTC" in row(page(client, agent), "REG-JSONRPC-METHOD")


def test_a_hostile_excerpt_and_detail_are_escaped(client: Client, agent: Agent) -> None:
    hostile = b"<script>alert('pwned')</script><img src=x onerror=alert(1)>"
    check = failing_method(answer=hostile)
    check.detail = "<b>not JSON</b>: <script>alert(2)</script>"
    check.exchange = exchange("<script>sent</script>", hostile, status=200)
    record(agent, [check], at=T0)
    response = client.get(f"/agents/{agent.pk}")
    body = response.content.decode()
    assert "<script" not in body and "<img src=x" not in body and "<b>not JSON" not in body
    assert "&lt;script&gt;alert(&#x27;pwned&#x27;)&lt;/script&gt;" in body
    assert "&lt;script&gt;sent&lt;/script&gt;" in body
    assert "&lt;b&gt;not JSON&lt;/b&gt;" in body
    assert "script-src" not in response["Content-Security-Policy"]  # and none could run anyway


def test_an_exchange_that_got_no_answer_says_why(client: Client, agent: Agent) -> None:
    check = failing_method()
    check.exchange = exchange("{}", None, error="the connection was refused")
    record(agent, [check], at=T0, endpoint="unreachable")
    bad = row(page(client, agent), "REG-JSONRPC-METHOD")
    assert "No answer: the connection was refused" in bad and "HTTP " not in bad


@pytest.mark.parametrize(
    ("endpoint", "words", "colour"),
    [
        ("answers", "answers A2A", "good"),
        ("not-a2a", "answers, but not A2A", "bad"),
        ("unreachable", "unreachable", "bad"),
    ],
)
def test_health_says_whether_the_endpoint_answers(
    client: Client, agent: Agent, endpoint: str, words: str, colour: str
) -> None:
    record(agent, [passing_get()], at=T0, endpoint=endpoint)
    health = endpoint_row(page(client, agent))
    assert f'<span class="state {colour}">{words}</span>' in health
    assert "checked 2026-11-20 08:30 UTC" in health


def test_an_agent_never_checked_says_so(client: Client, agent: Agent) -> None:
    body = page(client, agent)
    assert "not checked yet" in endpoint_row(body) and "checked 20" not in endpoint_row(body)
    assert "Not checked yet" in section(body)
    assert "live checks" not in body.split("</h1>", 1)[1].split("</div>", 1)[0]  # no chip


def test_a_run_that_could_judge_no_answer_does_not_say_never_checked(
    client: Client, agent: Agent
) -> None:
    """Every answer too slow for the registry: the run happened, its endpoint is not-checked,
    and the health row says the answers were not judged (it said "not checked yet")."""
    slow = Check(
        id="REG-TOO-SLOW",
        title="The answer came too slowly for the registry",
        level="REGISTRY",
        outcome=SKIP,
        detail="no answer within the registry's read timeout",
        interface="https://agent.example.com/a2a",
    )
    record(agent, [slow], at=T0, endpoint="not-checked")
    health = endpoint_row(page(client, agent))
    assert "not judged: see the live checks" in health
    assert "not checked yet" not in health


def test_only_the_owner_and_staff_are_told_how_to_turn_messages_on_and_probe(
    client: Client, agent: Agent
) -> None:
    users = get_user_model().objects
    owner = users.create_user(username="owner")
    other = users.create_user(username="someone-else")
    staff = users.create_user(username="curator", is_staff=True)
    Agent.objects.filter(pk=agent.pk).update(submitted_by=owner)
    record(agent, [passing_get()], at=T0)

    client.force_login(owner)
    hint = page(client, agent).split('id="live-owner">', 1)[1].split("</div>", 1)[0]
    assert f"PATCH /api/v1/agents/{agent.pk}" in hint
    assert '{"probe_messages": true}' in html.unescape(hint)
    assert f"POST /api/v1/agents/{agent.pk}/probe" in hint
    assert "/admin/" not in hint  # the admin is for staff

    client.force_login(other)
    body = page(client, agent)
    assert 'id="live-owner"' not in body and "/probe" not in body
    assert "Message checks</th><td>off" in section(body)  # the state itself is public

    client.logout()
    assert 'id="live-owner"' not in page(client, agent)

    client.force_login(staff)
    hint = page(client, agent).split('id="live-owner">', 1)[1].split("</div>", 1)[0]
    assert f"/admin/cards/agent/{agent.pk}/change/" in hint


def test_an_opted_in_agent_says_its_message_checks_are_on(client: Client, agent: Agent) -> None:
    owner = get_user_model().objects.create_user(username="owner")
    Agent.objects.filter(pk=agent.pk, submitted_by=None).update(
        submitted_by=owner, probe_messages=True
    )
    record(agent, [passing_get()], at=T0, messages=True)
    assert "Message checks</th><td>on" in section(page(client, agent))
    client.force_login(owner)
    hint = page(client, agent).split('id="live-owner">', 1)[1].split("</div>", 1)[0]
    assert '{"probe_messages": false}' in html.unescape(hint)


def test_the_page_shows_what_a_real_endpoint_answered(
    client: Client, loopback_allowed: None
) -> None:
    from live.runner import check_agent
    from tests.live.agents import broken_agent

    with broken_agent("html_endpoint") as served:
        agent = agent_from_card(served.card, url=served.card_url)
        report = check_agent(agent)
    assert report["endpoint"] == "not-a2a" and report["outcome"] == "fail"
    body = page(client, agent)
    assert '<span class="state bad">answers, but not A2A</span>' in endpoint_row(body)
    assert '<span class="state bad">live checks fail</span>' in body
    live = section(body)
    assert "&lt;h1&gt;Welcome!&lt;/h1&gt;" in live and "<h1>Welcome!" not in body
    assert f"POST {served.jsonrpc_url}" in html.unescape(live)


# --- admin ------------------------------------------------------------------------------------


@pytest.fixture
def staff_client(django_user_model: Any) -> Client:
    user = django_user_model.objects.create_superuser(username="curator", password="pw-for-tests")
    client = Client()
    client.force_login(user)
    return client


def test_the_admin_lists_and_filters_by_live_outcome_and_shows_the_checks(
    staff_client: Client, agent: Agent
) -> None:
    record(agent, [passing_get(), failing_method()], at=T0)
    agent_from_card(minimal_card(name="Never checked"))
    listing = staff_client.get("/admin/cards/agent/", {"live_outcome": "fail"}).content.decode()
    assert "Checked agent" in listing and "Never checked" not in listing
    assert re.search(r'class="field-live_outcome">fail<', listing)
    change = staff_client.get(f"/admin/cards/agent/{agent.pk}/change/").content.decode()
    assert "Checks of the last run" in change and "REG-JSONRPC-METHOD" in change
    assert 'name="probe_messages"' in change  # editable
    assert 'name="live_outcome"' not in change  # shown only


def test_the_admin_turns_message_checks_on_through_the_audited_service(
    staff_client: Client, agent: Agent
) -> None:
    url = f"/admin/cards/agent/{agent.pk}/change/"
    form = staff_client.get(url).context["adminform"].form
    data = {k: v for k, v in form.initial.items() if v is not None and k in form.fields}
    data.pop("probe_messages", None)
    for name in ("pinned_keys", "skills", "extensions", "snapshots", "keys", "events"):
        data.update(
            {
                f"{name}-TOTAL_FORMS": "0",
                f"{name}-INITIAL_FORMS": "0",
                f"{name}-MIN_NUM_FORMS": "0",
                f"{name}-MAX_NUM_FORMS": "1000",
            }
        )
    # Not while the owner has proven nothing (issue 44): the field says which proof is missing.
    refused = staff_client.post(url, {**data, "probe_messages": "on"})
    assert refused.status_code == 200
    assert "has not proven that they run" in refused.content.decode()
    agent.refresh_from_db()
    assert agent.probe_messages is False
    owner = get_user_model().objects.create_user(username="owner")
    Agent.objects.filter(pk=agent.pk).update(submitted_by=owner)
    grant_endpoints(agent)
    response = staff_client.post(url, {**data, "probe_messages": "on"})
    assert response.status_code == 302, response.content.decode()[:2000]
    agent.refresh_from_db()
    assert agent.probe_messages is True
    entry = AuditEntry.objects.get(agent=agent, action="probe-messages-on")
    assert entry.detail == {"previous": False} and entry.actor is not None
    # The public documents follow: the API detail says the opt-in too.
    assert Client().get(f"/api/v1/agents/{agent.pk}").json()["live"]["probe_messages"] is True
