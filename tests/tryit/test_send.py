"""``POST /api/v1/agents/{id}/try``: who may send, and what a send to a real a2a-sdk agent on
loopback answers (tests/live/agents.py). Agents are ingested through the real crawl."""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from cards import crawling
from cards.models import Agent
from tests.live.agents import CARD_HOST_ONLY, LiveAgent, broken_agent, sdk_agent
from tests.publishers.granted import grant_endpoints
from tests.tryit.pages import try_page

pytestmark = pytest.mark.django_db

PAYLOAD = {"a": "Lion", "b": "Tiger"}


@pytest.fixture
def live_settings(settings: Any, loopback_allowed: None) -> Any:
    settings.REGISTRY_LIVE_CONNECT_TIMEOUT = 2.0
    settings.REGISTRY_LIVE_READ_TIMEOUT = 3.0
    settings.REGISTRY_LIVE_REQUEST_TIMEOUT = 5.0
    return settings


def account(name: str, **extra: Any) -> tuple[Any, APIClient]:
    user = get_user_model().objects.create_user(username=name, **extra)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return user, client


def ingest(agent: LiveAgent, owner: Any, *, opted_in: bool) -> Agent:
    row = Agent.objects.create(
        url=agent.card_url, card_url=agent.card_url, submitted_by=owner, probe_messages=opted_in
    )
    assert crawling.agent_crawl(agent_id=row.pk) == "stored", Agent.objects.get(
        pk=row.pk
    ).last_error
    agent.log.entries.clear()
    if owner is not None:
        grant_endpoints(row)  # its owner proved the origins it reaches (issue 44)
    return Agent.objects.get(pk=row.pk)


@pytest.fixture
def running(live_settings: Any) -> Iterator[LiveAgent]:
    with sdk_agent() as agent:
        yield agent


def send(client: Any, row: Agent, payload: Any = PAYLOAD) -> Any:
    return client.post(
        f"/api/v1/agents/{row.pk}/try", {"skill": "compare", "payload": payload}, format="json"
    )


def sends(agent: LiveAgent) -> int:
    return len(agent.received)


@pytest.mark.parametrize(
    ("version", "completed"), [("1.0", "TASK_STATE_COMPLETED"), ("0.3", "completed")]
)
def test_the_owner_of_an_opted_in_agent_sends_and_sees_the_validated_output(
    live_settings: Any, version: Any, completed: str
) -> None:
    alice, client = account("alice")
    with sdk_agent(version=version) as running:
        row = ingest(running, alice, opted_in=True)
        response = send(client, row)
        sent = [
            json.loads(bytes(seen.body)) for seen in running.log.entries if seen.method == "POST"
        ]
    assert response.status_code == 200, response.content
    # v0.3: message/send with a kind "data" part and metadata.mimeType (seed 000 section 2).
    method = sent[0]["method"]
    part = sent[0]["params"]["message"]["parts"][0]
    if version == "0.3":
        assert method == "message/send" and part["metadata"]["mimeType"].endswith("fightComparison")
    else:
        assert method == "SendMessage" and part["mediaType"].endswith("fightComparison")
    result = response.json()
    assert result["kind"] == "task" and result["state"] == completed
    verdicts = [a for a in result["artifacts"] if a.get("schema") == "fightVerdict"]
    assert verdicts and all(a["valid"] is True for a in verdicts), result["artifacts"]
    assert sends(running) == 1
    # The message the agent got is the form's data part, and it says it is the registry's.
    part = running.received[0]["parts"][0]
    assert part["data"] == PAYLOAD
    # The send counts against the day's allowance of the live checks.
    assert Agent.objects.get(pk=row.pk).live["messages"]["sent"] == 1


def test_nobody_else_may_send(running: LiveAgent) -> None:
    alice, _ = account("alice")
    _, bob = account("bob")
    row = ingest(running, alice, opted_in=True)
    assert send(APIClient(), row).status_code == 401  # anonymous
    assert send(bob, row).status_code == 403  # another account
    assert sends(running) == 0


def test_staff_may_send(running: LiveAgent) -> None:
    alice, _ = account("alice")
    _, staff = account("curator", is_staff=True)
    row = ingest(running, alice, opted_in=True)
    assert send(staff, row).status_code == 200
    assert sends(running) == 1


def test_the_owner_of_an_agent_not_opted_in_may_not_send(running: LiveAgent) -> None:
    alice, client = account("alice")
    row = ingest(running, alice, opted_in=False)
    response = send(client, row)
    assert response.status_code == 403
    assert response.json()["type"].endswith("not-opted-in")
    assert sends(running) == 0


def test_an_agent_the_caller_cannot_see_is_not_found(running: LiveAgent) -> None:
    alice, _ = account("alice")
    _, bob = account("bob")
    row = ingest(running, alice, opted_in=True)
    Agent.objects.filter(pk=row.pk).update(moderation=Agent.Moderation.HIDDEN)
    assert send(bob, row).status_code == 404
    assert send(APIClient(), row).status_code == 401  # a token first, as on every owner route
    assert sends(running) == 0


def test_an_invalid_payload_is_not_sent(running: LiveAgent) -> None:
    alice, client = account("alice")
    row = ingest(running, alice, opted_in=True)
    response = send(client, row, {"a": "Lion"})
    assert response.status_code == 422
    assert response.json()["errors"]
    assert sends(running) == 0


def test_the_days_allowance_bounds_the_sends(running: LiveAgent, settings: Any) -> None:
    settings.REGISTRY_LIVE_MESSAGES_PER_DAY = 1
    alice, client = account("alice")
    row = ingest(running, alice, opted_in=True)
    assert send(client, row).status_code == 200
    response = send(client, row)
    assert response.status_code == 429
    assert sends(running) == 1


def test_the_page_session_needs_its_csrf_token(running: LiveAgent) -> None:
    alice, _ = account("alice")
    row = ingest(running, alice, opted_in=True)
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(alice)
    page = try_page(browser, row).content.decode()
    assert 'class="try-send"' in page  # the owner of an opted-in agent sees the button
    url = f"/api/v1/agents/{row.pk}/try"
    body = {"skill": "compare", "payload": PAYLOAD}
    assert browser.post(url, body, content_type="application/json").status_code == 403
    token = browser.cookies["csrftoken"].value
    answer = browser.post(url, body, content_type="application/json", HTTP_X_CSRFTOKEN=token)
    assert answer.status_code == 200, answer.content
    assert sends(running) == 1


def test_a_send_never_reaches_a_refused_address(live_settings: Any) -> None:
    live_settings.REGISTRY_FETCH_ALLOWED_NETWORKS = CARD_HOST_ONLY
    alice, client = account("alice")
    with broken_agent("refused_interface") as agent:
        row = ingest(agent, alice, opted_in=True)
        response = send(client, row)
        assert agent.trap is not None and not agent.trap.entries
    assert response.status_code == 200, response.content
    assert response.json()["refused"] is True and response.json()["sent"] is False


def _snippet(page: str, css_class: str) -> str:
    found = re.search(rf'<pre class="{css_class}">(.*?)</pre>', page, re.S)
    assert found, css_class
    return html.unescape(found.group(1))


def test_the_pages_snippets_send_the_message_as_they_are(running: LiveAgent) -> None:
    """The curl and a2a-sdk snippets, copied from the page and run, reach the agent with the
    form's message and get its task back."""
    alice, _ = account("alice")
    row = ingest(running, alice, opted_in=False)
    page = try_page(Client(), row).content.decode()
    python = subprocess.run(
        [sys.executable, "-c", _snippet(page, "try-python")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert python.returncode == 0, python.stderr
    assert "TASK_STATE_COMPLETED" in python.stdout
    if shutil.which("curl"):
        curl = subprocess.run(
            ["bash", "-c", _snippet(page, "try-curl")], capture_output=True, text=True, timeout=30
        )
        assert curl.returncode == 0, curl.stderr
        assert (
            json.loads(curl.stdout)["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
        )
    assert [m["parts"][0]["data"] for m in running.received][:1] == [PAYLOAD]
