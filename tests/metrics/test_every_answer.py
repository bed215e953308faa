"""Every answer is counted by status, once (issue 46, section 3): those the limiter and other
middleware make, which django-prometheus's after-middleware never sees, as well as the views'.
Read back through /metrics with Prometheus' text parser."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.http import HttpRequest, HttpResponse
from django.test import Client

from registry.metrics_requests import MIDDLEWARE_VIEW
from tests.metrics.scraping import Samples, scrape, value

pytestmark = pytest.mark.django_db

BY_STATUS = "django_http_responses_total_by_status_total"
BY_VIEW = "django_http_responses_total_by_status_view_method_total"


class FailingInMiddleware:
    """A middleware whose lookup fails as the token lookup does while PostgreSQL is away."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.headers.get("X-Fail-Here"):
            raise ConnectionError("the database went away")
        return self.get_response(request)


@pytest.fixture
def http() -> Client:
    return Client(HTTP_HOST="127.0.0.1", raise_request_exception=False)


def delta(before: Samples, after: Samples, name: str, **labels: str) -> float:
    return value(after, name, **labels) - value(before, name, **labels)


def test_a_views_answer_is_counted_once(http: Client) -> None:
    before = scrape(http)
    assert http.get("/api/v1/tags").status_code == 200
    after = scrape(http)
    # The scrape before is itself counted (200, view "metrics") when it has been answered.
    assert delta(before, after, BY_STATUS, status="200") == 2
    assert delta(before, after, BY_VIEW, status="200", view=MIDDLEWARE_VIEW, method="GET") == 0


def test_the_limiters_429s_are_counted(http: Client, settings: Any) -> None:
    settings.REGISTRY_ANON_RATE = "2/minute"
    before = scrape(http)
    statuses = [http.get("/api/v1/tags").status_code for _ in range(5)]
    after = scrape(http)
    assert statuses == [200, 200, 429, 429, 429]
    assert delta(before, after, BY_STATUS, status="429") == 3
    assert delta(before, after, BY_VIEW, status="429", view=MIDDLEWARE_VIEW, method="GET") == 3
    assert delta(before, after, "registry_limiter_refusals_total", limit="anon") == 3


def test_a_500_raised_in_a_middleware_is_counted(http: Client, settings: Any) -> None:
    settings.MIDDLEWARE = [
        *settings.MIDDLEWARE[:-1],
        f"{__name__}.FailingInMiddleware",
        settings.MIDDLEWARE[-1],
    ]
    before = scrape(http)
    assert http.get("/api/v1/tags", HTTP_X_FAIL_HERE="1").status_code == 500
    assert http.get("/api/v1/tags").status_code == 200
    after = scrape(http)
    assert delta(before, after, BY_STATUS, status="500") == 1
    assert delta(before, after, BY_VIEW, status="500", view=MIDDLEWARE_VIEW, method="GET") == 1
    assert delta(before, after, BY_STATUS, status="200") == 2  # the view's, and one scrape


def test_a_host_refused_by_a_middleware_is_counted() -> None:
    stranger = Client(HTTP_HOST="not-allowed.example", raise_request_exception=False)
    http = Client(HTTP_HOST="127.0.0.1")
    before = scrape(http)
    assert stranger.get("/api/v1/tags").status_code == 400
    after = scrape(http)
    assert delta(before, after, BY_STATUS, status="400") == 1
