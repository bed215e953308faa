"""Logs say what happened, each thing once (issue 18): real requests and a real crawl."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from django.test import Client, override_settings
from django.urls import include, path
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from cards import tasks
from cards.models import Agent
from tests.support import CardServer

pytestmark = pytest.mark.django_db


class _Broken(APIView):
    authentication_classes: list[Any] = []
    permission_classes: list[Any] = []

    def get(self, request: Request) -> Response:
        raise RuntimeError("a bug in a view")


class _Refusing(APIView):
    authentication_classes: list[Any] = []
    permission_classes: list[Any] = []

    def get(self, request: Request) -> Response:
        raise ValidationError({"x": ["is not accepted"]})


urlpatterns = [
    path("broken", _Broken.as_view()),
    path("refusing", _Refusing.as_view()),
    path("", include("registry.urls")),
]


@override_settings(ROOT_URLCONF=__name__)
def test_a_500_is_logged_once_with_its_traceback(caplog: pytest.LogCaptureFixture) -> None:
    client = Client(raise_request_exception=False)
    with caplog.at_level(logging.INFO):
        response = client.get("/broken")

    assert response.status_code == 500
    assert response["Content-Type"] == "application/problem+json"
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1, [r.getMessage() for r in errors]
    assert errors[0].getMessage() == "Internal Server Error: /broken"
    assert errors[0].exc_info is not None


@override_settings(ROOT_URLCONF=__name__)
def test_a_400_is_not_logged_again_by_django(caplog: pytest.LogCaptureFixture) -> None:
    client = Client()
    with caplog.at_level(logging.INFO):
        response = client.get("/refusing")

    assert response.status_code == 400
    # The access log (runserver, gunicorn) has the request's one line; nothing else repeats it.
    assert not [r for r in caplog.records if "Bad Request" in r.getMessage()]


def test_a_crawl_that_recorded_an_error_is_logged_as_a_failure_with_its_reason(
    card_server: CardServer, loopback_allowed: None, caplog: pytest.LogCaptureFixture
) -> None:
    url = card_server.serve("/gone.json", b'{"error": "no"}', status=403)
    agent = Agent.objects.create(url=url, card_url=url)

    with caplog.at_level(logging.INFO):
        outcome = tasks.crawl_agent.apply(args=(str(agent.pk),)).get()

    agent.refresh_from_db()
    assert outcome == "error" and agent.last_error
    lines = [r.getMessage() for r in caplog.records if str(agent.pk) in r.getMessage()]
    assert any(line.startswith(f"crawl of agent {agent.pk} failed: ") for line in lines), lines
    assert any(agent.last_error in line and "next try" in line for line in lines)
    assert not any("succeeded" in line for line in lines)


def test_quiet_loggers_are_configured() -> None:
    # Celery's "Task ... succeeded in ...: 'error'" and kombu's "No hostname was supplied"
    # (no broker configured: eager tasks) are not written.
    assert not logging.getLogger("celery.app.trace").isEnabledFor(logging.INFO)
    assert not logging.getLogger("kombu.connection").isEnabledFor(logging.WARNING)
    assert logging.getLogger("celery.app.trace").isEnabledFor(logging.ERROR)
