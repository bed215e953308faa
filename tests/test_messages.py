"""The admin's messages are made on first use (registry/messages.py); other requests never
build the storage, and the admin's messages still reach the next page (tests/test_admin.py)."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib import messages
from django.http import HttpResponse
from django.test import Client, RequestFactory
from django.utils.functional import empty

from registry.messages import LazyMessageMiddleware

pytestmark = pytest.mark.django_db


def test_a_request_that_never_uses_messages_does_not_build_their_storage() -> None:
    response = Client().get("/healthz")
    assert response.status_code == 200
    assert response.wsgi_request._messages._wrapped is empty  # type: ignore[attr-defined]
    assert "messages" not in response.cookies


def test_a_message_added_is_stored_and_read_on_the_next_request(settings: Any) -> None:
    settings.MESSAGE_STORAGE = "django.contrib.messages.storage.cookie.CookieStorage"
    read: list[str] = []

    def add(request: Any) -> HttpResponse:
        messages.info(request, "queued")
        return HttpResponse("ok")

    def show(request: Any) -> HttpResponse:
        read.extend(str(m) for m in messages.get_messages(request))
        return HttpResponse("ok")

    first: Any = LazyMessageMiddleware(add)(RequestFactory().get("/admin/"))
    second = RequestFactory().get("/admin/")
    second.COOKIES["messages"] = first.cookies["messages"].value
    shown: Any = LazyMessageMiddleware(show)(second)
    assert read == ["queued"]
    assert shown.cookies["messages"].value == ""  # read once, then cleared
