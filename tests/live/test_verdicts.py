"""Verdicts the specification supports (issue 43, section 3) and the interface cap (section 1),
against real agents on loopback: a limit of the registry's own is not the agent's failure, a
check not sent is skipped, A2A errors carry their ErrorInfo, the card's Cache-Control carries
max-age and is read from the crawl's answer, bare ``text`` skills get a message, an endpoint never
contacted is not-checked, one URL in two versions is checked twice, and a card with thousands
of interfaces costs its host a handful of requests."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from live.exchange import Exchange
from live.interfaces import JSONRPC, Interface
from live.limits import limit_row
from tests.live.agents import CARD_HOST_ONLY, broken_agent, handmade_agent, sdk_agent
from tests.live.cards import CARD_PATH, JSONRPC_PATH
from tests.live.test_live_checks import alice, failing, ingest, live_settings, only, opt_in, run

__all__ = ["alice", "live_settings"]  # fixtures, imported to be used here

pytestmark = pytest.mark.django_db

Alice = tuple[Any, APIClient]


def rows(report: dict[str, Any], check_id: str) -> list[dict[str, Any]]:
    return [c for c in report["checks"] if c["id"] == check_id]


# --- a limit of the registry's own is not the agent's failure --------------------------------


@pytest.mark.parametrize(
    ("kind", "options", "limit", "words"),
    [
        ("slow", {"delay": 4.0}, "REG-TOO-SLOW", "too slow for the registry"),
        ("huge", {}, "REG-TOO-LARGE", "too large for the registry"),
        ("huge", {"chunked": True}, "REG-TOO-LARGE", "too large for the registry"),
    ],
)
def test_an_answer_over_the_registrys_limits_is_not_the_agents_failure(
    live_settings: Any, alice: Alice, kind: str, options: dict[str, Any], limit: str, words: str
) -> None:
    with broken_agent(kind, **options) as agent:
        report = run(ingest(agent, alice[0]))
    assert failing(report) == []
    limited = rows(report, limit)
    assert len(limited) == 2, report["checks"]  # the first request of each interface
    for row in limited:
        assert row["outcome"] == "skip" and row["level"] == "REGISTRY"
        assert words in row["detail"] and "CORE-GET-002" in row["detail"]
    # The rest of each interface was not sent: skipped, with the reason.
    assert all(c["outcome"] == "skip" for c in report["checks"] if "not sent" in c["detail"])
    assert report["endpoint"] == "not-checked"  # not "unreachable": it took the connection
    assert report["outcome"] == "not-checked"


def test_a_slow_cancel_is_reported_as_the_registrys_limit(live_settings: Any, alice: Alice) -> None:
    with broken_agent("slow", delay=4.0, only="cancel") as agent:
        report = run(ingest(agent, alice[0]))
    assert failing(report) == []
    assert [c["outcome"] for c in rows(report, "CORE-GET-002")] == ["pass", "pass"]
    assert rows(report, "CORE-CANCEL-003") == []
    slow = rows(report, "REG-TOO-SLOW")
    assert len(slow) == 2 and all("CORE-CANCEL-003 not judged" in c["detail"] for c in slow)
    assert report["endpoint"] == "answers" and report["outcome"] == "pass"


def test_checks_not_sent_are_skipped_not_failed(live_settings: Any, alice: Alice) -> None:
    live_settings.REGISTRY_FETCH_ALLOWED_NETWORKS = CARD_HOST_ONLY
    with broken_agent("refused_interface") as agent:
        report = run(ingest(agent, alice[0]))
        assert agent.trap is not None and agent.trap.entries == []
    not_sent = [c for c in report["checks"] if c["detail"].startswith("not sent")]
    assert len(not_sent) >= 6
    assert {c["outcome"] for c in not_sent} == {"skip"}
    # What was sent and refused is the agent's card's doing: its own row fails.
    assert {c["outcome"] for c in rows(report, "CORE-GET-002")} == {"fail"}


@pytest.mark.parametrize("code", ["destination-busy", "destination-ceiling"])
def test_a_request_the_politeness_gate_held_back_is_skipped(code: str) -> None:
    interface = Interface(url="https://agent.example/a2a", binding=JSONRPC, version="1.0")
    exchange = Exchange(method="POST", url=interface.url, sent="", error="wait", error_code=code)
    row = limit_row(("CORE-GET-002", "GetTask ...", "MUST"), interface, exchange)
    assert row is not None
    assert (row.id, row.outcome, row.level) == ("CORE-GET-002", "skip", "MUST")
    assert row.detail.startswith("not sent: the registry's per-destination limit")
    timeout = Exchange(
        method="POST",
        url=interface.url,
        sent="",
        error="connecting to the server timed out",
        error_code="timeout",
    )
    # A connect timeout is the endpoint's: nothing accepted the connection.
    assert limit_row(("CORE-GET-002", "", "MUST"), interface, timeout) is None


def test_the_politeness_gates_hourly_ceiling_skips_what_it_holds_back(
    live_settings: Any, alice: Alice
) -> None:
    with handmade_agent() as agent:
        row = ingest(agent, alice[0])
        # The ceiling is counted on the loopback address every test shares: 1 leaves this run
        # one request at most, whatever came before it this hour.
        live_settings.REGISTRY_DESTINATION_HOURLY_LIMIT = 1
        report = run(row)
        received = len(agent.requests)
    assert received <= 1
    assert failing(report) == []
    held = [c for c in report["checks"] if "per-destination limit" in c["detail"]]
    assert held and {c["outcome"] for c in held} == {"skip"}
    # A binding held back is not compared with one that answered (BIND-EQUIV-003).
    assert all(c["outcome"] != "fail" for c in rows(report, "BIND-EQUIV-003"))


# --- google.rpc.ErrorInfo (spec 9.5, 11.6) ---------------------------------------------------


def test_errors_without_error_info_are_caught(live_settings: Any, alice: Alice) -> None:
    with broken_agent("no_error_info") as agent:
        report = run(ingest(agent, alice[0]))
    rest = only(report, "HTTP_JSON-ERR-002")
    assert (rest["outcome"], rest["level"]) == ("fail", "MUST")
    assert "no google.rpc.ErrorInfo" in rest["detail"] and "TASK_NOT_FOUND" in rest["detail"]
    jsonrpc = only(report, "JSONRPC-ERR-003")
    assert (jsonrpc["outcome"], jsonrpc["level"]) == ("warn", "SHOULD")
    assert report["outcome"] == "fail"
    assert [c["id"] for c in report["checks"] if c["outcome"] == "fail"] == ["HTTP_JSON-ERR-002"]


@pytest.mark.parametrize("served_by", ["handmade", "sdk"])
def test_errors_with_error_info_pass(live_settings: Any, alice: Alice, served_by: str) -> None:
    agent_of = handmade_agent if served_by == "handmade" else sdk_agent
    with agent_of() as agent:
        report = run(ingest(agent, alice[0]))
    assert failing(report) == []
    assert only(report, "HTTP_JSON-ERR-002")["outcome"] == "pass"
    assert only(report, "JSONRPC-ERR-003")["outcome"] == "pass"


def test_v0_3_interfaces_are_not_judged_on_error_info(live_settings: Any, alice: Alice) -> None:
    with sdk_agent(version="0.3") as agent:
        report = run(ingest(agent, alice[0]))
    assert rows(report, "HTTP_JSON-ERR-002") == rows(report, "JSONRPC-ERR-003") == []


# --- the card's caching headers, from the crawl's answer -------------------------------------


@pytest.mark.parametrize(
    ("headers", "cache_control", "etag"),
    [
        ({"Cache-Control": "no-store", "ETag": '"v1"'}, "warn", "pass"),
        ({"Cache-Control": "public"}, "warn", "warn"),
        ({"Cache-Control": "public, max-age=300", "ETag": '"v1"'}, "pass", "pass"),
        ({}, "warn", "warn"),
    ],
)
def test_the_card_cache_checks_read_the_crawls_answer(
    live_settings: Any, alice: Alice, headers: dict[str, str], cache_control: str, etag: str
) -> None:
    with handmade_agent(card_headers=headers) as agent:
        row = ingest(agent, alice[0])
        report = run(row)
        assert agent.hits(path=CARD_PATH) == 0  # the run sent no GET of the card
        assert agent.requests  # ... while it did ask the interfaces
    assert only(report, "CARD-CACHE-001")["outcome"] == cache_control
    assert only(report, "CARD-CACHE-002")["outcome"] == etag
    if "no-store" in headers.get("Cache-Control", ""):
        assert "max-age" in only(report, "CARD-CACHE-001")["detail"]


# --- messages to bare "text" skills, and a row when none is sent -----------------------------


@pytest.mark.parametrize("declared", [True, False], ids=["skill-modes", "card-defaults"])
def test_a_skill_taking_bare_text_gets_a_message(
    live_settings: Any, alice: Alice, declared: bool
) -> None:
    with sdk_agent(text_mode="text", echo_modes=declared) as agent:
        row = ingest(agent, alice[0])
        opt_in(alice[1], row)
        report = run(row, force=True)
        texts = [m for m in agent.received if any("text" in p for p in m.get("parts") or [])]
    send = only(report, "CORE-SEND-001")
    assert send["outcome"] == "pass" and send["skill"] == "echo", send
    assert texts, agent.received
    assert failing(report) == []


def test_an_opted_in_agent_sent_no_message_is_told_why(live_settings: Any, alice: Alice) -> None:
    with broken_agent("auth_required") as agent:
        row = ingest(agent, alice[0])
        opt_in(alice[1], row)
        report = run(row, force=True)
        assert agent.sends == 0
    assert "authentication" in only(report, "REG-MESSAGES")["detail"]
    with sdk_agent() as agent:
        row = ingest(agent, alice[0])
        opt_in(alice[1], row)
        run(row, force=True)
        sent = agent.sends
        again = run(row)  # not forced: the day's messages went with the first run
        assert agent.sends == sent
    assert "first run" in only(again, "REG-MESSAGES")["detail"]


# --- an endpoint never contacted is not-checked ----------------------------------------------


def test_an_agent_whose_endpoint_was_never_contacted_is_not_checked(
    live_settings: Any, alice: Alice
) -> None:
    with broken_agent("auth_required", card_headers={"Cache-Control": "max-age=60"}) as agent:
        report = run(ingest(agent, alice[0]))
        assert agent.requests == []
    assert only(report, "CARD-CACHE-001")["outcome"] == "pass"
    assert report["endpoint"] == "not-checked"
    assert report["outcome"] == "not-checked"


# --- one URL in two protocol versions (spec 3.6.2) -------------------------------------------


def test_one_url_declared_in_two_versions_is_checked_in_both(
    live_settings: Any, alice: Alice
) -> None:
    def both(origin: str) -> list[dict[str, Any]]:
        url = origin + JSONRPC_PATH
        return [
            {"url": url, "protocolBinding": "JSONRPC", "protocolVersion": version}
            for version in ("1.0", "0.3")
        ]

    with sdk_agent(interfaces=both) as agent:
        report = run(ingest(agent, alice[0]))
        bodies = [bytes(seen.body) for seen in agent.requests]
    assert failing(report) == []
    get = rows(report, "CORE-GET-002")
    assert sorted(c["interface"] for c in get) == sorted(
        f"{agent.base_url}{JSONRPC_PATH} (A2A {v})" for v in ("1.0", "0.3")
    )
    assert all(c["outcome"] == "pass" for c in get)
    assert any(b'"GetTask"' in body for body in bodies)
    assert any(b'"tasks/get"' in body for body in bodies)


# --- at most a few interfaces an agent -------------------------------------------------------


def test_a_card_with_two_thousand_interfaces_costs_its_host_a_few_requests(
    live_settings: Any, alice: Alice
) -> None:
    live_settings.REGISTRY_LIVE_MAX_INTERFACES = 4
    with broken_agent("many_interfaces", count=2000) as agent:
        row = ingest(agent, alice[0])
        assert len(row.latest_snapshot.card["supportedInterfaces"]) == 2000
        report = run(row)
        received = len(agent.requests)
    # At most 6 requests an interface (JSON-RPC v1.0 sends 5, HTTP+JSON 3), no card GET.
    assert received <= 4 * 6, received
    checked = {c["interface"] for c in report["checks"] if c["id"] == "CORE-GET-002"}
    assert len(checked) == 4
    skipped = [c for c in report["checks"] if c["id"] == "REG-INTERFACE"]
    assert len(skipped) == 1, skipped
    assert skipped[0]["detail"].startswith("1,996 more interfaces not checked")
    assert "at most 4 per agent" in skipped[0]["detail"]
    assert len(report["checks"]) < 40


def test_repeats_of_an_origin_binding_and_version_are_skipped(
    live_settings: Any, alice: Alice
) -> None:
    live_settings.REGISTRY_LIVE_MAX_INTERFACES = 10
    # 12 interfaces, 4 distinct (origin, binding, version): n and n + 4 share one. Interface 10
    # spells its origin HTTP://, and is still a repeat of interface 2.
    with broken_agent("many_interfaces", count=12, versions=2) as agent:
        report = run(ingest(agent, alice[0]))
        urls = [i["url"] for i in agent.card["supportedInterfaces"]]
    checked = {c["interface"] for c in report["checks"] if c["id"] == "CORE-GET-002"}
    assert checked == set(urls[:4])
    skipped = [c for c in report["checks"] if c["id"] == "REG-INTERFACE"]
    assert [c["interface"] for c in skipped] == urls[4:]
    assert all("the same origin, binding and version" in c["detail"] for c in skipped)
    assert urls[10].startswith("HTTP://")
