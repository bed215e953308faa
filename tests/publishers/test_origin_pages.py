"""The catalogue's page of an account's origins, ``/account/origins``: sign-in required, the
three ways with the exact values, "Check now" as a POST with its CSRF token, state and history;
another account's origin is a 404 there too."""

from __future__ import annotations

import html
import re
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from publishers.models import Origin
from publishers.proofs import http_file
from tests.support import CardServer

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _origin_settings(settings: Any, loopback_allowed: None) -> None:
    settings.REGISTRY_ORIGIN_VERIFY_RATE = "1000/minute"


def signed_in(name: str) -> Client:
    client = Client(enforce_csrf_checks=True)
    client.force_login(get_user_model().objects.create_user(username=name))
    return client


def csrf(client: Client) -> str:
    page = client.get("/account/origins").content.decode()
    match = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
    assert match is not None
    return match.group(1)


def test_signing_in_is_required() -> None:
    response = Client().get("/account/origins")
    assert response.status_code == 302
    assert response["Location"] == "/accounts/login/?next=/account/origins"
    assert Client().post("/account/origins", {"origin": "https://a.test"}).status_code == 302
    assert not Origin.objects.exists()


def test_add_check_now_history_and_remove(site: CardServer) -> None:
    alice = signed_in("alice")
    empty = alice.get("/account/origins")
    assert empty.status_code == 200 and b"No origin yet" in empty.content
    assert "default-src 'none'" in empty["Content-Security-Policy"]

    assert alice.post("/account/origins", {"origin": site.origin}).status_code == 403  # no CSRF
    token = csrf(alice)
    added = alice.post("/account/origins", {"origin": site.origin, "csrfmiddlewaretoken": token})
    origin = Origin.objects.get(account__username="alice")
    assert added.status_code == 302 and added["Location"] == f"/account/origins#origin-{origin.pk}"

    page = alice.get("/account/origins").content.decode()
    assert f"Added {site.origin}" in page
    assert http_file.challenge_url(origin) in page and origin.challenge in page
    assert "no DNS name" in page  # 127.0.0.1: an IP address host
    assert f'"challenge": "{origin.challenge}"' in html.unescape(page)  # the jwks payload
    assert "claimed" in page and "Check now (http)" in page

    check = {"method": "http", "csrfmiddlewaretoken": token}
    alice.post(f"/account/origins/{origin.pk}/verify", check)
    page = alice.get("/account/origins").content.decode()
    assert "is not verified (http)" in page and "404" in page

    path = http_file.challenge_url(origin)[len(site.origin) :]
    site.serve(path, origin.challenge.encode(), content_type="text/plain")
    assert alice.post(f"/account/origins/{origin.pk}/verify", check).status_code == 302
    page = alice.get("/account/origins").content.decode()
    assert f"{site.origin} is verified (http)" in page
    assert 'class="state good">verified' in page
    origin.refresh_from_db()
    assert origin.state == "verified"

    # bob can neither check nor remove alice's origin, nor see it on his page
    bob = signed_in("bob")
    bobs = csrf(bob)
    assert (
        bob.post(
            f"/account/origins/{origin.pk}/verify", {**check, "csrfmiddlewaretoken": bobs}
        ).status_code
        == 404
    )
    assert (
        bob.post(f"/account/origins/{origin.pk}/remove", {"csrfmiddlewaretoken": bobs}).status_code
        == 404
    )
    assert site.origin not in bob.get("/account/origins").content.decode()

    alice.post(f"/account/origins/{origin.pk}/remove", {"csrfmiddlewaretoken": token})
    assert not Origin.objects.filter(pk=origin.pk).exists()
    assert f"Removed {site.origin}" in alice.get("/account/origins").content.decode()


def test_a_bad_origin_says_why() -> None:
    alice = signed_in("alice")
    token = csrf(alice)
    alice.post(
        "/account/origins", {"origin": "https://example.com/path", "csrfmiddlewaretoken": token}
    )
    page = alice.get("/account/origins").content.decode()
    assert "That origin cannot be added" in page and "scheme, host and port only" in page
