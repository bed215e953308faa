"""Who may read /metrics: loopback and REGISTRY_METRICS_ALLOW by address (as the per-client
limits find it: X-Forwarded-For only from trusted proxies), or the bearer token; everyone else
gets the 404 problem of a path that does not exist. Not in the OpenAPI document, not throttled."""

from __future__ import annotations

import ipaddress
from typing import Any

import pytest
from django.test import Client

from tests.metrics.scraping import parse

pytestmark = pytest.mark.django_db

STRANGER = "203.0.113.9"
TOKEN = "a-long-random-scrape-token-0123456789"


@pytest.fixture
def http() -> Client:
    return Client(HTTP_HOST="127.0.0.1")


def refused(response: Any) -> bool:
    """The answer of a path that does not exist: a 404 problem that says nothing of metrics."""
    if response.status_code != 404:
        return False
    assert response["Content-Type"].startswith("application/problem+json")
    assert b"registry_" not in response.content and b"# TYPE" not in response.content
    return True


def test_loopback_reads_the_exposition(http: Client) -> None:
    response = http.get("/metrics")  # REMOTE_ADDR 127.0.0.1
    assert response.status_code == 200
    assert response["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8"
    assert response["Cache-Control"] == "no-store"
    samples = parse(response.content.decode())
    assert any(name.startswith("django_http_") for name, _ in samples)
    assert http.get("/metrics", REMOTE_ADDR="::1").status_code == 200


def test_another_address_gets_a_404_on_every_method(http: Client) -> None:
    assert refused(http.get("/metrics", REMOTE_ADDR=STRANGER))
    assert refused(http.post("/metrics", REMOTE_ADDR=STRANGER))
    assert refused(http.head("/metrics", REMOTE_ADDR=STRANGER))
    # Allowed clients learn the methods; strangers only the 404 above.
    assert http.post("/metrics").status_code == 405


def test_the_token_opens_it_to_any_address(http: Client, settings: Any) -> None:
    settings.REGISTRY_METRICS_TOKEN = TOKEN
    response = http.get("/metrics", REMOTE_ADDR=STRANGER, HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    assert response.status_code == 200
    assert b"# TYPE" in response.content


@pytest.mark.parametrize(
    "header",
    [
        f"Bearer {TOKEN}x",
        f"Bearer {TOKEN[:-1]}",
        f"Token {TOKEN}",
        TOKEN,
        "Bearer",
        f"Bearer {TOKEN} extra",
        "Bearer \xff\xfe",
    ],
)
def test_a_wrong_token_is_refused(http: Client, settings: Any, header: str) -> None:
    settings.REGISTRY_METRICS_TOKEN = TOKEN
    assert refused(http.get("/metrics", REMOTE_ADDR=STRANGER, HTTP_AUTHORIZATION=header))


def test_no_token_is_accepted_when_none_is_set(http: Client, settings: Any) -> None:
    settings.REGISTRY_METRICS_TOKEN = None
    assert refused(http.get("/metrics", REMOTE_ADDR=STRANGER, HTTP_AUTHORIZATION="Bearer "))
    assert refused(http.get("/metrics", REMOTE_ADDR=STRANGER, HTTP_AUTHORIZATION="Bearer None"))


def test_allowed_networks_replace_loopback(http: Client, settings: Any) -> None:
    settings.REGISTRY_METRICS_ALLOW = [ipaddress.ip_network("198.51.100.0/24")]
    assert http.get("/metrics", REMOTE_ADDR="198.51.100.7").status_code == 200
    assert http.get("/metrics", REMOTE_ADDR="::ffff:198.51.100.7").status_code == 200
    assert refused(http.get("/metrics"))  # loopback is no longer in the list
    settings.REGISTRY_METRICS_ALLOW = []  # REGISTRY_METRICS_ALLOW=none: the token only
    assert refused(http.get("/metrics"))


def test_a_forged_forwarded_for_does_not_open_it(http: Client, settings: Any) -> None:
    # From an untrusted peer the header is not believed, loopback or not.
    assert refused(http.get("/metrics", REMOTE_ADDR=STRANGER, HTTP_X_FORWARDED_FOR="127.0.0.1"))
    # Behind a trusted proxy the client is the forwarded address: a stranger stays one, and the
    # proxy's own (allowed) address does not lend itself to the clients it forwards.
    settings.REGISTRY_TRUSTED_PROXIES = [ipaddress.ip_network("10.0.0.0/8")]
    settings.REGISTRY_METRICS_ALLOW = [ipaddress.ip_network("10.0.0.0/8")]
    forwarded = {"REMOTE_ADDR": "10.0.0.2", "HTTP_X_FORWARDED_FOR": STRANGER}
    assert refused(http.get("/metrics", **forwarded))
    spoofed = {"REMOTE_ADDR": "10.0.0.2", "HTTP_X_FORWARDED_FOR": f"10.0.0.5, {STRANGER}"}
    assert refused(http.get("/metrics", **spoofed))
    inside = {"REMOTE_ADDR": "10.0.0.2", "HTTP_X_FORWARDED_FOR": "10.1.2.3"}
    assert http.get("/metrics", **inside).status_code == 200


def test_scrapes_are_not_counted_by_the_anonymous_limit(http: Client, settings: Any) -> None:
    settings.REGISTRY_ANON_RATE = "2/minute"
    for _ in range(5):
        assert http.get("/metrics").status_code == 200
    # The limit itself still holds elsewhere.
    statuses = [http.get("/api/v1/").status_code for _ in range(3)]
    assert statuses == [200, 200, 429]


def test_metrics_is_not_in_the_openapi_document(http: Client) -> None:
    document = http.get("/api/schema", HTTP_ACCEPT="application/json").json()
    assert not [path for path in document["paths"] if "metrics" in path]
