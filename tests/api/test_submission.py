from __future__ import annotations

import json
import threading
from typing import Any

import pytest
from rest_framework.test import APIClient

from cards.models import Agent
from tests.factories import minimal_card
from tests.support import CardServer

pytestmark = pytest.mark.django_db


def submit(client: APIClient, url: Any, capture: Any) -> Any:
    with capture(execute=True):
        return client.post("/api/v1/agents", {"url": url}, format="json")


def test_it_discovers_the_card_of_an_origin_on_the_well_known_path(
    client_auth: APIClient,
    card_server: CardServer,
    loopback_allowed: None,
    django_capture_on_commit_callbacks: Any,
) -> None:
    card_server.serve(
        "/.well-known/agent-card.json", json.dumps(minimal_card(name="Origin agent")).encode()
    )
    response = submit(client_auth, card_server.origin, django_capture_on_commit_callbacks)
    assert response.status_code == 202
    assert response.json()["status"] == "pending"
    agent = Agent.objects.get()
    assert agent.status == "ok", agent.last_error
    assert agent.name == "Origin agent"
    assert agent.card_url == card_server.url("/.well-known/agent-card.json")


def test_it_falls_back_to_the_older_agent_json_path(
    client_auth: APIClient,
    card_server: CardServer,
    loopback_allowed: None,
    django_capture_on_commit_callbacks: Any,
) -> None:
    card_server.serve("/.well-known/agent.json", json.dumps(minimal_card(name="Old path")).encode())
    submit(client_auth, card_server.origin + "/", django_capture_on_commit_callbacks)
    agent = Agent.objects.get()
    assert agent.name == "Old path"
    assert card_server.hits("/.well-known/agent-card.json") == 1
    assert agent.card_url.endswith("/.well-known/agent.json")


def test_it_uses_a_direct_card_url_as_given(
    client_auth: APIClient,
    card_server: CardServer,
    loopback_allowed: None,
    django_capture_on_commit_callbacks: Any,
) -> None:
    url = card_server.serve("/cards/mine.json", json.dumps(minimal_card(name="Direct")).encode())
    submit(client_auth, url, django_capture_on_commit_callbacks)
    assert Agent.objects.get().name == "Direct"
    assert card_server.hits("/.well-known/agent-card.json") == 0


def test_the_same_url_again_returns_the_existing_agent(
    client_auth: APIClient,
    card_server: CardServer,
    loopback_allowed: None,
    django_capture_on_commit_callbacks: Any,
) -> None:
    url = card_server.serve("/card.json", json.dumps(minimal_card()).encode())
    first = submit(client_auth, url, django_capture_on_commit_callbacks)
    variant = url.replace("http://", "HTTP://") + "#fragment"
    second = submit(client_auth, variant, django_capture_on_commit_callbacks)
    assert first.status_code == 202
    assert second.status_code == 200
    assert first.json()["id"] == second.json()["id"]
    assert Agent.objects.count() == 1


def test_a_default_port_and_upper_case_host_are_normalised(
    client_auth: APIClient,
    loopback_allowed: None,
    django_capture_on_commit_callbacks: Any,
    settings: Any,
) -> None:
    settings.CELERY_TASK_ALWAYS_EAGER = True
    with django_capture_on_commit_callbacks(execute=False):
        response = client_auth.post(
            "/api/v1/agents", {"url": "http://LOCALHOST:80/Card.json#x"}, format="json"
        )
    assert response.status_code == 202
    assert response.json()["url"] == "http://localhost/Card.json"


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("ftp://example.com/card.json", "ftp: URLs are not fetched"),
        ("https://user:secret@example.com/", "user name or password"),
        ("http://10.0.0.1/", "10.0.0.1"),
        ("http://[::ffff:10.0.0.1]/", "10.0.0.1"),
        ("http://169.254.169.254/latest/meta-data", "169.254.169.254"),
        ("not a url", "URL"),
        ("", "empty"),
        (42, "string"),
    ],
)
def test_a_bad_url_is_a_problem_with_the_reason(
    client_auth: APIClient, loopback_allowed: None, url: Any, reason: str
) -> None:
    response = client_auth.post("/api/v1/agents", {"url": url}, format="json")
    assert response.status_code == 400
    assert response["Content-Type"] == "application/problem+json"
    problem = response.json()
    assert problem["type"] == "/problems/invalid-url"
    assert reason.lower() in problem["detail"].lower()
    assert problem["errors"][0]["pointer"] == "/url"
    assert Agent.objects.count() == 0


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        (b'{"url": ', "application/json"),
        (b"[1, 2]", "application/json"),
        (b"{}", "application/json"),
        (b"url=https://example.com", "application/x-www-form-urlencoded"),
    ],
)
def test_a_malformed_submission_is_a_problem_and_stores_nothing(
    client_auth: APIClient, body: bytes, content_type: str
) -> None:
    from tests.factories import agent_from_card

    agent_from_card(minimal_card(name="Already here"))
    response = client_auth.generic("POST", "/api/v1/agents", body, content_type=content_type)
    assert 400 <= response.status_code < 500
    assert response["Content-Type"] == "application/problem+json"
    assert {"type", "title", "status", "detail"} <= set(response.json())
    assert Agent.objects.count() == 1
    assert Agent.objects.get().name == "Already here"


def test_submitting_needs_a_token(client_anon: APIClient) -> None:
    response = client_anon.post("/api/v1/agents", {"url": "https://example.com"}, format="json")
    assert response.status_code == 401
    assert response["Content-Type"] == "application/problem+json"


def test_a_bearer_token_is_accepted(
    token: str, loopback_allowed: None, django_capture_on_commit_callbacks: Any
) -> None:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    with django_capture_on_commit_callbacks(execute=False):
        response = client.post(
            "/api/v1/agents", {"url": "http://127.0.0.1:9/card.json"}, format="json"
        )
    assert response.status_code == 202


def test_an_unknown_token_is_refused(client_anon: APIClient) -> None:
    client_anon.credentials(HTTP_AUTHORIZATION="Token nope")
    response = client_anon.post("/api/v1/agents", {"url": "https://example.com"}, format="json")
    assert response.status_code == 401
    assert response.json()["type"] == "/problems/authentication-failed"


@pytest.mark.django_db(transaction=True)
def test_concurrent_submissions_of_one_url_make_one_agent(
    token: str, loopback_allowed: None, settings: Any
) -> None:
    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip("concurrent writers need PostgreSQL; SQLite locks the whole database")
    # No crawl: the broker-less eager mode would fetch; only the row matters here.
    settings.CELERY_TASK_ALWAYS_EAGER = True
    from registry.celery import app

    app.conf.task_always_eager = True
    statuses: list[int] = []
    barrier = threading.Barrier(8)

    def post() -> None:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
        barrier.wait()
        try:
            statuses.append(
                client.post(
                    "/api/v1/agents", {"url": "http://127.0.0.1:9/same.json"}, format="json"
                ).status_code
            )
        finally:
            connection.close()

    threads = [threading.Thread(target=post) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert Agent.objects.count() == 1
    assert sorted(statuses).count(202) == 1
    assert sorted(statuses).count(200) == 7
