"""Sessions made on first use (registry/sessions.py): the admin signs in and out as before;
requests that never touch the session get no cookie and no ``Vary: Cookie``."""

from __future__ import annotations

from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.test import Client

from registry.sessions import LazySessionMiddleware

pytestmark = pytest.mark.django_db

PASSWORD = "a long and right passphrase 7"


@pytest.fixture
def curator(settings: Any) -> Any:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    return get_user_model().objects.create_superuser(username="curator", password=PASSWORD)


def test_the_lazy_middleware_is_the_one_configured() -> None:
    assert "registry.sessions.LazySessionMiddleware" in settings.MIDDLEWARE
    assert "django.contrib.sessions.middleware.SessionMiddleware" not in settings.MIDDLEWARE


def test_the_admin_signs_in_stays_in_and_signs_out(curator: Any) -> None:
    client = Client()
    form = client.get("/admin/login/?next=/admin/")
    assert form.status_code == 200
    signed = client.post(
        "/admin/login/?next=/admin/",
        {"username": "curator", "password": PASSWORD, "next": "/admin/"},
    )
    assert signed.status_code == 302 and signed["Location"] == "/admin/"
    cookie = signed.cookies[settings.SESSION_COOKIE_NAME]
    assert cookie.value and cookie["httponly"]
    assert "_auth_user_id" in client.session
    # The next request reads the session from the cookie: the admin's index, not the login.
    index = client.get("/admin/")
    assert index.status_code == 200 and b"curator" in index.content
    assert "Cookie" in index["Vary"]
    client.post("/admin/logout/")
    assert "_auth_user_id" not in client.session
    assert client.get("/admin/").status_code == 302


STOCK = "django.contrib.sessions.middleware.SessionMiddleware"
LAZY = "registry.sessions.LazySessionMiddleware"


def _answers(curator: Any) -> list[tuple[str, bool, int, str, list[str]]]:
    """Each request's status, session cookie set or not and Vary, signed in and not."""
    seen = []
    for signed_in in (False, True):
        client = Client()
        if signed_in:
            client.force_login(curator)
        for path in ("/healthz", "/api/v1/agents", "/", "/admin/", "/admin/login/"):
            response = client.get(path)
            cookies = sorted(response.cookies)
            seen.append((path, signed_in, response.status_code, response.get("Vary", ""), cookies))
    return seen


def test_every_answer_is_the_stock_middlewares(curator: Any, settings: Any) -> None:
    lazy = _answers(curator)
    settings.MIDDLEWARE = [STOCK if name == LAZY else name for name in settings.MIDDLEWARE]
    assert lazy == _answers(curator)
    # And the requests that never read it leave it alone: no cookie, no Vary on Cookie.
    for path, _, status, vary, cookies in lazy:
        if path == "/healthz":
            assert status == 200 and "Cookie" not in vary and not cookies


def test_an_emptied_session_still_deletes_its_cookie(curator: Any) -> None:
    """The stock rule stands once the session is read: a cookie for an empty session goes."""
    client = Client()
    client.cookies[settings.SESSION_COOKIE_NAME] = "no-such-session-key-0123456789abcdef"
    response = client.get("/admin/login/")  # reads the session (the signed-in user)
    assert response.status_code == 200
    gone = response.cookies[settings.SESSION_COOKIE_NAME]
    assert gone.value == "" and gone["max-age"] == 0


def test_it_is_the_stock_middleware_underneath() -> None:
    from django.contrib.sessions.middleware import SessionMiddleware

    assert issubclass(LazySessionMiddleware, SessionMiddleware)
