"""Password logins: failures are throttled per account and per client; passwords are validated.

Through the real admin login form with Django's test client (sessions, CSRF middleware, the
form, the authentication backend) and the configured cache (Redis under `make test`).
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from django.contrib.auth import authenticate, get_user_model
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.test import Client

pytestmark = pytest.mark.django_db

PASSWORD = "a long and right passphrase 7"
LOGIN = "/admin/login/?next=/admin/"


@pytest.fixture
def curator(settings: Any) -> Any:
    # A fast hasher keeps the timings of these tests about the counters, not about PBKDF2.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    return get_user_model().objects.create_superuser(username="curator", password=PASSWORD)


def try_login(client: Client, username: str, password: str) -> Any:
    return client.post(LOGIN, {"username": username, "password": password, "next": "/admin/"})


def logged_in(client: Client) -> bool:
    return "_auth_user_id" in client.session


def test_the_right_password_after_many_wrong_ones_is_refused(curator: Any) -> None:
    """The probe: 30 wrong passwords, then the right one worked."""
    client = Client(REMOTE_ADDR="198.51.100.7")
    for attempt in range(30):
        page = try_login(client, "curator", f"wrong guess {attempt}")
        assert page.status_code == 200 and not logged_in(client)
    page = try_login(client, "curator", PASSWORD)
    assert page.status_code == 200 and not logged_in(client)
    assert "Too many failed logins" in page.content.decode()
    # Nor through any other password login: authenticate() itself refuses the account.
    assert authenticate(None, username="curator", password=PASSWORD) is None


def test_the_account_is_locked_for_every_client_and_opens_after_the_window(
    curator: Any, settings: Any
) -> None:
    settings.REGISTRY_LOGIN_WINDOW_SECONDS = 3
    opened = time.monotonic()
    for attempt in range(5):
        try_login(Client(REMOTE_ADDR=f"198.51.100.{attempt + 1}"), "curator", "wrong")
    elsewhere = Client(REMOTE_ADDR="203.0.113.9")
    refused = try_login(elsewhere, "curator", PASSWORD)
    assert not logged_in(elsewhere)
    assert (
        "Too many failed logins for this account or from this address" in refused.content.decode()
    )
    time.sleep(max(0.0, opened + 3.3 - time.monotonic()))
    accepted = try_login(elsewhere, "curator", PASSWORD)
    assert accepted.status_code == 302 and logged_in(elsewhere)


def test_a_client_guessing_across_accounts_is_stopped(curator: Any, settings: Any) -> None:
    settings.REGISTRY_LOGIN_FAILURES_PER_CLIENT = 8
    sprayer = Client(REMOTE_ADDR="192.0.2.50")
    for number in range(8):
        try_login(sprayer, f"user{number}", "Winter2026!")
    assert not logged_in(sprayer)
    try_login(sprayer, "curator", PASSWORD)
    assert not logged_in(sprayer)  # this address is out of tries, whatever the account
    other = Client(REMOTE_ADDR="192.0.2.51")
    assert try_login(other, "curator", PASSWORD).status_code == 302 and logged_in(other)


def test_a_right_password_clears_the_accounts_count(curator: Any) -> None:
    client = Client(REMOTE_ADDR="198.51.100.20")
    for _ in range(4):
        try_login(client, "curator", "wrong")
    assert try_login(client, "curator", PASSWORD).status_code == 302
    client.logout()
    for _ in range(4):
        try_login(Client(REMOTE_ADDR="198.51.100.21"), "curator", "wrong")
    fresh = Client(REMOTE_ADDR="198.51.100.22")
    assert try_login(fresh, "curator", PASSWORD).status_code == 302


def test_passwords_are_checked_by_djangos_validators(curator: Any) -> None:
    for weak in ("password123", "12345678901234", "curator2026", "short"):
        with pytest.raises(ValidationError):
            validate_password(weak, user=curator)
    validate_password("correct horse battery staple 42", user=curator)
    client = Client()
    client.force_login(curator)
    page = client.post(
        "/admin/password_change/",
        {"old_password": PASSWORD, "new_password1": "password123", "new_password2": "password123"},
    )
    assert page.status_code == 200  # the form again, with the validators' messages
    assert "This password is too common." in page.content.decode()
    curator.refresh_from_db()
    assert curator.check_password(PASSWORD)
