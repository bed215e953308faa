""" "Try it" that looks finished (issue 47, item 2), in a real headless Chromium: optional fields
nobody filled in stay out of the message, the message is shown once with tabs (stacked without
JavaScript) and a copy button on each snippet, and the form library's stylesheet finds every
colour it asks for. Skipped, with the reason, where Chromium, its driver or selenium is missing
(tests/test_browser.py)."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from cards.models import Agent
from tests.factories import agent_from_card, minimal_card
from tests.test_browser import BROWSER_MARKS, browser
from tests.tryit.test_browser import (
    RED,
    console_errors,
    open_try_it,
    preview,
    shoot,
    snippet,
    type_into,
    until,
)

__all__ = ["browser"]

pytestmark = BROWSER_MARKS

# A parcel: one required field, and optional ones the form library fills with "", null or []
# until someone types: a postcode with a minLength and a pattern, a number, a choice, a list
# and a nested group.
PARCEL = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "title": "City"},
        "postcode": {"type": "string", "minLength": 4, "pattern": "^[0-9]+$"},
        "weight": {"type": "number", "minimum": 0},
        "speed": {"type": "string", "enum": ["standard", "express"]},
        "notes": {"type": "array", "items": {"type": "string"}},
        "sender": {
            "type": "object",
            "properties": {"name": {"type": "string", "minLength": 2}},
            "required": ["name"],
        },
    },
    "required": ["city"],
}


def parcel_agent() -> Agent:
    card = minimal_card(name="Parcel Tracker")
    card["schemas"] = {"parcel": PARCEL}
    card["skills"] = [
        {
            "id": "track",
            "name": "Track a parcel",
            "description": "Tracks a parcel.",
            "tags": [],
            "inputModes": ["application/json;schema=parcel"],
            "outputModes": ["text/plain"],
        }
    ]
    return agent_from_card(card)


def data(block: Any) -> Any:
    return preview(block)["params"]["message"]["parts"][0]["data"]


def test_optional_fields_left_empty_stay_out_of_the_message(browser: Any, live_server: Any) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    open_try_it(browser, live_server.url, parcel_agent())
    block = until(browser, lambda: browser.find_element(By.CSS_SELECTOR, ".try-block.js-form"))
    status = block.find_element(By.CSS_SELECTOR, ".try-status")
    errors = block.find_element(By.CSS_SELECTOR, ".try-errors")
    type_into(browser, block, "city", "Porto")
    # Not "postcode": "" (which fails its minLength and pattern), no null weight or speed, no
    # empty list, no half-filled sender.
    until(browser, lambda: data(block) == {"city": "Porto"})
    until(browser, lambda: status.text == "Valid against parcel.")
    assert '"postcode"' not in snippet(block, "try-curl")
    assert '"postcode"' not in snippet(block, "try-python")
    # Filled in, an optional field is sent and checked, its errors in words.
    postcode = type_into(browser, block, "postcode", "ab12")
    until(browser, lambda: errors.text == "Postcode must match the pattern ^[0-9]+$.")
    postcode.send_keys(Keys.CONTROL, "a")
    postcode.send_keys("12")
    until(browser, lambda: errors.text == "Postcode must be at least 4 characters long.")
    row = postcode.find_element(By.XPATH, "ancestor::div[contains(@class, 'rjf-form-row')][1]")
    until(browser, lambda: "Must be at least 4 characters long." in row.text)
    assert postcode.value_of_css_property("border-top-color") == RED
    # Emptied again, it is left out again.
    postcode.send_keys(Keys.CONTROL, "a")
    postcode.send_keys(Keys.DELETE)
    until(browser, lambda: data(block) == {"city": "Porto"})
    until(browser, lambda: status.text == "Valid against parcel." and errors.text == "")
    # A required field emptied stays in the message, and is said to be missing.
    city = block.find_element(By.CSS_SELECTOR, 'input[name="rjf§city"]')
    city.send_keys(Keys.CONTROL, "a")
    city.send_keys(Keys.DELETE)
    until(browser, lambda: data(block) == {"city": ""})
    assert console_errors(browser) == []


def test_the_message_is_shown_once_with_tabs_and_each_snippet_copies(
    browser: Any, live_server: Any
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    agent = parcel_agent()
    browser.get(f"{live_server.url}/favicon.ico")
    browser.execute_cdp_cmd(
        "Browser.grantPermissions",
        {
            "origin": live_server.url,
            "permissions": ["clipboardReadWrite", "clipboardSanitizedWrite"],
        },
    )
    open_try_it(browser, live_server.url, agent)
    block = until(browser, lambda: browser.find_element(By.CSS_SELECTOR, ".try-block.js-form"))
    tabs = block.find_elements(By.CSS_SELECTOR, "[role=tab]")
    assert [tab.text for tab in tabs] == ["JSON", "curl", "Python"]
    panels = block.find_elements(By.CSS_SELECTOR, "[role=tabpanel]")
    assert [panel.is_displayed() for panel in panels] == [True, False, False]
    # One message on the screen at a time, and no heading that repeats the tab's name.
    assert len([pre for pre in block.find_elements(By.CSS_SELECTOR, "pre") if pre.is_displayed()])
    assert not any(title.is_displayed() for title in block.find_elements(By.TAG_NAME, "h4")[:3])
    tabs[1].click()
    assert [panel.is_displayed() for panel in panels] == [False, True, False]
    assert tabs[1].get_attribute("aria-selected") == "true"
    # The arrow keys move between tabs.
    tabs[1].send_keys(Keys.ARROW_RIGHT)
    assert [panel.is_displayed() for panel in panels] == [False, False, True]
    assert browser.switch_to.active_element == tabs[2]
    # The copy button copies the snippet as shown.
    copy = panels[2].find_element(By.CSS_SELECTOR, ".try-copy")
    copy.click()
    until(browser, lambda: copy.text == "Copied")
    copied = browser.execute_async_script(
        "navigator.clipboard.readText().then(arguments[0], (e) => arguments[0]('! ' + e));"
    )
    assert copied == snippet(block, "try-python")
    assert copied.startswith("import asyncio")
    assert console_errors(browser) == []


def test_without_javascript_the_three_forms_are_stacked(browser: Any, live_server: Any) -> None:
    from selenium.webdriver.common.by import By

    agent = parcel_agent()
    browser.execute_cdp_cmd("Emulation.setScriptExecutionDisabled", {"value": True})
    open_try_it(browser, live_server.url, agent)
    block = browser.find_element(By.CSS_SELECTOR, ".try-block")
    assert not block.find_elements(By.CSS_SELECTOR, "[role=tab]")
    sections = block.find_elements(By.CSS_SELECTOR, ".try-tab")
    assert [s.find_element(By.TAG_NAME, "h4").text for s in sections] == [
        "The A2A message (JSON)",
        "curl",
        "Python (a2a-sdk)",
    ]
    assert all(section.is_displayed() for section in sections)
    # No button that could not work.
    assert not any(b.is_displayed() for b in block.find_elements(By.CSS_SELECTOR, ".try-copy"))


def test_every_colour_the_form_library_asks_for_is_defined(browser: Any, live_server: Any) -> None:
    """django-jsonform's stylesheet is the Django admin's: each var(--name) it uses has a value
    on the catalogue's page (tryit/static/tryit/try-it.css gives the admin's names ours)."""
    import django_jsonform
    from selenium.webdriver.common.by import By

    sheet = Path(django_jsonform.__file__).parent / "static" / "django_jsonform" / "style.css"
    names = sorted(set(re.findall(r"var\((--[\w-]+)", sheet.read_text())))
    assert "--error-fg" in names and len(names) > 10
    open_try_it(browser, live_server.url, parcel_agent())
    block = until(browser, lambda: browser.find_element(By.CSS_SELECTOR, ".try-block.js-form"))
    missing = browser.execute_script(
        "const style = getComputedStyle(document.documentElement);"
        "return arguments[0].filter((name) => !style.getPropertyValue(name).trim());",
        names,
    )
    assert missing == []
    if os.environ.get("TRYIT_SCREENSHOTS"):
        type_into(browser, block, "city", "Porto")
        status = block.find_element(By.CSS_SELECTOR, ".try-status")
        until(browser, lambda: status.text == "Valid against parcel.")
        shoot(block, "try-it-optional.png")
