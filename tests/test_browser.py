"""One end-to-end test in a real headless Chromium (Debian's ``chromium`` and ``chromium-driver``,
installed by ``scripts/browser.sh``): a curator logs in to the admin, approves a pending agent,
opens its public page and the badge image loads.

Skipped, with the reason, where Chromium, its driver or selenium is missing.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from typing import Any

import pytest

from cards.models import Agent
from tests.factories import agent_from_card, minimal_card

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
WAIT_SECONDS = 20

NEEDS_CHROMIUM = pytest.mark.skipif(
    CHROMIUM is None or CHROMEDRIVER is None,
    reason="chromium and chromedriver are not installed (run scripts/browser.sh)",
)
# What every module that drives the browser against a live server marks its tests with.
BROWSER_MARKS = [NEEDS_CHROMIUM, pytest.mark.django_db(transaction=True)]

pytestmark = [NEEDS_CHROMIUM]


@pytest.fixture
def browser() -> Iterator[Any]:
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed")
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    # Keep the console, so a test can say the page logged no error (tests/tryit/).
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    profile = tempfile.mkdtemp(prefix="registry-chromium-")
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--window-size=1280,1024",
        f"--user-data-dir={profile}",
    ):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(WAIT_SECONDS)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


@pytest.mark.django_db(transaction=True)
def test_curator_approves_an_agent_and_its_badge_loads(
    browser: Any, live_server: Any, django_user_model: Any
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.select import Select
    from selenium.webdriver.support.ui import WebDriverWait

    wait = WebDriverWait(browser, WAIT_SECONDS)
    django_user_model.objects.create_user(
        "curator", password="correct horse battery staple", is_staff=True, is_superuser=True
    )
    agent = agent_from_card(minimal_card(name="Browser-tested agent"))
    Agent.objects.filter(pk=agent.pk).update(moderation=Agent.Moderation.PENDING)

    # Not public yet: the catalogue does not know it.
    browser.get(f"{live_server.url}/agents/{agent.pk}")
    assert "No such agent" in browser.page_source

    # Log in through the admin's own form.
    browser.get(f"{live_server.url}/admin/login/?next=/admin/cards/agent/")
    browser.find_element(By.ID, "id_username").send_keys("curator")
    browser.find_element(By.ID, "id_password").send_keys("correct horse battery staple")
    browser.find_element(By.CSS_SELECTOR, "input[type=submit], button[type=submit]").click()
    wait.until(ec.presence_of_element_located((By.ID, "changelist")))

    # Approve it with the changelist's bulk action.
    browser.find_element(
        By.CSS_SELECTOR, f'input[name="_selected_action"][value="{agent.pk}"]'
    ).click()
    Select(browser.find_element(By.NAME, "action")).select_by_value("approve")
    browser.find_element(By.CSS_SELECTOR, 'button[name="index"]').click()
    wait.until(ec.presence_of_element_located((By.CSS_SELECTOR, "ul.messagelist li.success")))
    agent.refresh_from_db()
    assert agent.moderation == Agent.Moderation.APPROVED

    # Log out, so the page is seen as the public sees it.
    browser.delete_all_cookies()
    browser.get(f"{live_server.url}/agents/{agent.pk}")
    assert browser.find_element(By.TAG_NAME, "h1").text == "Browser-tested agent"
    badge = browser.find_element(By.CSS_SELECTOR, f'img[src="/badges/{agent.pk}.svg"]')
    wait.until(lambda driver: driver.execute_script("return arguments[0].complete;", badge))
    width = browser.execute_script("return arguments[0].naturalWidth;", badge)
    assert width > 0, "the badge image did not load"
    # The snippets to embed it are on the page too.
    assert browser.find_elements(By.TAG_NAME, "pre")
