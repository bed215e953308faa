"""The catalogue on a phone and on a desktop, in a real headless Chromium (issue 47, item 1):
results on the first screen of the home page and of a search at 390 x 844, the filters folded
there and beside the results at 1280, and the live checks' table reflowed so its main column
keeps its width and its words whole. The pages run no script (their Content-Security-Policy
allows none), so all of it works without JavaScript.

With CATALOGUE_SCREENSHOTS=<folder> the tests save the screenshots docs/catalogue.md shows
(docs/img/phone/). Skipped, with the reason, where Chromium, its driver or selenium is missing
(tests/test_browser.py).
"""

from __future__ import annotations

import datetime as dt
import os
from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command

from cards.models import Agent
from cards.rendering.store import agent_changed
from live.report import FAIL, MUST, PASS, SHOULD, Check
from tests.factories import agent_from_card, minimal_card
from tests.live_reports import exchange, record
from tests.test_browser import BROWSER_MARKS, WAIT_SECONDS, browser

__all__ = ["browser"]

pytestmark = BROWSER_MARKS

PHONE = (390, 844)
DESKTOP = (1280, 900)
# The first result's top must be on the first screen of a phone, with room to read it.
FIRST_SCREEN = 700
# The live checks' main column on a phone: room for a sentence, not 70 px.
MAIN_COLUMN = 250

TOP_OF = "return arguments[0].getBoundingClientRect().top + window.scrollY;"
WIDTH_OF = "return arguments[0].getBoundingClientRect().width;"
# Whether the element is what the screen shows at its centre (drawn, on top, not folded away).
HIT = """
const rect = arguments[0].getBoundingClientRect();
if (!rect.width || !rect.height) return false;
arguments[0].scrollIntoView({block: "center"});
const moved = arguments[0].getBoundingClientRect();
const found = document.elementFromPoint(moved.x + moved.width / 2, moved.y + moved.height / 2);
return found !== null && (found === arguments[0] || arguments[0].contains(found));
"""
# The words of an element's text that a line break cuts in two (each word's rectangles: one
# line box each, so a word on two lines has two).
BROKEN_WORDS = """
const broken = [];
const walker = document.createTreeWalker(arguments[0], NodeFilter.SHOW_TEXT);
for (let node = walker.nextNode(); node; node = walker.nextNode()) {
  const pattern = /\\S+/g;
  for (let found = pattern.exec(node.data); found; found = pattern.exec(node.data)) {
    const range = document.createRange();
    range.setStart(node, found.index);
    range.setEnd(node, found.index + found[0].length);
    const tops = new Set([...range.getClientRects()].map((rect) => Math.round(rect.top)));
    if (tops.size > 1) broken.push(found[0]);
  }
}
return broken;
"""


def viewport(browser: Any, size: tuple[int, int]) -> None:
    width, height = size
    browser.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 800},
    )


def shoot(browser: Any, name: str) -> None:
    """With CATALOGUE_SCREENSHOTS=<folder>, the first screen as the docs show it."""
    folder = os.environ.get("CATALOGUE_SCREENSHOTS")
    if folder:
        os.makedirs(folder, exist_ok=True)
        browser.execute_script("window.scrollTo(0, 0);")
        browser.save_screenshot(os.path.join(folder, name))


def shoot_element(element: Any, name: str) -> None:
    folder = os.environ.get("CATALOGUE_SCREENSHOTS")
    if folder:
        os.makedirs(folder, exist_ok=True)
        element.screenshot(os.path.join(folder, name))


@pytest.fixture
def catalogue() -> list[Agent]:
    """The demo agents, six featured agents (the strip a phone must not put first) and more,
    so the list is longer than a screen."""
    call_command("load_demo", stdout=StringIO())
    extra = [
        agent_from_card(
            minimal_card(
                name=f"Helper agent {number}",
                description="Answers questions about timetables, weather and parcels. " * 3,
            )
        )
        for number in range(8)
    ]
    for agent in extra[:6]:
        Agent.objects.filter(pk=agent.pk).update(moderation=Agent.Moderation.FEATURED)
        agent_changed(agent.pk)
    return list(Agent.objects.all())


def first_result(browser: Any) -> Any:
    from selenium.webdriver.common.by import By

    return browser.find_element(By.CSS_SELECTOR, "ol.results > li")


@pytest.mark.parametrize("path", ["/", "/?q=weather"], ids=["home", "search"])
def test_results_start_on_the_first_screen_of_a_phone_with_the_filters_folded(
    browser: Any, live_server: Any, catalogue: list[Agent], path: str
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    viewport(browser, PHONE)
    browser.get(live_server.url + path)
    top = browser.execute_script(TOP_OF, first_result(browser))
    assert top < FIRST_SCREEN, f"the first result starts at {top:.0f}px on a phone"
    # Folded: the filters' fields are not shown until the reader opens them, and there is no
    # horizontal scrolling.
    filters = browser.find_element(By.ID, "filters")
    assert filters.get_attribute("open") is None
    field = browser.find_element(By.ID, "input_mode")
    assert not field.is_displayed()
    width = browser.execute_script("return document.documentElement.scrollWidth;")
    assert width <= PHONE[0], f"the page is {width}px wide on a {PHONE[0]}px screen"
    name = "home" if path == "/" else "search"
    shoot(browser, f"{name}-390.png")
    if path == "/":
        # The featured strip follows the results on a phone.
        featured = browser.find_element(By.CSS_SELECTOR, ".featured-block")
        assert browser.execute_script(TOP_OF, featured) > top
    # Opened, they filter: their fields belong to the search form, so the words stay.
    filters.find_element(By.TAG_NAME, "summary").click()
    assert field.is_displayed()
    field.send_keys("text/plain")
    browser.find_element(By.CSS_SELECTOR, "#filters button[type=submit]").click()
    WebDriverWait(browser, WAIT_SECONDS).until(lambda b: "input_mode=" in b.current_url)
    assert "input_mode=text%2Fplain" in browser.current_url
    if path != "/":
        assert "q=weather" in browser.current_url
    assert browser.find_element(By.CSS_SELECTOR, ".chips").text.count("input: text/plain") == 1


@pytest.mark.parametrize("path", ["/", "/?q=weather"], ids=["home", "search"])
def test_on_a_desktop_the_filters_stand_beside_the_results(
    browser: Any, live_server: Any, catalogue: list[Agent], path: str
) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    viewport(browser, DESKTOP)
    browser.get(live_server.url + path)
    shoot(browser, f"{'home' if path == '/' else 'search'}-1280.png")
    result = first_result(browser)
    assert browser.execute_script(TOP_OF, result) < DESKTOP[1]
    # Shown without opening anything (no summary to open), in a column left of the results:
    # what is drawn at a field's centre is the field, and a click there types into it.
    field = browser.find_element(By.ID, "input_mode")
    assert browser.execute_script(HIT, field), "the filters are not shown on a desktop"
    assert not browser.find_element(By.CSS_SELECTOR, "#filters > summary").is_displayed()
    column = browser.find_element(By.CSS_SELECTOR, ".filters-body").rect
    assert column["x"] + column["width"] <= result.rect["x"]
    facet = browser.find_element(By.CSS_SELECTOR, ".facet li a")
    assert browser.execute_script(HIT, facet)
    ActionChains(browser).move_to_element(field).click().send_keys("text/plain").perform()
    apply = browser.find_element(By.CSS_SELECTOR, "#filters button[type=submit]")
    ActionChains(browser).move_to_element(apply).click().perform()
    WebDriverWait(browser, WAIT_SECONDS).until(lambda b: "input_mode=" in b.current_url)
    assert "input_mode=text%2Fplain" in browser.current_url


def checked_agent() -> Agent:
    """An agent whose last live run has long titles, details and exchanges."""
    agent = agent_from_card(minimal_card(name="Checked agent"))
    long_answer = (
        b'{"jsonrpc": "2.0", "id": 2, "result": {"kind": "task", "id": "task-0001", '
        b'"status": {"state": "TASK_STATE_COMPLETED", "message": "everything went fine"}}}'
    )
    checks = [
        Check(
            id="CORE-SEND-001",
            title="SendMessage with a text part returns a task or a message",
            level=MUST,
            outcome=PASS,
            detail="a task in state TASK_STATE_COMPLETED, with one artifact of two parts",
            interface="https://agent.example.com/a2a/with/a/rather/long/path/segments",
            exchange=exchange(
                '{"jsonrpc": "2.0", "id": 2, "method": "SendMessage", "params": {"message": '
                '{"role": "ROLE_USER", "parts": [{"text": "registry conformance check"}]}}}',
                long_answer,
            ),
        ),
        Check(
            id="REG-JSONRPC-METHOD",
            title="An unknown JSON-RPC method returns the error Method not found",
            level=SHOULD,
            outcome=FAIL,
            detail="expected error -32601 (Method not found), got a result instead",
            interface="https://agent.example.com/a2a",
            exchange=exchange('{"jsonrpc": "2.0", "id": 3, "method": "nope"}', long_answer),
        ),
    ]
    record(agent, checks, at=dt.datetime(2026, 11, 20, 8, 30, tzinfo=dt.UTC))
    return agent


@pytest.mark.parametrize("size", [PHONE, DESKTOP], ids=["390", "1280"])
def test_the_live_checks_table_keeps_its_main_column_and_whole_words(
    browser: Any, live_server: Any, size: tuple[int, int]
) -> None:
    from selenium.webdriver.common.by import By

    agent = checked_agent()
    viewport(browser, size)
    browser.get(f"{live_server.url}/agents/{agent.pk}#live-checks")
    table = browser.find_element(By.ID, "live-checks")
    main = table.find_elements(By.CSS_SELECTOR, "td.what")
    assert len(main) == 2
    for cell in main:
        width = browser.execute_script(WIDTH_OF, cell)
        assert width >= MAIN_COLUMN, f"the main column is {width:.0f}px wide at {size[0]}px"
        for text in cell.find_elements(By.CSS_SELECTOR, ".check-title, .check-detail"):
            assert browser.execute_script(BROKEN_WORDS, text) == []
    # The excerpts, opened, take the column's width and stay inside their own box.
    for summary in table.find_elements(By.CSS_SELECTOR, "details > summary"):
        summary.click()
    for excerpt in table.find_elements(By.CSS_SELECTOR, "pre"):
        assert browser.execute_script(WIDTH_OF, excerpt) >= MAIN_COLUMN - 20
    page_width = browser.execute_script("return document.documentElement.scrollWidth;")
    assert page_width <= size[0], f"the page is {page_width}px wide at {size[0]}px"
    if size == PHONE:
        # Each check is a block of its own: its cells one under the other.
        rows = table.find_elements(By.CSS_SELECTOR, "tr")
        assert rows[0].value_of_css_property("display") == "block"
    shoot_element(table, f"live-checks-{size[0]}.png")


def test_the_try_it_page_fits_a_phone(
    browser: Any, live_server: Any, catalogue: list[Agent]
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    oracle = Agent.objects.get(name="Fight Club Oracle")
    viewport(browser, PHONE)
    browser.get(f"{live_server.url}/agents/{oracle.pk}/try?skill=fight-comparison")
    WebDriverWait(browser, WAIT_SECONDS).until(
        lambda b: b.find_elements(By.CSS_SELECTOR, ".try-block.js-form input")
    )
    width = browser.execute_script("return document.documentElement.scrollWidth;")
    assert width <= PHONE[0], f"the Try it page is {width}px wide on a {PHONE[0]}px screen"
    shoot(browser, "try-it-390.png")
