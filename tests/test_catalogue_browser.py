"""The catalogue in a real headless Chromium (issue 39): the search box's placeholder fits its
field at 1280 and 375 pixels wide, an owner's agent without a card shows one sentence and
nothing that contradicts it, and weaker matches start collapsed.

Skipped, with the reason, where Chromium, its driver or selenium is missing (tests/test_browser.py).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.test import Client
from django.utils import timezone

from cards.models import Agent
from search.embedding import model, store
from search.index import snapshot, vectors
from tests.factories import agent_from_card, minimal_card
from tests.test_browser import BROWSER_MARKS, browser

__all__ = ["browser"]

pytestmark = BROWSER_MARKS

DEMO = Path(__file__).resolve().parents[1] / "cards" / "demo"
# The placeholder's text width and the field's inner width, in CSS pixels, in the page's font.
MEASURE = """
const input = document.getElementById("q");
const style = getComputedStyle(input);
const context = document.createElement("canvas").getContext("2d");
context.font = style.font;
const inner = input.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
return [context.measureText(input.placeholder).width, inner, input.placeholder];
"""


def _viewport(browser: Any, width: int) -> None:
    browser.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": width < 800},
    )


@pytest.mark.parametrize("width", [1280, 375])
def test_the_search_placeholder_fits_its_field(browser: Any, live_server: Any, width: int) -> None:
    _viewport(browser, width)
    browser.get(f"{live_server.url}/")
    text, inner, placeholder = browser.execute_script(MEASURE)
    assert placeholder and inner > 100
    assert text <= inner, f"{placeholder!r} is {text:.0f}px in a {inner:.0f}px field at {width}"


def test_the_owner_sees_one_state_for_an_agent_without_a_card(
    browser: Any, live_server: Any, django_user_model: Any
) -> None:
    from selenium.webdriver.common.by import By

    owner = django_user_model.objects.create_user("owner")
    now = timezone.now()
    agent = Agent.objects.create(
        url="https://agent.example.com",
        submitted_by=owner,
        last_error="could not resolve agent.example.com: Name or service not known",
        last_crawled_at=now,
        next_crawl_at=now + dt.timedelta(minutes=5),
        health=Agent.Health.DEGRADED,
    )
    agent_from_card(minimal_card(name="A listed agent"))

    # Signed out, the agent is not there at all.
    browser.get(f"{live_server.url}/agents/{agent.pk}")
    assert "No such agent" in browser.page_source

    # Signed in as its owner (the session a login would make).
    client = Client()
    client.force_login(owner)
    cookie = client.cookies[settings.SESSION_COOKIE_NAME].value
    browser.add_cookie({"name": settings.SESSION_COOKIE_NAME, "value": cookie, "path": "/"})
    browser.get(f"{live_server.url}/agents/{agent.pk}")
    state = browser.find_element(By.ID, "no-card").text
    assert state.startswith("No card yet: could not resolve agent.example.com")
    assert "next try " + agent.next_crawl_at.strftime("%Y-%m-%d %H:%M") + " UTC" in state
    assert browser.find_element(By.TAG_NAME, "h1").text == "https://agent.example.com"
    text = browser.find_element(By.TAG_NAME, "main").text
    for contradiction in ("degraded", "not checked", "lists no skills", "named schema", "JSON"):
        assert contradiction not in text, contradiction
    assert not browser.find_elements(By.CSS_SELECTOR, "img")
    hrefs = [a.get_attribute("href") for a in browser.find_elements(By.CSS_SELECTOR, "main a")]
    assert not [href for href in hrefs if href.endswith("/card")]

    # My agents, from the header, lists it with the same sentence.
    browser.find_element(By.LINK_TEXT, "My agents").click()
    assert state in browser.find_element(By.ID, "mine").text


@pytest.mark.skipif(not model.available(), reason="the embedding model package is not installed")
def test_weaker_matches_start_collapsed(
    browser: Any, live_server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from selenium.webdriver.common.by import By

    monkeypatch.setattr(snapshot, "directory", lambda: tmp_path / "index")
    vectors.reset()
    agents = [
        agent_from_card(path.read_bytes(), url=f"https://{path.stem}.demo.example/card.json")
        for path in sorted(DEMO.glob("*.json"))
    ]
    store.embed_agents([agent.pk for agent in agents])
    try:
        browser.get(f"{live_server.url}/?q=track+my+parcel")
        summary = browser.find_element(By.CSS_SELECTOR, "details.weaker > summary")
        assert "weaker match" in summary.text and summary.is_displayed()
        rows = browser.find_elements(By.CSS_SELECTOR, "details.weaker li h3 a")
        assert rows and not any(row.is_displayed() for row in rows)
        summary.click()
        assert all(row.is_displayed() for row in rows)
    finally:
        vectors.reset()
