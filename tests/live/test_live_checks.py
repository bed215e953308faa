"""Live checks against real agents on loopback: a2a-sdk's own server (v1.0 and v0.3) and
hand-made agents that each break one rule (tests/live/agents.py). Agents are ingested through
the real crawl, checked through the real fetcher, and read back through the API."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from cards import crawling
from cards.models import Agent
from live import runner, wire
from live.exchange import CHECK_HEADER
from live.tasks import sweep
from tests.factories import agent_from_card, minimal_card
from tests.live.agents import (
    CARD_HOST_ONLY,
    LiveAgent,
    broken_agent,
    handmade_agent,
    sdk_agent,
)
from tests.publishers.granted import grant_endpoints

pytestmark = pytest.mark.django_db

TRANSPORT_V1 = {
    "CORE-GET-002",
    "CORE-CANCEL-003",
    "REG-JSONRPC-METHOD",
    "REG-JSONRPC-PARSE",
    "VER-SERVER-002",
    "JSONRPC-ERR-001",
    "HTTP_JSON-ERR-001",
    "BIND-EQUIV-003",
    "CARD-CACHE-001",
    "CARD-CACHE-002",
}


@pytest.fixture
def live_settings(settings: Any, loopback_allowed: None) -> Any:
    """Short bounds, so the slow agent's test stays short."""
    settings.REGISTRY_LIVE_CONNECT_TIMEOUT = 2.0
    settings.REGISTRY_LIVE_READ_TIMEOUT = 1.0
    settings.REGISTRY_LIVE_REQUEST_TIMEOUT = 2.0
    settings.REGISTRY_LIVE_RUN_SECONDS = 12.0
    settings.REGISTRY_LIVE_MAX_BYTES = 64 * 1024
    settings.REGISTRY_LIVE_PROBE_COOLDOWN_SECONDS = 60
    return settings


def account(name: str) -> tuple[Any, APIClient]:
    user = get_user_model().objects.create_user(username=name)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return user, client


@pytest.fixture
def alice() -> tuple[Any, APIClient]:
    return account("alice")


@pytest.fixture
def bob() -> tuple[Any, APIClient]:
    return account("bob")


def ingest(agent: LiveAgent, owner: Any) -> Agent:
    """The agent's card crawled for real, as a submission of ``owner``'s."""
    row = Agent.objects.create(url=agent.card_url, card_url=agent.card_url, submitted_by=owner)
    assert crawling.agent_crawl(agent_id=row.pk) == "stored", Agent.objects.get(
        pk=row.pk
    ).last_error
    agent.log.entries.clear()  # what the crawl read is not what the checks sent
    return Agent.objects.select_related("latest_snapshot").get(pk=row.pk)


def run(row: Agent, *, force: bool = False) -> dict[str, Any]:
    target = runner.target(row.pk)
    assert target is not None
    return runner.check_agent(target, force=force)


def outcomes(report: dict[str, Any], check_id: str) -> list[str]:
    return [c["outcome"] for c in report["checks"] if c["id"] == check_id]


def only(report: dict[str, Any], check_id: str) -> dict[str, Any]:
    found = [c for c in report["checks"] if c["id"] == check_id]
    assert len(found) == 1, (check_id, report["checks"])
    return found[0]


def failing(report: dict[str, Any]) -> list[tuple[str, str]]:
    return [(c["id"], c["detail"]) for c in report["checks"] if c["outcome"] == "fail"]


def opt_in(client: APIClient, row: Agent) -> None:
    grant_endpoints(row)  # the owner proved the origins (issue 44; tests/publishers/granted.py)
    response = client.patch(f"/api/v1/agents/{row.pk}", {"probe_messages": True}, format="json")
    assert response.status_code == 200, response.content
    assert response.json()["live"]["probe_messages"] is True


# --- a2a-sdk's own server -------------------------------------------------------------------


@pytest.mark.parametrize("version", ["1.0", "0.3"])
def test_an_agent_served_by_a2a_sdk_passes_every_transport_check(
    live_settings: Any, alice: tuple[Any, APIClient], version: Any
) -> None:
    with sdk_agent(version=version) as agent:
        row = ingest(agent, alice[0])
        report = run(row)
        assert failing(report) == []
        assert report["outcome"] == "pass"
        assert report["endpoint"] == "answers"
        ids = {c["id"] for c in report["checks"]}
        expected = (
            TRANSPORT_V1
            if version == "1.0"
            else TRANSPORT_V1
            - {
                "VER-SERVER-002",
                "HTTP_JSON-ERR-001",
            }
        )
        assert expected <= ids
        # Both bindings asked, in the interface's own version's method names and paths.
        assert outcomes(report, "CORE-GET-002") == ["pass", "pass"]
        sent = [c["exchange"]["request"] for c in report["checks"] if c["exchange"]]
        get_name = "GetTask" if version == "1.0" else "tasks/get"
        assert any(f'"method": "{get_name}"' in text for text in sent)
        rest_get = "/a2a/rest/tasks/" if version == "1.0" else "/a2a/rest/v1/tasks/"
        assert any(text.startswith("GET ") and rest_get in text for text in sent)
        # Nothing that starts work: the owner did not opt in, so no message was sent.
        assert agent.sends == 0
        assert agent.received == []
        # Every request says it is the registry's check.
        for seen in agent.requests:
            assert seen.headers.get(CHECK_HEADER.lower()), seen
            assert "live-check" in seen.headers.get("user-agent", "")


def test_messages_are_sent_only_after_the_owner_opts_in(
    live_settings: Any, alice: tuple[Any, APIClient]
) -> None:
    with sdk_agent() as agent:
        row = ingest(agent, alice[0])
        before = run(row)
        assert agent.sends == 0
        assert not any(c["id"].startswith("SCHEMAS-") for c in before["checks"])

        opt_in(alice[1], row)
        report = run(row, force=True)
        assert failing(report) == []
        assert only(report, "SCHEMAS-TASK")["outcome"] == "pass"
        assert only(report, "SCHEMAS-INVALID")["outcome"] == "pass"
        assert only(report, "SCHEMAS-OUTPUT")["outcome"] == "pass"
        assert only(report, "CORE-SEND-001")["outcome"] == "pass"
        assert only(report, "PROGRESS-META")["outcome"] in ("pass", "skip")
        assert agent.sends == 3  # valid, invalid, text
        for message in agent.received:
            assert wire.CHECK_METADATA_KEY in (message.get("metadata") or {}), message
        assert report["messages"]["sent"] == 3


def test_the_daily_message_limit_holds(live_settings: Any, alice: tuple[Any, APIClient]) -> None:
    live_settings.REGISTRY_LIVE_MESSAGES_PER_DAY = 4
    with sdk_agent() as agent:
        row = ingest(agent, alice[0])
        opt_in(alice[1], row)
        run(row, force=True)
        second = run(row, force=True)
        assert agent.sends == 4
        skipped = [c for c in second["checks"] if c["outcome"] == "skip" and "limit" in c["detail"]]
        assert skipped
        # Not forced: the day's message run is done; only the transport checks run again.
        third = run(row)
        assert agent.sends == 4
        assert not any(c["id"] == "SCHEMAS-TASK" for c in third["checks"])


def test_a_hand_made_conformant_agent_passes_with_messages(
    live_settings: Any, alice: tuple[Any, APIClient]
) -> None:
    with handmade_agent() as agent:
        row = ingest(agent, alice[0])
        opt_in(alice[1], row)
        report = run(row, force=True)
        assert failing(report) == []
        assert report["outcome"] == "pass"


# --- agents that break one rule each --------------------------------------------------------

TRANSPORT_BREAKS = [
    ("wrong_error_code", "CORE-GET-002", "fail", "-32001"),
    ("no_version_check", "VER-SERVER-002", "fail", "VersionNotSupportedError"),
    ("bad_error_shape", "JSONRPC-ERR-001", "fail", ""),
    ("html_endpoint", "CORE-GET-002", "fail", "not JSON"),
]


@pytest.mark.parametrize(("kind", "check_id", "outcome", "words"), TRANSPORT_BREAKS)
def test_a_broken_transport_is_caught(
    live_settings: Any,
    alice: tuple[Any, APIClient],
    kind: str,
    check_id: str,
    outcome: str,
    words: str,
) -> None:
    with broken_agent(kind) as agent:
        row = ingest(agent, alice[0])
        report = run(row)
        assert outcome in outcomes(report, check_id), report["checks"]
        found = [c for c in report["checks"] if c["id"] == check_id and c["outcome"] == outcome]
        assert words in found[0]["detail"]
        assert report["outcome"] == "fail"
        assert agent.sends == 0
        stored = Agent.objects.get(pk=row.pk)
        assert stored.live_outcome == "fail"
        assert stored.live_checked_at is not None
    if kind == "html_endpoint":
        assert report["endpoint"] == "not-a2a"


MESSAGE_BREAKS = [
    ("message_instead_of_task", "SCHEMAS-TASK", "fail"),
    ("bad_output", "SCHEMAS-OUTPUT", "fail"),
    ("accepts_invalid", "SCHEMAS-INVALID", "warn"),
]


@pytest.mark.parametrize(("kind", "check_id", "outcome"), MESSAGE_BREAKS)
def test_a_broken_message_flow_is_caught_once_opted_in(
    live_settings: Any, alice: tuple[Any, APIClient], kind: str, check_id: str, outcome: str
) -> None:
    with broken_agent(kind) as agent:
        row = ingest(agent, alice[0])
        quiet = run(row)
        assert agent.sends == 0  # not opted in: the rule it breaks is not even tried
        assert check_id not in {c["id"] for c in quiet["checks"]}
        opt_in(alice[1], row)
        report = run(row, force=True)
        assert outcome in outcomes(report, check_id), report["checks"]
        assert agent.sends >= 1


def test_a_slow_agent_costs_bounded_time(live_settings: Any, alice: tuple[Any, APIClient]) -> None:
    with broken_agent("slow", delay=4.0) as agent:
        row = ingest(agent, alice[0])
        started = time.monotonic()
        report = run(row)
        elapsed = time.monotonic() - started
        # Too slow for the registry, not the agent's failure (tests/live/test_verdicts.py).
        slow = [c for c in report["checks"] if c["id"] == "REG-TOO-SLOW"]
        assert len(slow) == 2 and all(c["outcome"] == "skip" for c in slow)
        assert failing(report) == []
        # One timeout an interface (its other checks are not sent); no GET of the card.
        assert elapsed < 2 * live_settings.REGISTRY_LIVE_REQUEST_TIMEOUT + 2, elapsed


def test_an_interface_on_a_refused_address_receives_nothing(
    live_settings: Any, alice: tuple[Any, APIClient]
) -> None:
    # Only the card's own address is allowed: the interfaces' 127.0.0.2 is refused.
    live_settings.REGISTRY_FETCH_ALLOWED_NETWORKS = CARD_HOST_ONLY
    with broken_agent("refused_interface") as agent:
        row = ingest(agent, alice[0])
        opt_in(alice[1], row)
        report = run(row, force=True)
        assert agent.trap is not None
        assert agent.trap.entries == []
        assert report["outcome"] == "fail"
        assert report["checked_at"]
        assert report["endpoint"] == "unreachable"
        get = [c for c in report["checks"] if c["id"] == "CORE-GET-002"]
        assert get and all("refused" in c["detail"] for c in get)
        assert not any(c["id"].startswith("SCHEMAS-") for c in report["checks"])


def test_an_agent_that_requires_authentication_is_not_called(
    live_settings: Any, alice: tuple[Any, APIClient]
) -> None:
    with broken_agent("auth_required") as agent:
        row = ingest(agent, alice[0])
        opt_in(alice[1], row)
        report = run(row, force=True)
        interface_paths = [r for r in agent.requests if "/a2a/" in r.path]
        assert interface_paths == []
        assert report["outcome"] == "not-checked"  # the endpoint was never contacted
        skipped = [c for c in report["checks"] if c["id"] == "REG-INTERFACE"]
        assert skipped and all("authentication" in c["detail"] for c in skipped)


def test_since_says_since_when_a_check_fails(
    live_settings: Any, alice: tuple[Any, APIClient]
) -> None:
    with broken_agent("wrong_error_code") as agent:
        row = ingest(agent, alice[0])
        first = run(row)
        second = run(row, force=True)
        since_first = [c["since"] for c in first["checks"] if c["id"] == "CORE-GET-002"]
        since_second = [c["since"] for c in second["checks"] if c["id"] == "CORE-GET-002"]
        assert since_first == since_second
        assert second["failing_since"] == first["checked_at"]
        assert second["checked_at"] >= first["checked_at"]


# --- the API: opt-in, probe, results, filter ------------------------------------------------


def test_only_the_owner_or_staff_opts_in_and_probes(
    live_settings: Any, alice: tuple[Any, APIClient], bob: tuple[Any, APIClient]
) -> None:
    with sdk_agent() as agent:
        row = ingest(agent, alice[0])
        url = f"/api/v1/agents/{row.pk}"
        anonymous = APIClient()
        assert anonymous.patch(url, {"probe_messages": True}, format="json").status_code == 401
        assert bob[1].patch(url, {"probe_messages": True}, format="json").status_code == 403
        bad = alice[1].patch(url, {"probe_messages": "yes"}, format="json")
        assert bad.status_code == 400
        assert bad["Content-Type"].startswith("application/problem+json")
        unknown = alice[1].patch(url, {"moderation": "approved"}, format="json")
        assert unknown.status_code == 400
        assert Agent.objects.get(pk=row.pk).probe_messages is False

        assert anonymous.post(f"{url}/probe").status_code == 401
        assert bob[1].post(f"{url}/probe").status_code == 403
        assert agent.requests == []
        unproven = alice[1].post(f"{url}/probe")  # the owner has not proven the origin yet
        assert unproven.status_code == 403 and unproven.json()["type"].endswith("origin-not-proven")
        assert agent.requests == []
        grant_endpoints(row)
        accepted = alice[1].post(f"{url}/probe")
        assert accepted.status_code == 202, accepted.content
        assert agent.requests  # eager in tests: the checks ran
        again = alice[1].post(f"{url}/probe")
        assert again.status_code == 429
        assert again["Content-Type"].startswith("application/problem+json")

        detail = anonymous.get(url).json()
        assert detail["live"]["outcome"] == "pass"
        assert detail["health"]["endpoint"] == "answers"
        assert {c["id"] for c in detail["live"]["checks"]} >= {"CORE-GET-002", "VER-SERVER-002"}
        assert all(c["since"] for c in detail["live"]["checks"])
        assert agent.sends == 0


def test_the_list_carries_and_filters_the_outcome(
    live_settings: Any, alice: tuple[Any, APIClient]
) -> None:
    with sdk_agent() as good, broken_agent("wrong_error_code") as bad:
        good_row, bad_row = ingest(good, alice[0]), ingest(bad, alice[0])
        run(good_row)
        run(bad_row)
    # A public agent with a card that was never checked (an agent without a card is not
    # public at all: cards.reads.gate).
    never = agent_from_card(minimal_card(name="Never checked"), url="https://never.example/c.json")
    client = APIClient()

    def ids(**query: Any) -> set[str]:
        response = client.get("/api/v1/agents", query)
        assert response.status_code == 200, response.content
        return {r["id"] for r in response.json()["results"]}

    assert ids(live="pass") == {str(good_row.pk)}
    assert ids(live="fail") == {str(bad_row.pk)}
    assert str(never.pk) in ids(live="not-checked")
    assert ids(live=["pass", "fail"]) == {str(good_row.pk), str(bad_row.pk)}
    rows = {r["id"]: r for r in client.get("/api/v1/agents").json()["results"]}
    assert rows[str(good_row.pk)]["live"]["outcome"] == "pass"
    assert rows[str(bad_row.pk)]["live"]["outcome"] == "fail"
    wrong = client.get("/api/v1/agents", {"live": "green"})
    assert wrong.status_code == 400
    assert wrong["Content-Type"].startswith("application/problem+json")


# --- after a crawl --------------------------------------------------------------------------


@pytest.fixture
def checks_after_crawls(live_settings: Any) -> Iterator[Any]:
    live_settings.REGISTRY_LIVE_CHECKS = True
    yield live_settings


def test_a_crawl_queues_the_checks_at_most_once_an_interval(
    checks_after_crawls: Any, alice: tuple[Any, APIClient]
) -> None:
    from cards import tasks

    with sdk_agent() as agent:
        row = Agent.objects.create(
            url=agent.card_url, card_url=agent.card_url, submitted_by=alice[0]
        )
        tasks.crawl_agent.apply(args=[str(row.pk)])  # eager, as the in-process mode runs it
        first = Agent.objects.get(pk=row.pk)
        assert first.live_outcome == "pass"
        assert first.live_checked_at is not None
        count = agent.hits(path="/a2a/jsonrpc")
        assert count > 0
        tasks.crawl_agent.apply(args=[str(row.pk)])
        second = Agent.objects.get(pk=row.pk)
        assert second.live_checked_at == first.live_checked_at  # not due yet
        assert agent.hits(path="/a2a/jsonrpc") == count
        assert agent.sends == 0


# --- through Redis and a real Celery worker -------------------------------------------------


@pytest.mark.celery_worker
def test_a_real_worker_crawls_then_checks_and_the_probe_goes_through_the_broker(
    start_worker: Any, live_settings: Any
) -> None:
    worker = start_worker(live=True)
    _, client = account("carol")
    with sdk_agent() as agent:
        response = client.post("/api/v1/agents", {"url": agent.card_url}, format="json")
        assert response.status_code == 202, response.content
        agent_id = response.json()["id"]
        deadline = time.monotonic() + 90
        row = Agent.objects.get(pk=agent_id)
        while time.monotonic() < deadline and row.status == "pending":
            time.sleep(0.2)
            row = Agent.objects.get(pk=agent_id)
        assert row.status == "ok", row.last_error
        assert row.live_checked_at is None  # the crawl queues nothing: the sweep does
        sweep.delay()  # as beat sends it
        while time.monotonic() < deadline and row.live_checked_at is None:
            assert worker.poll() is None, "the worker exited early; see its log in tmp_path"
            time.sleep(0.3)
            row = Agent.objects.get(pk=agent_id)
        assert row.status == "ok", row.last_error
        assert row.live_outcome == "pass", row.live
        first = row.live_checked_at
        assert first is not None
        assert agent.sends == 0

        # The owner's probe is queued (202 at once) and run by the worker.
        grant_endpoints(row)  # the owner proved the origin (issue 44)
        live_settings.REGISTRY_LIVE_PROBE_COOLDOWN_SECONDS = 0
        assert client.post(f"/api/v1/agents/{agent_id}/probe").status_code == 202
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and row.live_checked_at == first:
            time.sleep(0.3)
            row = Agent.objects.get(pk=agent_id)
        assert row.live_checked_at is not None and row.live_checked_at > first
        detail = client.get(f"/api/v1/agents/{agent_id}").json()
        assert detail["live"]["outcome"] == "pass"
        assert detail["health"]["endpoint"] == "answers"


def test_the_sweep_queues_what_is_due_and_only_that(
    checks_after_crawls: Any, alice: tuple[Any, APIClient]
) -> None:
    with sdk_agent() as agent, broken_agent("wrong_error_code") as other:
        first, second = ingest(agent, alice[0]), ingest(other, alice[0])
        never = Agent.objects.create(url="https://never.example/card.json")  # no card read
        assert sweep() == 2  # eager in tests: both checked now
        assert Agent.objects.get(pk=first.pk).live_outcome == "pass"
        assert Agent.objects.get(pk=second.pk).live_outcome == "fail"
        assert Agent.objects.get(pk=never.pk).live_checked_at is None
        assert sweep() == 0  # checked within the interval
        # A card read again after the interval makes it due again.
        checks_after_crawls.REGISTRY_LIVE_INTERVAL_SECONDS = 60
        stale = timezone.now() - timedelta(seconds=120)
        read_before = stale - timedelta(seconds=10)
        Agent.objects.filter(pk=first.pk).update(live_checked_at=stale, last_success_at=read_before)
        assert sweep() == 0  # due by age, but its card was not read since
        Agent.objects.filter(pk=first.pk).update(last_success_at=timezone.now())
        assert sweep() == 1
        assert agent.sends == 0 and other.sends == 0


def test_a_run_patches_the_documents_as_a_full_rendering_would(
    live_settings: Any, alice: tuple[Any, APIClient]
) -> None:
    import json

    from cards.rendering import store

    with broken_agent("wrong_error_code") as agent:
        row = ingest(agent, alice[0])
        run(row)
        run(row, force=True)  # the second run patches documents that already carry live
    stored = Agent.objects.get(pk=row.pk)
    patched = json.loads(stored.summary_doc), json.loads(stored.detail_doc)
    assert patched[0]["live"]["outcome"] == "fail"
    assert patched[1]["health"]["endpoint"] == "answers"
    store.render_all()
    again = Agent.objects.get(pk=row.pk)
    assert (json.loads(again.summary_doc), json.loads(again.detail_doc)) == patched
