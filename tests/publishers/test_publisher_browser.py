"""A publisher's whole path in a real headless Chromium (issue 44, docs/publishers.md), through
the catalogue's own pages only: sign up, open the e-mail's link, turn on two-factor sign-in
(an authenticator app, recovery codes, a passkey in Chrome's virtual authenticator), sign in
again with the password and the code, make a token, submit a real a2a-sdk agent with it, prove
the agent's origin by serving the challenge the page shows, then opt in to message checks and
ask for a probe; the agent page says "Verified publisher".

With SCREENSHOTS_DIR=<folder>, each step is saved there as a PNG of 1280x900 (the images of
docs/publishers.md: SCREENSHOTS_DIR=docs/img/publishers); otherwise in the test's tmp_path.
Skipped, with the reason, where Chromium, its driver or selenium is missing.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import re
import struct
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from allauth.mfa.models import Authenticator
from django.contrib.auth import get_user_model
from django.core import mail
from starlette.types import ASGIApp

from cards.models import Agent
from publishers.models import Origin, PublisherToken
from tests.live.cards import CARD_PATH
from tests.live.sdk_agent import sdk_app
from tests.live.serving import RequestLog, serving, with_files
from tests.test_browser import BROWSER_MARKS, WAIT_SECONDS, browser

__all__ = ["browser"]  # the fixture, imported to be used here

pytestmark = BROWSER_MARKS

EMAIL = "ada@publishers.example"
USERNAME = "ada"
PASSWORD = "a long publisher passphrase 42"
LINK = re.compile(r"https?://[^\s]+/accounts/confirm-email/[^\s]+/")
WIDTH, HEIGHT = 1280, 900


@dataclass
class ProvableAgent:
    """a2a-sdk's own agent server on loopback, whose card and interfaces share one origin, and
    which also serves whatever files the test puts in ``files`` (path -> body, as text/plain):
    the challenge the registry asks for, as its publisher would put it there."""

    origin: str
    log: RequestLog
    received: list[dict[str, Any]]
    files: dict[str, bytes] = field(default_factory=dict)

    @property
    def card_url(self) -> str:
        return self.origin + CARD_PATH


@contextmanager
def provable_agent() -> Iterator[ProvableAgent]:
    log, received, files = RequestLog(), list[dict[str, Any]](), dict[str, bytes]()

    def app_for(origin: str) -> ASGIApp:
        agent = log.middleware(sdk_app(origin, version="1.0", received=received))
        return with_files(agent, files)

    with serving(app_for) as origin:
        yield ProvableAgent(origin, log, received, files)


def totp(secret: str, at: float) -> str:
    """RFC 6238 (HMAC-SHA1, 30-second steps, 6 digits): what an authenticator app shows."""
    key = base64.b32decode(secret.upper() + "=" * (-len(secret) % 8))
    digest = hmac.new(key, struct.pack(">Q", int(at // 30)), hashlib.sha1).digest()
    offset = digest[-1] & 0x0F
    value = struct.unpack(">I", digest[offset : offset + 4])[0] & 0x7FFFFFFF
    return f"{value % 1_000_000:06d}"


def left(page: Any) -> Any:
    """A wait condition: ``page`` (an element) is no longer in the document. Chromium answers
    for a node of a page just left either as a stale element or as "does not belong to the
    document" (an inspector error selenium does not map); both mean the browser moved on."""
    from selenium.common.exceptions import StaleElementReferenceException, WebDriverException

    def gone(_driver: Any) -> bool:
        try:
            page.is_enabled()
        except StaleElementReferenceException:
            return True
        except WebDriverException as exc:
            if "does not belong to the document" in str(exc):
                return True
            raise
        return False

    return gone


class Walk:
    """The browser, the registry's address and the folder of the screenshots."""

    def __init__(self, driver: Any, base: str, shots: Path) -> None:
        from selenium.webdriver.support.ui import WebDriverWait

        self.driver, self.base, self.shots = driver, base, shots
        self.wait = WebDriverWait(driver, WAIT_SECONDS)

    def open(self, path: str) -> None:
        self.driver.get(self.base + path)

    def at(self, path: str) -> None:
        """Wait until the browser shows ``path`` (query and fragment aside)."""
        self.wait.until(lambda d: d.current_url.split("#")[0].split("?")[0] == self.base + path)

    def path(self) -> str:
        return str(self.driver.current_url)[len(self.base) :]

    def find(self, css: str) -> Any:
        from selenium.webdriver.common.by import By

        return self.wait.until(lambda d: d.find_element(By.CSS_SELECTOR, css))

    def type(self, css: str, text: str) -> None:
        element = self.find(css)
        element.clear()
        element.send_keys(text)

    def submit(self, css: str = "main form") -> None:
        """Press the submit button of the form ``css``, and wait for the page it leads to."""
        self.press(self.find(css).find_element("css selector", "button[type=submit]"))

    def press(self, button: Any) -> None:
        """Click ``button`` and wait until the browser has left the page (a form's answer)."""

        page = self.find("html")
        button.click()
        self.wait.until(left(page))

    def text(self) -> str:
        return str(self.find("main").text)

    def shoot(self, name: str, css: str | None = None) -> None:
        """The window as the reader sees it (scrolled to ``css`` when given), as NAME.png."""
        if css is not None:
            self.driver.execute_script("arguments[0].scrollIntoView(true);", self.find(css))
        self.driver.save_screenshot(str(self.shots / f"{name}.png"))

    def password_again(self) -> None:
        """Changing the sign-in methods asks for the password again, even just after signing in."""
        if self.path().startswith("/accounts/reauthenticate/"):
            self.type("#id_password", PASSWORD)
            self.submit()


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    folder = Path(os.environ.get("SCREENSHOTS_DIR") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture
def walk_settings(settings: Any, loopback_allowed: None) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    # The live checks' bounds, short: the probe runs in its request (CELERY_TASK_ALWAYS_EAGER,
    # as `make test-slow` sets it: the live server is a thread of this process).
    settings.REGISTRY_LIVE_CONNECT_TIMEOUT = 2.0
    settings.REGISTRY_LIVE_READ_TIMEOUT = 3.0
    settings.REGISTRY_LIVE_REQUEST_TIMEOUT = 3.0
    settings.REGISTRY_LIVE_RUN_SECONDS = 20.0


def sign_up_and_confirm(walk: Walk) -> None:
    walk.open("/accounts/signup/")
    walk.type("#id_email", EMAIL)
    walk.type("#id_username", USERNAME)
    walk.type("#id_password1", PASSWORD)
    walk.type("#id_password2", PASSWORD)
    walk.shoot("sign-up")
    walk.submit()
    walk.at("/accounts/confirm-email/")
    assert EMAIL in walk.text()
    [message] = [m for m in mail.outbox if EMAIL in m.to]
    link = LINK.search(str(message.body))
    assert link is not None, message.body
    walk.open(urlsplit(link.group(0)).path)  # the address the e-mail gives, on this server
    assert EMAIL in walk.text()
    walk.shoot("confirm-email")
    walk.submit()
    if walk.path().startswith("/accounts/login/"):  # not signed in by the link: sign in
        sign_in(walk)
    walk.at("/my-agents")
    assert "Your account has not submitted any agent yet" in walk.text()


def sign_in(walk: Walk) -> None:
    walk.open("/accounts/login/")
    walk.type("#id_login", EMAIL)
    walk.type("#id_password", PASSWORD)
    walk.submit()


def activate_totp(walk: Walk) -> tuple[str, str, list[str]]:
    """The authenticator app, from the Security page; the secret, the code it took and the
    recovery codes."""
    walk.open("/accounts/2fa/")
    walk.press(walk.find('main a[href="/accounts/2fa/totp/activate/"]'))
    walk.password_again()
    walk.at("/accounts/2fa/totp/activate/")
    secret = walk.find("#authenticator_secret").get_attribute("value")
    qr = walk.find(".totp-qr svg")  # drawn, not a data: image the page's policy would refuse
    assert qr.size["width"] > 100 and qr.size["height"] > 100, qr.size
    assert re.fullmatch(r"[A-Z2-7]{32}", secret), secret
    code = totp(secret, time.time() + 2)  # not one about to expire while it is typed
    walk.type("#id_code", code)
    walk.shoot("totp-setup")
    walk.submit()
    walk.at("/accounts/2fa/recovery-codes/")
    codes = walk.find("#recovery_codes").get_attribute("value").split()
    assert len(codes) == 10, codes
    walk.shoot("recovery-codes")
    return secret, code, codes


def add_passkey(walk: Walk) -> None:
    """A passkey in Chrome's virtual authenticator (CTAP2, built in, with user verification)."""
    from selenium.webdriver.common.virtual_authenticator import (
        Protocol,
        Transport,
        VirtualAuthenticatorOptions,
    )

    options = VirtualAuthenticatorOptions(
        protocol=Protocol.CTAP2,
        transport=Transport.INTERNAL,
        has_resident_key=True,
        has_user_verification=True,
        is_user_verified=True,
    )
    walk.driver.add_virtual_authenticator(options)
    walk.open("/accounts/2fa/webauthn/add/")
    walk.password_again()
    walk.at("/accounts/2fa/webauthn/add/")
    walk.type("#id_name", "laptop passkey")
    passwordless = walk.find("#id_passwordless")
    if not passwordless.is_selected():
        passwordless.click()
    walk.find("#mfa_webauthn_add").click()
    walk.wait.until(lambda d: not walk.path().startswith("/accounts/2fa/webauthn/add/"))
    assert len(walk.driver.get_credentials()) == 1
    keys = Authenticator.objects.filter(user__username=USERNAME, type="webauthn")
    assert keys.count() == 1


def sign_out(walk: Walk) -> None:
    walk.press(walk.find('form[action="/accounts/logout/"] button'))
    walk.wait.until(lambda d: "Sign in" in d.find_element("css selector", "header").text)


def make_token(walk: Walk) -> str:
    from selenium.webdriver.support.select import Select

    walk.open("/account/tokens")
    walk.type("#id_name", "publish from CI")
    Select(walk.find("#id_scope")).select_by_value("publish")
    Select(walk.find("#id_expiry")).select_by_value("90")
    walk.submit("#new-token-form")
    secret = str(walk.find("#token-value").text)
    assert secret.startswith("a2ar_") and len(secret) == 48, secret
    walk.shoot("token-created")
    # Shown once: the page, opened again, has only its first characters.
    row = PublisherToken.objects.get(account__username=USERNAME)
    walk.open("/account/tokens")
    assert secret not in walk.driver.page_source and row.prefix in walk.text()
    return secret


def prove_origin(walk: Walk, agent: ProvableAgent) -> None:
    """Add the agent's origin, serve the challenge the page shows, press Check now (http)."""
    walk.open("/account/origins")
    walk.type("#origin-text", agent.origin)
    walk.submit("#add-origin")
    claim = Origin.objects.get(account__username=USERNAME, origin=agent.origin)
    section = f"#origin-{claim.pk}"
    url = walk.find(f"{section} code.http-url").text
    body = walk.find(f"{section} code.http-body").text
    assert url == f"{agent.origin}/.well-known/a2a-registry-challenge/{claim.pk}"
    assert body == claim.challenge
    walk.shoot("origin-challenge", section)
    agent.files[url[len(agent.origin) :]] = body.encode()
    walk.press(walk.find(f'{section} button[value="http"]'))
    walk.wait.until(lambda d: f"{agent.origin} is verified (http)" in walk.text())
    assert walk.find(f"{section} h2 .state").text == "verified"
    walk.driver.execute_script("window.scrollTo(0, 0);")  # the answer, then the origin's state
    walk.shoot("origin-verified")


def api(token: str, base: str) -> httpx.Client:
    headers = {"Authorization": f"Bearer {token}"}
    return httpx.Client(base_url=base, headers=headers, timeout=90)


def test_a_publisher_signs_up_secures_the_account_proves_the_origin_and_opts_in(
    browser: Any, live_server: Any, walk_settings: None, shots: Path
) -> None:
    browser.set_window_size(WIDTH, HEIGHT)
    inner = browser.execute_script("return [window.innerWidth, window.innerHeight];")
    browser.set_window_size(2 * WIDTH - inner[0], 2 * HEIGHT - inner[1])  # the page: 1280x900
    walk = Walk(browser, live_server.url, shots)

    # 1. Sign up; the e-mail's link, then Confirm: signed in.
    sign_up_and_confirm(walk)
    ada = get_user_model().objects.get(username=USERNAME)

    # 2. Two-factor sign-in: the app (its secret read off the page), recovery codes, a passkey.
    secret, used, codes = activate_totp(walk)
    add_passkey(walk)
    assert {a.type for a in Authenticator.objects.filter(user=ada)} == {
        "totp",
        "recovery_codes",
        "webauthn",
    }
    sign_out(walk)
    sign_in(walk)
    walk.at("/accounts/2fa/authenticate/")
    code = totp(secret, time.time())
    if code == used:  # a code works once: the app's next one (within the tolerance)
        code = totp(secret, time.time() + 30)
    walk.type("#id_code", code)
    walk.shoot("sign-in-code")
    walk.submit()
    walk.at("/my-agents")
    assert codes  # kept for the day the phone is lost (tests/publishers/test_accounts.py)

    # 3. A publish token, shown once.
    token = make_token(walk)

    with provable_agent() as agent, api(token, live_server.url) as client:
        # 4. Submitted with the token before any proof: accepted, but no messages on its word.
        submitted = client.post("/api/v1/agents", json={"url": agent.card_url})
        assert submitted.status_code == 202, submitted.text
        agent_id = submitted.json()["id"]
        row = Agent.objects.get(pk=agent_id)
        if row.status != "ok":  # no eager queue: crawl it here
            from cards.tasks import crawl_agent

            crawl_agent.apply(args=[agent_id])
            row.refresh_from_db()
        assert row.status == "ok", row.last_error
        assert row.submitted_by == ada and row.publisher_origin == ""
        opt_in = client.patch(f"/api/v1/agents/{agent_id}", json={"probe_messages": True})
        assert opt_in.status_code == 403, opt_in.text
        assert opt_in.json()["type"].endswith("origin-not-proven")
        assert opt_in.json()["missing_origins"] == [agent.origin]
        assert client.post(f"/api/v1/agents/{agent_id}/probe").status_code == 403
        walk.open(f"/agents/{agent_id}")
        assert "publisher not verified" in walk.find("#publisher td").text
        assert len(agent.received) == 0

        # 5. Prove the origin on the catalogue: the page's challenge, served by the agent.
        prove_origin(walk, agent)
        row.refresh_from_db()
        assert row.publisher_origin == agent.origin and row.submitted_by == ada

        # 6. Now the opt-in and the probe are taken; the probe sends real messages.
        opt_in = client.patch(f"/api/v1/agents/{agent_id}", json={"probe_messages": True})
        assert opt_in.status_code == 200, opt_in.text
        assert opt_in.json()["publisher"]["verified"] is True
        probe = client.post(f"/api/v1/agents/{agent_id}/probe")
        assert probe.status_code == 202, probe.text
        walk.wait.until(lambda d: Agent.objects.get(pk=agent_id).live_checked_at is not None)
        assert len(agent.received) > 0

    # 7. The agent page: its verified publisher and the live checks.
    name = agent.origin.removeprefix("http://")
    walk.open(f"/agents/{agent_id}")
    assert walk.find("#publisher td").text.startswith(f"Verified publisher: {name}")
    assert walk.find("#live-outcome").text == "pass"
    assert "on: the registry also sends this agent" in walk.text()
    walk.shoot("agent-verified")
    walk.shoot("agent-live-checks", "#live")

    # 8. The passkey alone signs in (the virtual authenticator verifies the user).
    sign_out(walk)
    walk.open("/accounts/login/")
    walk.press(walk.find("#passkey_login"))
    walk.at("/my-agents")
    assert "a2a-sdk agent (v1.0)" in walk.text()
