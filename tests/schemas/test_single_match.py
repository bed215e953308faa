"""One regular-expression match is bounded, not only the matches of a request (issue 35, item 1).

The schema budget is checked between matches; one match of a look-around pattern over a long
string rescans the rest of the string from every start, and nothing stops it once started.
Before the bound, anonymous ``POST /api/v1/validate`` with ``(?=.*x)y`` and a 240,000-character
example cost 41.5 s of CPU (60,000 characters: 7.7 s), the same through ``patternProperties``
keys and ``propertyNames``, and a 78 KB card's crawl 13.9 s. Now a text longer than a pattern's
length cap (``schemas_app.regex_cost``) is not matched and is reported as not evaluated.
"""

from __future__ import annotations

import json
import random
import time
from typing import Any

import pytest
from rest_framework.test import APIClient

from cards.models import Agent
from cards.tasks import crawl_agent
from schemas_app import budget, regex_cost
from schemas_app.analysis import analyse_schema
from schemas_app.compat import classify
from schemas_app.validation import error_items, validators
from tests.factories import agent_from_card
from tests.schemas.cards import by_code, schema_card
from tests.schemas.test_budget import REQUEST_CPU, owned, post, timed
from tests.support import CardServer

pytestmark = pytest.mark.django_db

LOOK = "(?=.*x)y"
VALUE = {"type": "object", "properties": {"q": {"type": "string", "pattern": LOOK}}}
KEYS = {"type": "object", "patternProperties": {LOOK: {"type": "integer"}}}
NAMES = {"type": "object", "propertyNames": {"pattern": LOOK}}


def agent_from_schema(name: str, schema: Any) -> Agent:
    return agent_from_card(schema_card({name: schema}))


def evaluate(schema: Any, instance: Any) -> list[Any]:
    validator = analyse_schema(schema).validator()
    with budget.scope():
        return error_items(validator, instance)


def test_weights_and_lengths_follow_the_pattern() -> None:
    assert regex_cost.weight(LOOK) == 4 and regex_cost.max_input(LOOK) == 256
    # A counted repetition multiplies what it repeats; nested ones multiply again.
    assert regex_cost.weight("(?<=a.{64}b.*)y") == 70
    assert regex_cost.weight("(?:a{10}){10}") == 110  # "?:" counts as an atom: 10 * (1 + 10)
    assert regex_cost.weight(r"\p{L}[a-z]\w") == 8
    assert regex_cost.max_input("(?<=a.{64}b.*)y") == 98  # so that n**3 * weight stays put
    # The linear engine: light patterns run on any length, heavy ones on n * weight.
    assert regex_cost.max_input("^[a-z0-9-]+$") is None
    assert regex_cost.max_input("a.{20}x") == 19_065  # bytes of UTF-8: the engine reads bytes
    assert not regex_cost.limited("^[a-z]{2}$") and regex_cost.limited("a.{1000}x")


@pytest.mark.parametrize(
    ("schema", "instance", "kind"),
    [
        (VALUE, {"q": "a" * 240_000}, "string"),
        ({"not": VALUE}, {"q": "a" * 240_000}, "string"),  # refused, never valid by negation
        ({"anyOf": [VALUE, {"type": "null"}]}, {"q": "a" * 60_000}, "string"),
        (KEYS, {"a" * 60_000: 1}, "member name"),
        (NAMES, {"a" * 60_000: 1}, "string"),
    ],
)
def test_a_text_too_long_for_one_match_is_not_evaluated(
    schema: Any, instance: Any, kind: str
) -> None:
    started = time.process_time()
    with pytest.raises(budget.InputTooLong) as raised:
        evaluate(schema, instance)
    assert time.process_time() - started < 0.1
    problem = raised.value
    assert problem.status == 422 and problem.slug == "schema-budget-exhausted"
    assert problem.extra["max_input"] == 256
    assert f"a {kind} of " in problem.detail and "'(?=.*x)y'" in problem.detail
    assert "not evaluated" in problem.detail


def test_outside_a_request_a_long_text_is_still_refused() -> None:
    validator = analyse_schema({"not": VALUE}).validator()
    with pytest.raises(budget.InputTooLong):
        error_items(validator, {"q": "a" * 1_000})


def test_texts_within_the_cap_are_matched_as_before() -> None:
    assert evaluate(VALUE, {"q": "y" + "a" * 254 + "x"}) == []
    [error] = evaluate(VALUE, {"q": "a" * 256})
    assert error.keyword == "pattern" and error.pointer == "/q"
    assert evaluate(KEYS, {"b" * 200 + "yx": 1, "short": "not checked"}) == []
    assert evaluate(KEYS, {"yx": "not an integer"})[0].pointer == "/yx"
    assert evaluate(NAMES, {"yx": 1, "ayx": 2}) == []
    assert evaluate(NAMES, {"ab": 1})[0].keyword == "pattern"


def test_many_member_names_for_a_look_around_key_spend_the_budget_before_the_call() -> None:
    # 150 names of 250 characters: each within the cap, together over what the budget can pay
    # for when each match may cost its worst (jsonschema-rs matches them without calling back).
    names = {f"{i:03d}" + "a" * 247: 1 for i in range(150)}
    with pytest.raises(budget.BudgetExhausted) as raised:
        evaluate(KEYS, names)
    assert not isinstance(raised.value, budget.InputTooLong)
    assert evaluate(KEYS, {f"{i:03d}" + "a" * 20: 1 for i in range(150)}) == []


def test_on_the_linear_engine_the_cap_counts_utf8_bytes() -> None:
    # The regex crate reads bytes: 6,000 four-byte characters are 24,000 bytes.
    heavy = {"properties": {"q": {"pattern": "a.{20}x"}}}
    with pytest.raises(budget.InputTooLong) as raised:
        evaluate(heavy, {"q": "\U0001f600" * 6_000})
    assert "24,000 bytes of UTF-8" in raised.value.detail and raised.value.extra["unit"] == "bytes"
    assert evaluate(heavy, {"q": "\U0001f600" * 4_000 + "a" + "b" * 20 + "x"}) == []
    assert evaluate({"properties": {"q": {"pattern": "^[a-z]+$"}}}, {"q": "a" * 2_000_000}) == []


def test_the_cap_is_a_setting(settings: Any) -> None:
    settings.REGISTRY_SCHEMA_REGEX_MAX_INPUT = 1_000
    validators.clear()
    try:
        assert regex_cost.max_input(LOOK) == 1_000
        assert evaluate(VALUE, {"q": "y" + "a" * 998 + "x"}) == []
        with pytest.raises(budget.InputTooLong):
            evaluate(VALUE, {"q": "a" * 1_001})
    finally:
        validators.clear()


def test_the_issue_card_on_validate_is_answered_at_once_with_a_finding() -> None:
    # The issue's reproduction: a 235 KiB card, one example of 240,000 characters (41.5 s).
    card = schema_card({"looks": VALUE})
    card["skills"][0]["examples"] = [
        json.dumps({"q": "a" * 240_000}),
        json.dumps({"q": "ayx"}),
        json.dumps({"q": "b"}),
    ]
    assert 234 * 1024 < len(json.dumps(card)) < 236 * 1024
    response, cpu = timed(lambda: post(APIClient(), "/api/v1/validate", {"card": card}))
    assert response.status_code == 200 and cpu < REQUEST_CPU, (response.status_code, cpu)
    findings = response.json()["validation"]["findings"]
    [stopped] = by_code(findings, "schema.budget-exhausted")
    assert stopped["pointer"] == "/skills/0/examples/0"
    assert "240,000 characters" in stopped["message"] and "256" in stopped["message"]
    # The next examples are still checked: the budget was not spent.
    [invalid] = by_code(findings, "skill.example-invalid")
    assert invalid["pointer"] == "/skills/0/examples/2"


@pytest.mark.parametrize("name", ["value", "keys", "names"])
def test_stored_look_around_schemas_refuse_long_texts_on_validate_payload(name: str) -> None:
    schema = {"value": VALUE, "keys": KEYS, "names": NAMES}[name]
    payload = {"q": "a" * 60_000} if name == "value" else {"a" * 60_000: 1}
    agent = owned(agent_from_schema(name, schema))
    path = f"/api/v1/agents/{agent.pk}/validate-payload"
    response, cpu = timed(lambda: post(APIClient(), path, {"schema": name, "payload": payload}))
    assert response.status_code == 422 and cpu < REQUEST_CPU, (response.status_code, cpu)
    assert response.json()["type"] == "/problems/schema-budget-exhausted"
    assert "60,000 characters" in response.json()["detail"]
    short = {"q": "ayx"} if name == "value" else {"ayx": 1}
    answer = post(APIClient(), path, {"schema": name, "payload": short}).json()
    assert answer["outcome"] == "valid", answer


def test_a_heavy_pattern_on_the_linear_engine_is_bounded_too() -> None:
    # No look-around, so the linear engine; but its DFA outgrows the cache on random text and the
    # regex crate simulates the NFA: 60,000 characters cost about 5 s in one match.
    heavy = {
        "type": "object",
        "properties": {"q": {"type": "string", "pattern": "(?:a|b).{4000}x"}},
    }
    agent = owned(agent_from_schema("heavy", heavy))
    text = "".join(random.Random(1).choice("ab") for _ in range(60_000))
    path = f"/api/v1/agents/{agent.pk}/validate-payload"
    response, cpu = timed(
        lambda: post(APIClient(), path, {"schema": "heavy", "payload": {"q": text}})
    )
    assert response.status_code == 422 and cpu < REQUEST_CPU, (response.status_code, cpu)
    assert response.json()["max_input"] == regex_cost.max_input("(?:a|b).{4000}x")


def test_a_compatibility_verdict_on_a_long_property_name_is_unknown() -> None:
    old = {"type": "object", "patternProperties": {LOOK: {"type": "string"}}}
    new = {**old, "properties": {"a" * 60_000: {"type": "string"}}}
    started = time.process_time()
    verdict = classify(old, new, "input")
    assert time.process_time() - started < 0.5
    assert verdict.verdict == "unknown" and verdict.reasons[0]["type"] == "TOO_COMPLEX"
    short = {**old, "properties": {"ayx": {"type": "string"}}}
    assert classify(old, short, "input").verdict == "compatible"


def test_a_crawl_of_a_78_kb_card_is_bounded_and_stored_with_the_finding(
    card_server: CardServer, loopback_allowed: None
) -> None:
    card = schema_card({"looks": VALUE})
    card["skills"][0]["examples"] = [json.dumps({"q": "a" * 75_000})]
    body = json.dumps(card).encode()
    assert 75_000 < len(body) < 80_000
    url = card_server.serve("/looks.json", body)
    agent = owned(Agent.objects.create(url=url, card_url=url))
    outcome, cpu = timed(lambda: crawl_agent.apply(args=[str(agent.pk)]).get())
    assert cpu < 5.0, cpu  # was 13.9 s of worker CPU (issue 35)
    agent.refresh_from_db()
    assert agent.latest_snapshot_id is not None, outcome
    [stopped] = by_code(agent.findings, "schema.budget-exhausted")
    assert "75,000 characters" in stopped["message"]
