"""The catalogue's own pages for refused requests, for people, in every mode (issue 47): a 404
with ``DEBUG`` on (an unmatched URL and a page's ``Http404``), a failed CSRF check (403) and the
per-client limit (429); programs keep their door's JSON (docs/catalogue.md, "Small things")."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

PAGE = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"  # a browser's
TECHNICAL = ("URLconf", "Django tried these URL patterns", "CSRF verification failed")


def _is_catalogue_page(response: Any) -> bool:
    body = response.content.decode()
    return (
        response["Content-Type"].startswith("text/html")
        and "A2A agent registry" in body
        and "default-src 'none'" in response["Content-Security-Policy"]
        and not any(marker in body for marker in TECHNICAL)
    )


@pytest.fixture
def debug(settings: Any) -> Any:
    settings.DEBUG = True
    return settings


# --- 404 with DEBUG on ---------------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/nope", "/nope/deeper/", "/agents-of-mine"])
def test_an_unknown_path_is_the_catalogues_404_with_debug_on(debug: Any, path: str) -> None:
    response = Client().get(path, HTTP_ACCEPT=PAGE)
    assert response.status_code == 404
    assert _is_catalogue_page(response), response.content[:500]
    assert "Page not found" in response.content.decode()


@pytest.mark.django_db
@pytest.mark.parametrize("debug_on", [True, False])
def test_programs_keep_json_for_an_unknown_path_in_both_modes(
    settings: Any, debug_on: bool
) -> None:
    settings.DEBUG = debug_on
    response = Client().get("/nope")  # no text/html in Accept: curl, an SDK
    assert response.status_code == 404
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["detail"] == "Nothing at /nope."
    ard = Client().get("/ard/nope", HTTP_ACCEPT=PAGE)
    assert ard.status_code == 404 and ard.json()["errorCode"] == "NOT_FOUND"


@pytest.mark.django_db
def test_a_pages_http404_is_the_catalogues_page_with_debug_on(debug: Any) -> None:
    """A view that raises Http404 (an origin that is not this account's) under DEBUG."""
    client = Client()
    client.force_login(get_user_model().objects.create_user(username="owner"))
    response = client.post("/account/origins/987654/verify", {"method": "http"}, HTTP_ACCEPT=PAGE)
    assert response.status_code == 404
    assert _is_catalogue_page(response), response.content[:500]


@pytest.mark.django_db
def test_a_missing_slash_still_redirects_with_debug_on(debug: Any) -> None:
    response = Client().get("/accounts/login", HTTP_ACCEPT=PAGE)
    assert response.status_code == 301 and response["Location"] == "/accounts/login/"


@pytest.mark.django_db
def test_the_admin_keeps_djangos_own_404(debug: Any, admin_client: Client) -> None:
    response = admin_client.get("/admin/no-such-page/", HTTP_ACCEPT=PAGE)
    assert response.status_code == 404
    assert not _is_catalogue_page(response)
    assert "catch_all_view" in response.content.decode()  # Django's technical page, as before


# --- 403: a failed CSRF check --------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("debug_on", [True, False])
def test_a_csrf_failure_is_the_catalogues_403_page(settings: Any, debug_on: bool) -> None:
    settings.DEBUG = debug_on
    client = Client(enforce_csrf_checks=True)
    response = client.post(
        "/accounts/login/", {"login": "x", "password": "y"}, HTTP_ACCEPT=PAGE,
        HTTP_REFERER="http://testserver//evil.example/form",
    )  # fmt: skip
    assert response.status_code == 403
    assert _is_catalogue_page(response), response.content[:500]
    body = response.content.decode()
    assert "The form was not sent" in body and "cookie" in body
    assert 'href="/evil.example/form"' in body  # back to our page, never to another host
    assert 'href="//' not in body


@pytest.mark.django_db
def test_a_csrf_failure_of_a_program_is_a_problem_document() -> None:
    client = Client(enforce_csrf_checks=True)
    response = client.post("/accounts/login/", {"login": "x"}, HTTP_ACCEPT="application/json")
    assert response.status_code == 403
    assert response["Content-Type"] == "application/problem+json"
    problem = response.json()
    assert problem["type"] == "/problems/forbidden"
    assert problem["detail"].startswith("The CSRF check failed: ")


# --- 429: the per-client limit -------------------------------------------------------------------


@pytest.mark.django_db
def test_a_person_over_the_limit_gets_a_page_and_programs_json(settings: Any) -> None:
    settings.REGISTRY_ANON_RATE = "2/minute"
    client = Client()
    for _ in range(2):
        assert client.get("/", HTTP_ACCEPT=PAGE).status_code == 200
    page = client.get("/", HTTP_ACCEPT=PAGE)
    assert page.status_code == 429
    assert _is_catalogue_page(page), page.content[:500]
    assert "Too many requests" in page.content.decode()
    wait = int(page["Retry-After"])
    assert 1 <= wait <= 60 and f"Wait {wait} second" in page.content.decode()

    api = client.get("/api/v1/agents", HTTP_ACCEPT=PAGE)  # a program's door, even from a browser
    assert api.status_code == 429 and api["Content-Type"] == "application/problem+json"
    assert api.json()["type"] == "/problems/rate-limited" and api["Retry-After"]
    ard = client.get("/ard/agents")
    assert ard.status_code == 429 and ard.json()["errorCode"] == "RATE_LIMIT_EXCEEDED"
    curl = client.get("/")  # no text/html in Accept
    assert curl.status_code == 429 and curl["Content-Type"] == "application/problem+json"
