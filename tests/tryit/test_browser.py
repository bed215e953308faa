"""The "Try it" form in a real headless Chromium (tests/test_browser.py's driver; skipped, with
the reason, where Chromium, its driver or selenium is missing): the demo Fight Club Oracle's
form drives the message preview, a bounded field shows the registry validator's error beside
it in red and in words, an example fills the form, and the owner of an opted-in a2a-sdk agent
on loopback sends and sees a completed task whose output validates. No page logs a console
error. The words, the tabs, the copy buttons and the optional fields: test_browser_words.py."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from io import StringIO
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client

from cards import crawling
from cards.models import Agent
from tests.factories import agent_from_card, minimal_card
from tests.live.agents import sdk_agent
from tests.publishers.granted import grant_endpoints
from tests.test_browser import BROWSER_MARKS, WAIT_SECONDS, browser

__all__ = ["browser"]  # the fixture, imported to be used here

pytestmark = BROWSER_MARKS

# The catalogue's red (base.html's --bad), as Chromium reports a computed colour.
RED = "rgba(207, 34, 46, 1)"
# A schema with what the form must render: bounds, an enum, a nested object, an array.
BOUT = {
    "type": "object",
    "properties": {
        "rounds": {"type": "integer", "minimum": 1, "maximum": 12, "description": "How long"},
        "style": {"type": "string", "enum": ["boxing", "wrestling"], "default": "boxing"},
        "venue": {
            "type": "object",
            "properties": {"city": {"type": "string", "title": "City"}},
        },
        "judges": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["rounds"],
}


def shoot(element: Any, name: str) -> None:
    """With TRYIT_SCREENSHOTS=<folder>, the block as docs/catalogue.md shows it (docs/img/)."""
    folder = os.environ.get("TRYIT_SCREENSHOTS")
    if folder:
        element.parent.set_window_size(1280, 2000)  # the whole block, not the first screen
        element.screenshot(os.path.join(folder, name))


def _wait(browser: Any) -> Any:
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(browser, WAIT_SECONDS)


def console_errors(browser: Any) -> list[dict[str, Any]]:
    return [e for e in browser.get_log("browser") if e.get("level") == "SEVERE"]


def snippet(block: Any, css_class: str) -> str:
    """A snippet's text, whichever tab shows (a hidden tab's text is still there)."""
    from selenium.webdriver.common.by import By

    return str(block.find_element(By.CSS_SELECTOR, f".{css_class}").get_attribute("textContent"))


def preview(block: Any) -> dict[str, Any]:
    return json.loads(snippet(block, "try-preview"))


def until(browser: Any, condition: Callable[[], Any]) -> Any:
    return _wait(browser).until(lambda _driver: condition())


def type_into(browser: Any, block: Any, name: str, text: str) -> Any:
    """Replace what the form's field ``name`` holds with ``text``, and wait for the message
    preview to show it; the field."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    field = block.find_element(By.CSS_SELECTOR, f'input[name="rjf§{name}"]')
    field.send_keys(Keys.CONTROL, "a")
    field.send_keys(text)
    until(browser, lambda: text in snippet(block, "try-preview"))
    return field


def try_hrefs(browser: Any, base: str, agent: Any) -> list[str]:
    """The "Try it" links of the agent's page (one per skill with a structured input)."""
    from selenium.webdriver.common.by import By

    browser.get(f"{base}/agents/{agent.pk}")
    return [a.get_attribute("href") for a in browser.find_elements(By.CSS_SELECTOR, "a.try-link")]


def open_try_it(browser: Any, base: str, agent: Any) -> None:
    """Open the agent's page and follow its first "Try it" link, as a reader does."""
    from selenium.webdriver.common.by import By

    browser.get(f"{base}/agents/{agent.pk}")
    links = browser.find_elements(By.CSS_SELECTOR, "a.try-link")
    assert links, "the agent page links no Try it page"
    links[0].click()


def test_the_oracle_form_drives_the_message_and_an_example_fills_it(
    browser: Any, live_server: Any
) -> None:
    from selenium.webdriver.common.by import By

    call_command("load_demo", stdout=StringIO())
    oracle = Agent.objects.get(name="Fight Club Oracle")
    open_try_it(browser, live_server.url, oracle)
    block = until(browser, lambda: browser.find_element(By.CSS_SELECTOR, ".try-block.js-form"))
    # The message follows the form: seed 000's data part, in the v1.0 form the card declares.
    type_into(browser, block, "b", "1 horse sized duck")
    message = preview(block)["params"]["message"]
    assert message["role"] == "ROLE_USER"
    assert message["parts"] == [
        {
            "data": {"a": "Lion", "b": "1 horse sized duck"},
            "mediaType": "application/json;schema=fightComparison",
        }
    ]
    assert "1 horse sized duck" in snippet(block, "try-curl")
    assert "1 horse sized duck" in snippet(block, "try-python")
    until(
        browser,
        lambda: (
            "Valid against fightComparison"
            in block.find_element(By.CSS_SELECTOR, ".try-status").text
        ),
    )
    # The skill's example, named by its values, fills the form again (in place: the link
    # goes to the page started from it only without JavaScript).
    example = block.find_element(By.CSS_SELECTOR, ".try-example")
    assert example.text == "A: Lion · B: Tiger"
    page = browser.current_url
    example.click()
    until(
        browser,
        lambda: (
            preview(block)["params"]["message"]["parts"][0]["data"] == {"a": "Lion", "b": "Tiger"}
        ),
    )
    field = block.find_element(By.CSS_SELECTOR, 'input[name="rjf§b"]')
    assert field.get_attribute("value") == "Tiger"
    assert browser.current_url == page
    shoot(block, "try-it-oracle.png")
    assert console_errors(browser) == []


def test_a_bounded_field_shows_the_validators_error_beside_it(
    browser: Any, live_server: Any
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    card = minimal_card(name="Bout Planner")
    card["schemas"] = {"bout": BOUT}
    card["skills"] = [
        {
            "id": "plan",
            "name": "Plan a bout",
            "description": "Plans a bout.",
            "tags": [],
            "examples": ['{"rounds": 3, "style": "boxing"}'],
            "inputModes": ["application/json;schema=bout"],
            "outputModes": ["text/plain"],
        }
    ]
    agent = agent_from_card(card)
    open_try_it(browser, live_server.url, agent)
    block = until(browser, lambda: browser.find_element(By.CSS_SELECTOR, ".try-block.js-form"))
    # The nested object, the enum and the array are rendered by the library.
    assert block.find_elements(By.CSS_SELECTOR, "select")
    rounds = block.find_element(By.CSS_SELECTOR, 'input[name="rjf§rounds"]')
    rounds.send_keys(Keys.CONTROL, "a")
    rounds.send_keys("99")
    errors = block.find_element(By.CSS_SELECTOR, ".try-errors")
    # In words, by the field's label: no pointer, no "validation error(s)".
    until(browser, lambda: errors.text == "Rounds must be at most 12.")
    status = block.find_element(By.CSS_SELECTOR, ".try-status").text
    assert status == "Not valid yet: one thing to fix."
    # Beside the field itself, in red, and the field has a red border.
    row = rounds.find_element(By.XPATH, "ancestor::div[contains(@class, 'rjf-form-row')][1]")
    until(browser, lambda: "Must be at most 12." in row.text)
    message = row.find_element(By.CSS_SELECTOR, ".rjf-error-text")
    assert message.value_of_css_property("color") == RED
    assert rounds.value_of_css_property("border-top-color") == RED
    assert errors.value_of_css_property("color") == RED
    # The required field is marked, and the page says what the mark means.
    label = row.find_element(By.CSS_SELECTOR, "label")
    mark = browser.execute_script(
        "return getComputedStyle(arguments[0], '::after').content;", label
    )
    assert mark == '" *"'
    assert "Fields marked * are required" in block.text
    shoot(block, "try-it-bounds.png")
    assert console_errors(browser) == []


def test_the_owner_sends_and_sees_a_completed_task_with_its_output_validated(
    browser: Any, live_server: Any, settings: Any, loopback_allowed: None
) -> None:
    from selenium.webdriver.common.by import By

    settings.REGISTRY_LIVE_READ_TIMEOUT = 3.0
    owner = get_user_model().objects.create_user("alice", password="correct horse battery")
    session = Client()
    session.force_login(owner)
    with sdk_agent() as running:
        row = Agent.objects.create(
            url=running.card_url, card_url=running.card_url, submitted_by=owner, probe_messages=True
        )
        assert crawling.agent_crawl(agent_id=row.pk) == "stored"
        grant_endpoints(row)  # its owner proved the origins it reaches (issue 44)
        browser.get(f"{live_server.url}/favicon.ico")
        browser.add_cookie({"name": "sessionid", "value": session.cookies["sessionid"].value})
        open_try_it(browser, live_server.url, row)
        block = until(browser, lambda: browser.find_element(By.CSS_SELECTOR, ".try-block.js-form"))
        block.find_element(By.CSS_SELECTOR, ".try-send").click()
        answer = until(
            browser,
            lambda: (
                block.find_element(By.CSS_SELECTOR, ".try-answer .try-state")
                if block.find_elements(By.CSS_SELECTOR, ".try-answer .try-state")
                else None
            ),
        )
        assert answer.text == "Task state: Completed"
        verdict = block.find_element(By.CSS_SELECTOR, ".try-answer strong.try-valid")
        assert "valid against fightVerdict" in verdict.text
        assert len(running.received) == 1
        shoot(block, "try-it-send.png")
    assert console_errors(browser) == []


def test_a_schema_the_library_refuses_falls_back_to_the_json_editor(
    browser: Any, live_server: Any
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    # react-json-form refuses allOf inside array items: the page says so and edits JSON.
    tags = {"type": "array", "items": {"allOf": [{"type": "string"}, {"minLength": 1}]}}
    card = minimal_card(name="Tagger")
    card["schemas"] = {"tags": {"type": "object", "properties": {"tags": tags}}}
    card["skills"] = [
        {
            "id": "tag",
            "name": "Tag",
            "description": "Tags.",
            "tags": [],
            "examples": ['{"tags": ["a"]}'],
            "inputModes": ["application/json;schema=tags"],
            "outputModes": ["text/plain"],
        }
    ]
    agent = agent_from_card(card)
    open_try_it(browser, live_server.url, agent)
    block = until(browser, lambda: browser.find_element(By.CSS_SELECTOR, ".try-block"))
    reason = until(
        browser,
        lambda: (
            block.find_element(By.CSS_SELECTOR, ".try-reason")
            if block.find_element(By.CSS_SELECTOR, ".try-reason").is_displayed()
            else None
        ),
    )
    assert "cannot render this schema" in reason.text and "allOf" in reason.text
    editor = block.find_element(By.CSS_SELECTOR, ".try-json")
    assert json.loads(editor.get_attribute("value")) == {"tags": ["a"]}  # seeded from the example
    editor.send_keys(Keys.CONTROL, "a")
    editor.send_keys('{"tags": ["b", 7]}')
    until(
        browser,
        lambda: preview(block)["params"]["message"]["parts"][0]["data"] == {"tags": ["b", 7]},
    )
    until(
        browser,
        lambda: (
            block.find_element(By.CSS_SELECTOR, ".try-errors").text == "Tags › item 2 must be text."
        ),
    )
    assert console_errors(browser) == []


def test_a_skill_with_input_fields_gets_a_form_that_drives_the_message(
    browser: Any, live_server: Any
) -> None:
    """Seed 001's Book Review skill (two text fields, no schema'd input mode): the form from
    the composed schema, a plain application/json data part, the validator called with the
    skill, and a required field left empty shows its error in its own row."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    from tests.schemas.test_fields import REVIEW_SKILL

    agent = agent_from_card(minimal_card(name="Book Review Agent", skills=[REVIEW_SKILL]))
    open_try_it(browser, live_server.url, agent)
    block = until(browser, lambda: browser.find_element(By.CSS_SELECTOR, ".try-block.js-form"))
    type_into(browser, block, "bookTitle", "Charlotte's Web")
    part = preview(block)["params"]["message"]["parts"][0]
    assert part["mediaType"] == "application/json"
    assert part["data"]["bookTitle"] == "Charlotte's Web"
    until(
        browser,
        lambda: (
            "Valid against the skill's inputFields"
            in block.find_element(By.CSS_SELECTOR, ".try-status").text
        ),
    )
    author = block.find_element(By.CSS_SELECTOR, 'input[name="rjf§authorName"]')
    author.send_keys(Keys.CONTROL, "a")
    author.send_keys(Keys.DELETE)
    until(
        browser,
        lambda: (
            block.find_element(By.CSS_SELECTOR, ".try-errors").text
            == "authorName must not be empty."
        ),
    )
    row = author.find_element(By.XPATH, "ancestor::div[contains(@class, 'rjf-form-row')][1]")
    until(browser, lambda: "Must not be empty." in row.text)
    assert block.find_element(By.CSS_SELECTOR, ".try-status").text == (
        "Not valid yet: one thing to fix."
    )
    shoot(block, "try-it-fields.png")
    assert console_errors(browser) == []


@pytest.mark.parametrize("name", ["030-faculty-object-schemas-ext-example.json", "demo"])
def test_every_card_with_schemas_renders_a_form_without_console_errors(
    browser: Any, live_server: Any, name: str
) -> None:
    """The corpus card with schemas (shared/corpus) and the demo agents: a form or the
    documented fallback in every block, and a quiet console."""
    from selenium.webdriver.common.by import By

    from tests.support import CORPUS

    if name == "demo":
        call_command("load_demo", stdout=StringIO())
        agents = list(Agent.objects.all())
    else:
        path = CORPUS / name
        if not path.is_file():
            pytest.skip(f"{path} is not there")
        agents = [agent_from_card(path.read_bytes())]
    seen = 0
    pages = [href for agent in agents for href in try_hrefs(browser, live_server.url, agent)]
    for href in pages:
        browser.get(href)
        for block in browser.find_elements(By.CSS_SELECTOR, ".try-block"):
            seen += 1
            until(
                browser,
                lambda block=block: (
                    block.find_elements(By.CSS_SELECTOR, ".rjf-form-wrapper input")
                    or block.find_element(By.CSS_SELECTOR, ".try-reason").is_displayed()
                ),
            )
        assert console_errors(browser) == [], href
    assert seen >= 1
