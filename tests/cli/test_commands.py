"""The publisher CLI's commands against a live registry (pytest-django's live_server), with
cards and real A2A agents (a2a-sdk's server, a hand-made broken one) on loopback.

Exit codes: 0 valid, 1 card errors, 2 live checks fail, 3 usage/token/network errors.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from tests.cli.conftest import Cli, Served, provable, prove
from tests.factories import minimal_card
from tests.live.broken import BROKEN
from tests.live.sdk_agent import sdk_app
from tests.support import CardServer

pytestmark = pytest.mark.django_db(transaction=True)

INVALID = {"name": "No interfaces", "version": "1.0"}  # no description, interfaces, skills...


def sdk(origin: str) -> Any:
    return sdk_app(origin, version="1.0", received=[])


def wrong_error_code(origin: str) -> Any:
    return BROKEN["wrong_error_code"](origin, []).app()


def test_validate_a_file_and_a_url(run_cli: Cli, card_server: CardServer, tmp_path: Path) -> None:
    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    good.write_text(json.dumps(minimal_card(name="Good")))
    bad.write_text(json.dumps(INVALID))

    valid = run_cli("validate", str(good))
    assert valid.exit_code == 0, valid.output + valid.stderr
    assert "valid" in valid.stdout

    invalid = run_cli("validate", str(bad))
    assert invalid.exit_code == 1
    assert "INVALID" in invalid.stdout and "error" in invalid.stdout
    code, document = run_cli.json("validate", str(bad))
    assert code == 1 and document["ok"] is False and document["exit_code"] == 1
    errors = [f for f in document["validation"]["findings"] if f["severity"] == "error"]
    assert errors and all({"code", "pointer", "message"} <= set(f) for f in errors)
    for finding in errors:  # every error is printed with its code and pointer
        assert finding["code"] in invalid.stdout

    url = card_server.serve("/card.json", json.dumps(minimal_card(name="Served")).encode())
    code, document = run_cli.json("validate", url)
    assert code == 0 and document["source"]["kind"] == "url"


def test_without_a_token_a_command_that_needs_one_says_so_and_exits_3(
    run_cli: Cli, card_server: CardServer
) -> None:
    anonymous = Cli(run_cli.base, None, run_cli.config)
    result = anonymous("publish", card_server.url("/card.json"))
    assert result.exit_code == 3
    assert "No token" in result.stderr and "a2a-registry login" in result.stderr
    result = anonymous("--json", "check", "6f1c9a64-0d0e-4a55-9f59-2f0a3b8c1d2e")
    assert result.exit_code == 3 and json.loads(result.stdout)["error"]["message"]
    wrong = Cli(run_cli.base, "not-a-token", run_cli.config)
    result = wrong("publish", card_server.url("/card.json"))
    assert result.exit_code == 3 and "a2a-registry login" in result.stderr
    assert anonymous("publish").exit_code == 3  # usage errors are 3 too, never click's 2
    assert (
        anonymous("--registry", "http://127.0.0.1:9", "validate", card_server.url("/x")).exit_code
        == 3
    )


def test_login_stores_the_token_readable_by_its_owner_only(run_cli: Cli) -> None:
    assert run_cli.token
    result = run_cli("login", "--token", run_cli.token, A2A_REGISTRY_TOKEN=None)
    assert result.exit_code == 0, result.output + result.stderr
    stored = run_cli.config / "a2a-registry" / "credentials.json"
    assert stat.S_IMODE(os.stat(stored).st_mode) == 0o600
    assert json.loads(stored.read_text())["registries"][run_cli.base]["token"] == run_cli.token
    printed = run_cli("login", "--token", run_cli.token, "--print")
    assert printed.stdout.strip() == f"export A2A_REGISTRY_TOKEN={run_cli.token}"
    refused = run_cli("login", "--token", "unknown-token")
    assert refused.exit_code == 3 and "login" in refused.stderr


def test_verify_origin_prints_the_challenge_and_waits_for_the_proof(
    run_cli: Cli, card_server: CardServer
) -> None:
    # Not served: the URL and body are printed, the checks fail, exit 1.
    result = run_cli("verify-origin", card_server.origin, "--timeout", "0")
    assert result.exit_code == 1, result.output + result.stderr
    assert "/.well-known/a2a-registry-challenge/" in result.stdout and "Body:" in result.stdout
    assert "not yet" in result.stderr

    code, claimed = run_cli.json("verify-origin", card_server.origin, "--timeout", "0")
    challenge = claimed["challenge"]
    card_server.serve(
        challenge["url"][len(card_server.origin) :],
        challenge["body"].encode(),
        content_type="text/plain",
    )
    code, document = run_cli.json("verify-origin", card_server.origin, "--timeout", "10")
    assert code == 0 and document["verified"] is True and document["state"] == "verified"
    again = run_cli("verify-origin", card_server.origin)
    assert again.exit_code == 0 and "already verified" in again.stdout


def test_publish_a_working_agent_then_check_it(run_cli: Cli) -> None:
    with provable(sdk) as agent:
        # Before a proof: published, the probe refused with what to do, still exit 0.
        first = run_cli("publish", agent.card_url)
        assert first.exit_code == 0, first.output + first.stderr
        assert "Proof of origin needed" in first.stdout and "verify-origin" in first.stdout

        prove(run_cli, agent)
        code, document = run_cli.json("publish", agent.card_url)
        assert code == 0, document
        assert document["created"] is False and document["validation"]["valid"] is True
        assert document["live"]["outcome"] == "pass" and document["live_not_run"] is None
        assert document["publisher"]["verified"] is True

        checked = run_cli("check", document["id"])
        assert checked.exit_code == 0, checked.output + checked.stderr
        assert "Live checks: pass" in checked.stdout


def test_publish_an_invalid_card_exits_1(run_cli: Cli, card_server: CardServer) -> None:
    url = card_server.serve("/bad/card.json", json.dumps(INVALID).encode())
    result = run_cli("publish", url)
    assert result.exit_code == 1, result.output + result.stderr
    assert "INVALID" in result.stdout
    missing = run_cli("publish", card_server.url("/nothing/card.json"))
    assert missing.exit_code == 1 and "The crawl failed" in missing.stdout


def test_an_agent_whose_live_checks_fail_exits_2(run_cli: Cli) -> None:
    with provable(wrong_error_code) as agent:
        published = run_cli("publish", agent.card_url)
        assert published.exit_code in (0, 2)  # before the proof: the crawl's own checks
        prove(run_cli, agent)
        code, document = run_cli.json("publish", agent.card_url)
        assert code == 2, document
        assert document["live"]["outcome"] == "fail"
        failing = [c for c in document["live"]["checks"] if c["outcome"] == "fail"]
        assert failing
        result = run_cli("check", document["id"])
        assert result.exit_code == 2
        assert "Live checks: fail" in result.stdout and failing[0]["id"] in result.stdout
        code, checked = run_cli.json("check", document["id"])
        assert code == 2 and checked["live"]["outcome"] == "fail"


def test_served_agents_are_distinct_origins() -> None:
    """The fixtures' agents each have their own origin (a port of their own)."""
    with provable(sdk) as one, provable(sdk) as two:
        assert isinstance(one, Served) and one.origin != two.origin
