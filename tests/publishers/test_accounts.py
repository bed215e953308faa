"""Publisher accounts (issue 44 §1): sign-up with a verified e-mail, sign-in on the catalogue's
own pages, the usual protections, two-factor sign-in and sign-in with an OpenID Connect provider.

Real accounts in PostgreSQL, Django's test client through the whole middleware stack, a real
OpenID Connect provider on 127.0.0.1 (tests/publishers/oidc_provider.py) and, for `make run`,
the registry itself under uvicorn with DEBUG on and SQLite, printing its e-mail.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import re
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from allauth.account.models import EmailAddress
from allauth.mfa.models import Authenticator
from allauth.socialaccount.models import SocialAccount
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.sessions.models import Session
from django.core import mail
from django.test import Client

from cards.catalogue.common import CONTENT_SECURITY_POLICY, SCRIPT_POLICY
from registry.env import ConfigError
from registry.settings.accounts import oidc_apps
from tests.publishers.oidc_provider import Person, running_provider

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "a long publisher passphrase 42"
LINK = re.compile(r"https?://[^\s]+/accounts/confirm-email/[^\s]+/")
CSRF = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')


@pytest.fixture(autouse=True)
def _fast_hashes(settings: Any) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def publisher(name: str, *, verified: bool = True) -> Any:
    """An account with a primary e-mail address, verified unless told otherwise."""
    email = f"{name}@publishers.example"
    user = get_user_model().objects.create_user(username=name, email=email, password=PASSWORD)
    EmailAddress.objects.create(user=user, email=email, verified=verified, primary=True)
    return user


def sign_in(client: Client, login: str, password: str = PASSWORD) -> Any:
    return client.post("/accounts/login/", {"login": login, "password": password})


def signed_in_as(client: Client) -> str | None:
    """The username the session belongs to, read from the page header, or None."""
    page = client.get("/my-agents").content.decode()
    if "Sign in to see the agents your account submitted" in page:
        return None
    assert 'action="/accounts/logout/"' in page
    return str(client.session.get("_auth_user_id"))


def totp(secret: str, at: float | None = None) -> str:
    """RFC 6238: HMAC-SHA1 of the 30-second step, 6 digits (what an authenticator app shows)."""
    key = base64.b32decode(secret.upper() + "=" * (-len(secret) % 8))
    step = int((time.time() if at is None else at) // 30)
    digest = hmac.new(key, struct.pack(">Q", step), hashlib.sha1).digest()
    offset = digest[-1] & 0x0F
    value = struct.unpack(">I", digest[offset : offset + 4])[0] & 0x7FFFFFFF
    return f"{value % 1_000_000:06d}"


# --- Sign-up, the e-mail link, sign-in ---------------------------------------------------------


def test_sign_up_confirm_the_link_then_sign_in() -> None:
    visitor = Client()
    form = visitor.get("/accounts/signup/")
    assert form.status_code == 200
    page = form.content.decode()
    assert '<a class="brand" href="/">A2A agent registry</a>' in page  # the catalogue's look
    assert 'name="email"' in page and 'name="username"' in page
    signed_up = visitor.post(
        "/accounts/signup/",
        {
            "email": "carol@publishers.example",
            "username": "carol",
            "password1": PASSWORD,
            "password2": PASSWORD,
        },
    )
    assert signed_up.status_code == 302 and signed_up["Location"] == "/accounts/confirm-email/"
    carol = get_user_model().objects.get(username="carol")
    assert not EmailAddress.objects.get(user=carol).verified

    # Not yet: a password alone does not sign in an address nobody confirmed.
    early = Client()
    refused = sign_in(early, "carol@publishers.example")
    assert refused.status_code == 302 and refused["Location"] == "/accounts/confirm-email/"
    assert signed_in_as(early) is None

    [message] = [m for m in mail.outbox if "carol@publishers.example" in m.to]
    link = LINK.search(str(message.body))
    assert link is not None, message.body
    path = urlsplit(link.group(0)).path
    # The link opens a page with a button: following it (a mail scanner) confirms nothing.
    confirm_page = Client().get(path)
    assert confirm_page.status_code == 200
    assert not EmailAddress.objects.get(user=carol).verified
    confirmed = Client().post(path)
    assert confirmed.status_code == 302
    assert EmailAddress.objects.get(user=carol).verified

    for login in ("carol@publishers.example", "carol"):
        client = Client()
        answer = sign_in(client, login)
        assert answer.status_code == 302 and answer["Location"] == settings.LOGIN_REDIRECT_URL
        assert signed_in_as(client) == str(carol.pk)
        mine = client.get("/my-agents").content.decode()
        assert "Your account has not submitted any agent yet" in mine


def test_a_wrong_password_says_nothing_about_the_account() -> None:
    publisher("dave")
    wrong = sign_in(Client(), "dave@publishers.example", "not the password at all")
    unknown = sign_in(Client(), "nobody@publishers.example", "not the password at all")
    assert wrong.status_code == unknown.status_code == 200
    assert _errors(wrong) == _errors(unknown) != []


def _errors(response: Any) -> list[str]:
    return [str(e) for e in response.context["form"].non_field_errors()]


def _page(response: Any, email: str) -> str:
    """A page's text without its per-request CSRF token and the address it was sent."""
    return CSRF.sub("", response.content.decode()).replace(email, "ADDRESS")


def test_sign_up_with_a_known_address_answers_as_a_new_one() -> None:
    publisher("erin")
    answers = []
    for email, username in (
        ("erin@publishers.example", "erin2"),
        ("frank@publishers.example", "frank"),
    ):
        client = Client()
        posted = client.post(
            "/accounts/signup/",
            {"email": email, "username": username, "password1": PASSWORD, "password2": PASSWORD},
        )
        page = _page(client.get(posted["Location"]), email)
        answers.append((posted.status_code, posted["Location"], page))
    assert answers[0] == answers[1]
    assert answers[0][1] == "/accounts/confirm-email/"
    assert "Confirmation email sent to ADDRESS" in answers[0][2]
    # The owner of the known address is told by e-mail; no second account was made.
    [known] = [m for m in mail.outbox if "erin@publishers.example" in m.to]
    assert "already" in str(known.body).lower() and not LINK.search(str(known.body))
    assert not get_user_model().objects.filter(username="erin2").exists()


def test_password_reset_answers_alike_for_known_and_unknown_addresses() -> None:
    publisher("gina")
    answers = []
    for email in ("gina@publishers.example", "nobody-here@publishers.example"):
        client = Client()
        posted = client.post("/accounts/password/reset/", {"email": email})
        page = _page(client.get(posted["Location"]), email)
        answers.append((posted.status_code, posted["Location"], page))
    assert answers[0] == answers[1]
    assert answers[0][1] == "/accounts/password/reset/done/"
    known = [m for m in mail.outbox if "gina@publishers.example" in m.to]
    unknown = [m for m in mail.outbox if "nobody-here@publishers.example" in m.to]
    assert len(known) == len(unknown) == 1
    assert "/accounts/password/reset/key/" in known[0].body
    assert "/accounts/password/reset/key/" not in unknown[0].body


# --- CSRF, throttling, a new session -----------------------------------------------------------


def test_the_login_form_needs_its_csrf_token() -> None:
    publisher("hank")
    client = Client(enforce_csrf_checks=True)
    forged = client.post("/accounts/login/", {"login": "hank", "password": PASSWORD})
    assert forged.status_code == 403
    token = CSRF.search(client.get("/accounts/login/").content.decode())
    assert token is not None
    posted = client.post(
        "/accounts/login/",
        {"login": "hank", "password": PASSWORD, "csrfmiddlewaretoken": token.group(1)},
    )
    assert posted.status_code == 302 and posted["Location"] == "/my-agents"


@pytest.mark.parametrize("login", ["ivy@publishers.example", "ivy"])
def test_repeated_failed_logins_are_refused_even_with_the_right_password(login: str) -> None:
    publisher("ivy")
    for _ in range(5):
        assert sign_in(Client(), login, "a wrong guess, again").status_code == 200
    client = Client()
    refused = sign_in(client, login)
    assert refused.status_code == 200 and signed_in_as(client) is None
    assert any("too many" in error.lower() for error in _errors(refused)), _errors(refused)
    # Another account is not locked out by them.
    publisher("jack")
    assert sign_in(Client(), "jack").status_code == 302


def test_signing_in_starts_a_new_session() -> None:
    kate = publisher("kate")
    client = Client()
    session = client.session
    session["visited"] = "before signing in"
    session.save()
    before = session.session_key
    assert before and Session.objects.filter(session_key=before).exists()
    assert sign_in(client, "kate").status_code == 302
    after = client.cookies[settings.SESSION_COOKIE_NAME].value
    assert after != before
    assert not Session.objects.filter(session_key=before).exists()
    assert client.session["_auth_user_id"] == str(kate.pk)


def test_signing_out_is_a_post_from_the_header() -> None:
    publisher("liam")
    client = Client()
    sign_in(client, "liam")
    page = client.get("/").content.decode()
    for link in ('href="/my-agents"', 'href="/account/tokens"', 'href="/account/origins"',
                 'href="/accounts/2fa/"'):  # fmt: skip
        assert link in page, link
    assert re.search(r'<form method="post" action="/accounts/logout/">\s*<input type="hidden"'
                     r' name="csrfmiddlewaretoken"', page)  # fmt: skip
    client.get("/accounts/logout/")  # a link (or an <img>) cannot sign anyone out
    assert signed_in_as(client) is not None
    client.post("/accounts/logout/")
    assert signed_in_as(client) is None
    anonymous = Client().get("/").content.decode()
    assert 'href="/accounts/login/"' in anonymous and 'href="/accounts/signup/"' in anonymous
    assert "/accounts/logout/" not in anonymous and "csrfmiddlewaretoken" not in anonymous


def test_my_agents_sends_a_reader_to_the_catalogue_sign_in() -> None:
    page = Client().get("/my-agents").content.decode()
    assert 'href="/accounts/login/?next=%2Fmy-agents"' in page
    assert "/admin/login" not in page
    publisher("mona")
    client = Client()
    answer = client.post(
        "/accounts/login/?next=/my-agents", {"login": "mona", "password": PASSWORD}
    )
    assert answer["Location"] == "/my-agents"
    assert "not submitted any agent yet" in client.get("/my-agents").content.decode()


def test_account_pages_may_run_the_registry_scripts_and_no_other_page_may() -> None:
    client = Client()
    login = client.get("/accounts/login/")
    assert login["Content-Security-Policy"] == SCRIPT_POLICY
    assert 'src="/static/mfa/js/webauthn.js"' in login.content.decode()  # passkey sign-in
    assert "<script>" not in login.content.decode()  # nothing inline to run
    assert client.get("/")["Content-Security-Policy"] == CONTENT_SECURITY_POLICY
    assert client.get("/my-agents")["Content-Security-Policy"] == CONTENT_SECURITY_POLICY


# --- Two-factor sign-in ------------------------------------------------------------------------


def _code(secret: str) -> str:
    """The current code, not one about to expire while it is sent."""
    if 30 - time.time() % 30 < 2:
        time.sleep(2)
    return totp(secret)


def reauthenticate(client: Client, path: str) -> None:
    """Changing the sign-in methods asks for the password again, even just after signing in."""
    asked = client.get(path)
    assert asked.status_code == 302 and asked["Location"].startswith("/accounts/reauthenticate/")
    again = client.post(asked["Location"], {"password": PASSWORD})
    assert again.status_code == 302 and again["Location"] == path, again


def _activate_totp(client: Client) -> str:
    reauthenticate(client, "/accounts/2fa/totp/activate/")
    page = client.get("/accounts/2fa/totp/activate/")
    assert page.status_code == 200, page.status_code
    secret = page.context["form"].secret
    assert secret in page.content.decode()  # shown for typing into an app, beside the QR code
    wrong = client.post("/accounts/2fa/totp/activate/", {"code": "000000"})
    assert wrong.status_code == 200
    done = client.post("/accounts/2fa/totp/activate/", {"code": _code(secret)})
    assert done.status_code == 302 and done["Location"] == "/accounts/2fa/recovery-codes/"
    return str(secret)


def test_totp_then_every_sign_in_needs_the_code() -> None:
    nina = publisher("nina")
    owner = Client()
    sign_in(owner, "nina")
    secret = _activate_totp(owner)
    assert Authenticator.objects.filter(user=nina, type=Authenticator.Type.TOTP).exists()
    assert "Authentication using an authenticator app is active" in (
        owner.get("/accounts/2fa/").content.decode()
    )

    client = Client()
    first = sign_in(client, "nina")
    assert first.status_code == 302 and first["Location"] == "/accounts/2fa/authenticate/"
    assert signed_in_as(client) is None  # the password alone is not enough
    wrong = client.post("/accounts/2fa/authenticate/", {"code": "123456"})
    assert wrong.status_code == 200 and signed_in_as(client) is None
    code = _code(secret)
    ok = client.post("/accounts/2fa/authenticate/", {"code": code})
    assert ok.status_code == 302 and ok["Location"] == "/my-agents"
    assert signed_in_as(client) == str(nina.pk)

    # The same code a second time (someone who watched it typed) is refused.
    other = Client()
    sign_in(other, "nina")
    replay = other.post("/accounts/2fa/authenticate/", {"code": code})
    assert replay.status_code == 200 and signed_in_as(other) is None


def test_a_recovery_code_signs_in_once() -> None:
    olga = publisher("olga")
    owner = Client()
    sign_in(owner, "olga")
    _activate_totp(owner)
    codes = owner.get("/accounts/2fa/recovery-codes/").context["unused_codes"]
    assert len(codes) == settings.MFA_RECOVERY_CODE_COUNT
    spare = codes[0]

    client = Client()
    assert sign_in(client, "olga")["Location"] == "/accounts/2fa/authenticate/"
    used = client.post("/accounts/2fa/authenticate/", {"code": spare})
    assert used.status_code == 302 and signed_in_as(client) == str(olga.pk)

    again = Client()
    sign_in(again, "olga")
    refused = again.post("/accounts/2fa/authenticate/", {"code": spare})
    assert refused.status_code == 200 and signed_in_as(again) is None
    left = owner.get("/accounts/2fa/recovery-codes/").context["unused_codes"]
    assert spare not in left and len(left) == settings.MFA_RECOVERY_CODE_COUNT - 1


def test_the_security_pages_render_in_the_catalogue_look() -> None:
    publisher("pete")
    client = Client()
    sign_in(client, "pete")
    reauthenticate(client, "/accounts/2fa/webauthn/add/")
    for path in ("/accounts/2fa/", "/accounts/2fa/webauthn/add/", "/accounts/email/",
                 "/accounts/password/change/", "/accounts/2fa/totp/activate/"):  # fmt: skip
        page = client.get(path)
        assert page.status_code == 200, path
        body = page.content.decode()
        assert '<nav class="account-tabs"' in body and 'class="brand"' in body, path
        assert page["Content-Security-Policy"] == SCRIPT_POLICY, path
    add = client.get("/accounts/2fa/webauthn/add/").content.decode()
    assert 'src="/static/mfa/js/webauthn-json.js"' in add and 'id="js_data"' in add


# --- Sign-in with an OpenID Connect provider ----------------------------------------------------


def _oidc_settings(issuer: str) -> dict[str, Any]:
    raw = json.dumps(
        [
            {
                "id": "local-idp",
                "name": "Local IdP",
                "server_url": issuer,
                "client_id": "registry-client",
                "secret": "registry-secret",
            }
        ]
    )
    return {"openid_connect": {"APPS": oidc_apps(raw)}}


def _through_the_provider(client: Client) -> Any:
    """Start at the registry, pass the provider (over HTTP), come back to the callback."""
    page = client.get("/accounts/oidc/local-idp/login/")
    assert page.status_code == 200  # a button to press: a GET alone starts nothing
    start = client.post("/accounts/oidc/local-idp/login/")
    assert start.status_code == 302, start.status_code
    authorize = start["Location"]
    query = parse_qs(urlsplit(authorize).query)
    assert query["code_challenge_method"] == ["S256"] and query["state"]
    back = httpx.get(authorize, follow_redirects=False, timeout=10)
    assert back.status_code == 302, back.text
    callback = urlsplit(back.headers["location"])
    assert callback.path == "/accounts/oidc/local-idp/login/callback/"
    return client.get(f"{callback.path}?{callback.query}")


def test_sign_in_with_an_openid_connect_provider(settings: Any) -> None:
    person = Person(sub="idp-user-1", email="quinn@idp.example", preferred_username="quinn")
    with running_provider("registry-client", "registry-secret", person) as provider:
        settings.SOCIALACCOUNT_PROVIDERS = _oidc_settings(provider.issuer)
        assert "Local IdP" in Client().get("/accounts/login/").content.decode()
        client = Client()
        done = _through_the_provider(client)
        assert done.status_code == 302 and done["Location"] == "/my-agents", done
        assert provider.requests[:1] == ["GET /.well-known/openid-configuration"]
        assert {"GET /authorize", "POST /token", "GET /userinfo"} <= set(provider.requests)

        quinn = get_user_model().objects.get(email="quinn@idp.example")
        assert EmailAddress.objects.get(user=quinn).verified
        assert SocialAccount.objects.get(user=quinn).uid == "idp-user-1"
        assert signed_in_as(client) == str(quinn.pk)

        # Next time the same provider account signs in to the same registry account.
        again = Client()
        assert _through_the_provider(again)["Location"] == "/my-agents"
        assert signed_in_as(again) == str(quinn.pk)
        assert get_user_model().objects.filter(email="quinn@idp.example").count() == 1


def test_an_address_the_provider_did_not_verify_is_sent_a_link(settings: Any) -> None:
    person = Person(sub="idp-user-2", email="rita@idp.example", email_verified=False,
                    preferred_username="rita")  # fmt: skip
    with running_provider("registry-client", "registry-secret", person) as provider:
        settings.SOCIALACCOUNT_PROVIDERS = _oidc_settings(provider.issuer)
        client = Client()
        done = _through_the_provider(client)
        assert done["Location"] == "/accounts/confirm-email/"
        assert signed_in_as(client) is None
        rita = get_user_model().objects.get(email="rita@idp.example")
        assert not EmailAddress.objects.get(user=rita).verified
        assert any("rita@idp.example" in m.to and LINK.search(str(m.body)) for m in mail.outbox)


def test_a_provider_that_is_not_configured_is_not_found() -> None:
    assert Client().get("/accounts/github/login/").status_code == 404
    assert Client().get("/accounts/oidc/nowhere/login/").status_code == 404
    login = Client().get("/accounts/login/").content.decode()
    assert "GitHub" not in login


def test_provider_settings_are_checked_at_start_up() -> None:
    assert oidc_apps(None) == []
    corp = {"id": "corp", "name": "Corp", "client_id": "c", "secret": "s",
            "server_url": "https://id.corp.example"}  # fmt: skip
    [app] = oidc_apps(json.dumps([corp]))
    assert app["provider_id"] == "corp" and app["settings"]["server_url"].startswith("https://")
    for bad in ("{", "{}", "[1]", '[{"id": "x"}]',
                '[{"id": "a b", "name": "n", "client_id": "c", "secret": "s", '
                '"server_url": "https://x.example"}]'):  # fmt: skip
        with pytest.raises(ConfigError):
            oidc_apps(bad)


# --- `make run`: the e-mail on the console -----------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_make_run_prints_the_confirmation_link(tmp_path: Path) -> None:
    """`make run`'s own command (DEBUG on, SQLite, uvicorn): a sign-up's link is on its console."""
    unset = ("DATABASE_URL", "REDIS_URL", "CELERY_", "DJANGO_", "REGISTRY_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(unset)}
    env.update({"REGISTRY_SQLITE_PATH": str(tmp_path / "db.sqlite3"), "DJANGO_DEBUG": "true",
                "DJANGO_SETTINGS_MODULE": "registry.settings"})  # fmt: skip
    python = [sys.executable]
    subprocess.run([*python, "manage.py", "migrate", "--noinput"], env=env, cwd=ROOT,
                   check=True, capture_output=True)  # fmt: skip
    port = _free_port()
    log = tmp_path / "console.txt"
    with log.open("wb") as out:
        server = subprocess.Popen(
            [*python, "-m", "uvicorn", "registry.asgi:application", "--host", "127.0.0.1",
             "--port", str(port)],
            env=env, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
        try:
            base = f"http://127.0.0.1:{port}"
            with httpx.Client(base_url=base, timeout=10) as http:
                deadline = time.monotonic() + 30
                while True:
                    try:
                        form = http.get("/accounts/signup/")
                        break
                    except httpx.TransportError:
                        assert time.monotonic() < deadline, log.read_text()
                        time.sleep(0.3)
                token = CSRF.search(form.text)
                assert token is not None
                posted = http.post(
                    "/accounts/signup/",
                    data={"csrfmiddlewaretoken": token.group(1), "email": "sam@example.org",
                          "username": "sam", "password1": PASSWORD, "password2": PASSWORD},
                    headers={"Referer": f"{base}/accounts/signup/"},
                )  # fmt: skip
                assert posted.status_code == 302, posted.text[:500]
                deadline = time.monotonic() + 10
                while not (found := LINK.search(log.read_text())):
                    assert time.monotonic() < deadline, log.read_text()
                    time.sleep(0.2)
                link = found.group(0)
                assert link.startswith(f"{base}/accounts/confirm-email/")
                assert http.get(link).status_code == 200  # the page with the button
        finally:
            server.terminate()
            server.wait(timeout=10)


def test_an_smtp_server_that_is_down_is_not_a_server_error(settings: Any) -> None:
    """Production without a reachable mail server: the sign-up is kept and the reader is told
    the e-mail could not be sent (not a 500); the confirmation can be asked for again."""
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT, settings.EMAIL_TIMEOUT = "127.0.0.1", _free_port(), 2
    visitor = Client()
    answer = visitor.post(
        "/accounts/signup/",
        {"email": "dora@publishers.example", "username": "dora", "password1": PASSWORD,
         "password2": PASSWORD},
        follow=True,
    )  # fmt: skip
    assert answer.status_code == 200
    assert "could not be sent just now" in answer.content.decode()
    assert get_user_model().objects.filter(username="dora").exists()
