"""Trusted publishing (issue 45 §1): a CI job's OIDC ID token for a publish token of one origin.

Real parts only: a local OIDC issuer on loopback (tests/publishers/oidc_issuer.py) with keys made
here, a real card server whose origin Bob proves the http way, and real accounts: Bob owns the
origin and trusts a workflow; Carol never controls it and cannot register one for it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone
from prometheus_client import REGISTRY
from rest_framework.test import APIClient

from cards.models import Agent
from cards.tasks import crawl_agent
from publishers import origins
from publishers.models import Origin, OriginEvent, PublisherToken
from publishers.proofs import http_file
from tests.factories import minimal_card
from tests.publishers.oidc_issuer import LocalIssuer, new_key, running_issuer
from tests.support import CardServer, running_server

pytestmark = pytest.mark.django_db

EXCHANGE = "/api/v1/trusted-publishing/exchange"
WORKFLOW = ".github/workflows/release.yml"
CARD = "/agents/weather/card.json"


@pytest.fixture
def issuer(loopback_allowed: None, settings: Any) -> Iterator[LocalIssuer]:
    with running_issuer() as local:
        settings.REGISTRY_TRUSTED_ISSUERS = [local.url]
        yield local


def prove(client: APIClient, server: CardServer) -> Origin:
    """The account proves ``server``'s origin: it serves its challenge there."""
    row = origins.claim(client.user, server.origin)  # type: ignore[attr-defined]
    path = http_file.WELL_KNOWN_PREFIX + str(row.pk)
    server.serve(path, row.challenge.encode(), content_type="text/plain")
    result = origins.verify(row, "http")
    assert result.verified, result.error
    return result.origin


def trust(client: APIClient, origin: Origin, local: LocalIssuer, **extra: str) -> Any:
    body = {"issuer": local.url, "repository": "octo/agents", "workflow": WORKFLOW, **extra}
    return client.post(f"/api/v1/origins/{origin.pk}/trusted-publishers", body, format="json")


@pytest.fixture
def trusted(bob: APIClient, site: CardServer, issuer: LocalIssuer) -> Origin:
    """Bob's verified origin (the card server's), trusting octo/agents' release workflow in
    the production environment."""
    origin = prove(bob, site)
    response = trust(bob, origin, issuer, environment="production")
    assert response.status_code == 201, response.content
    return origin


def exchange(token: str) -> Any:
    return APIClient().post(EXCHANGE, {"token": token}, format="json")


def with_token(secret: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
    return client


def card_on(server: CardServer, path: str = CARD, name: str = "Weather") -> str:
    card = minimal_card(
        name=name,
        supportedInterfaces=[
            {"url": server.url("/a2a"), "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
        ],
    )
    return server.serve(path, json.dumps(card).encode())


def counted(outcome: str, reason: str) -> float:
    labels = {"outcome": outcome, "reason": reason}
    return REGISTRY.get_sample_value("registry_trusted_exchanges_total", labels) or 0.0


def test_a_ci_token_becomes_a_publish_token_for_the_origin_only(
    bob: APIClient,
    site: CardServer,
    issuer: LocalIssuer,
    trusted: Origin,
    django_capture_on_commit_callbacks: Any,
) -> None:
    before = counted("ok", "ok")
    response = exchange(issuer.mint())
    assert response.status_code == 200, response.content
    body = response.json()
    assert set(body) == {"token", "expires_at", "origin"} and body["origin"] == site.origin
    stored = PublisherToken.objects.get(prefix=body["token"][:12])
    assert stored.scope == "origin" and stored.origin == trusted
    assert stored.account == bob.user  # type: ignore[attr-defined]
    assert stored.name == f"CI: octo/agents@{WORKFLOW}"
    minutes = (stored.expires_at - timezone.now()).total_seconds() / 60  # type: ignore[operator]
    assert 14 < minutes <= 15
    assert counted("ok", "ok") == before + 1
    event = OriginEvent.objects.get(origin=trusted, action="ci-exchange")
    assert event.detail["outcome"] == "ok" and event.detail["repository"] == "octo/agents"

    # The publish token submits a card on its origin: the agent is Bob's, and it reads it back.
    ci = with_token(body["token"])
    url = card_on(site)
    with django_capture_on_commit_callbacks(execute=False):
        submitted = ci.post("/api/v1/agents", {"url": url}, format="json")
    assert submitted.status_code == 202, submitted.content
    agent_id = submitted.json()["id"]
    crawl_agent.apply(args=[agent_id]).get()
    agent = Agent.objects.get(pk=agent_id)
    assert agent.status == "ok", agent.last_error
    assert agent.submitted_by == bob.user  # type: ignore[attr-defined]
    assert ci.get(f"/api/v1/agents/{agent_id}").status_code == 200
    with django_capture_on_commit_callbacks(execute=False):
        assert ci.post(f"/api/v1/agents/{agent_id}/recrawl").status_code == 202
    imported = ci.post("/api/v1/imports", {"urls": [site.url("/other.json")]}, format="json")
    assert imported.status_code == 202, imported.content

    # Outside its origin, and anything but publishing: a 403 token-scope problem.
    with running_server("127.0.0.2") as elsewhere:
        outside = ci.post("/api/v1/agents", {"url": card_on(elsewhere)}, format="json")
        mixed = [site.url("/a.json"), elsewhere.url("/b.json")]
        mixed_import = ci.post("/api/v1/imports", {"urls": mixed}, format="json")
    for refused in (
        outside,
        mixed_import,
        ci.post("/api/v1/imports", {"url": site.url("/list.json")}, format="json"),
        ci.get("/api/v1/agents"),
        ci.delete(f"/api/v1/agents/{agent_id}"),
        ci.get("/api/v1/tokens"),
        ci.post("/api/v1/tokens", {"name": "more", "scope": "publish"}, format="json"),
        ci.get("/api/v1/origins"),
        ci.post(f"/api/v1/origins/{trusted.pk}/trusted-publishers", {}, format="json"),
    ):
        assert refused.status_code == 403, refused.content
        problem = refused.json()
        assert problem["type"].endswith("/token-scope") and problem["token_scope"] == "origin"
        assert problem["token_origin"] == site.origin
    assert Agent.objects.count() == 1

    # The same ID token again: a replay.
    replay = exchange(issuer.mint(jti=event.detail["jti"]))
    assert replay.status_code == 401 and replay.json()["type"].endswith("/replayed")

    # Once expired, the publish token is a 401.
    PublisherToken.objects.filter(pk=stored.pk).update(
        expires_at=timezone.now() - timedelta(seconds=1)
    )
    late = ci.post("/api/v1/agents", {"url": url}, format="json")
    assert late.status_code == 401 and "expired" in late.json()["detail"]


@pytest.mark.parametrize(
    ("changes", "status", "reason"),
    [
        ({"aud": "another-registry"}, 401, "wrong-audience"),
        ({"exp": "past"}, 401, "expired"),
        ({"nbf": "future"}, 401, "not-yet-valid"),
        ({"jti": None}, 401, "missing-claim"),
        ({"repository": "octo/other"}, 403, "no-match"),
        ({"workflow": ".github/workflows/test.yml"}, 403, "no-match"),
        ({"environment": "staging"}, 403, "no-match"),
        ({"environment": None}, 403, "no-match"),
    ],
)
def test_tokens_that_do_not_check_out_are_refused(
    issuer: LocalIssuer, trusted: Origin, changes: dict[str, Any], status: int, reason: str
) -> None:
    now = int(timezone.now().timestamp())
    if changes.get("exp") == "past":
        changes = {"iat": now - 900, "nbf": now - 900, "exp": now - 600}
    if changes.get("nbf") == "future":
        changes = {"nbf": now + 600, "exp": now + 900}
    before = counted("refused", reason)
    response = exchange(issuer.mint(**changes))
    assert response.status_code == status, response.content
    problem = response.json()
    assert problem["type"].endswith("/" + reason), problem
    assert "octo/agents" not in problem["detail"]  # never which repositories are registered
    assert counted("refused", reason) == before + 1
    assert not PublisherToken.objects.filter(scope="origin").exists()


def test_the_workflow_and_environment_match_as_configured(
    bob: APIClient, issuer: LocalIssuer, trusted: Origin
) -> None:
    # A trusted publisher without an environment takes a job in any environment.
    any_env = trust(bob, trusted, issuer, workflow=".github/workflows/nightly.yml")
    assert any_env.status_code == 201, any_env.content
    token = issuer.mint(workflow=".github/workflows/nightly.yml", environment="staging")
    assert exchange(token).status_code == 200
    # The reusable workflow's ref alone matches too (workflow_ref names the caller).
    token = issuer.mint(workflow_ref=f"octo/agents/{WORKFLOW}@refs/tags/v1")
    assert exchange(token).status_code == 200
    # A workflow of another repository that happens to have the same path does not.
    other = issuer.mint(
        job_workflow_ref=f"evil/agents/{WORKFLOW}@refs/heads/main",
        workflow_ref=f"evil/agents/{WORKFLOW}@refs/heads/main",
    )
    assert exchange(other).status_code == 403


def test_an_issuer_not_allowed_is_refused_before_any_fetch(
    issuer: LocalIssuer, trusted: Origin, settings: Any
) -> None:
    settings.REGISTRY_TRUSTED_ISSUERS = ["https://token.actions.githubusercontent.com"]
    response = exchange(issuer.mint())
    assert response.status_code == 401
    assert response.json()["type"].endswith("/issuer-not-allowed")
    assert issuer.jwks_fetches() == 0


def test_a_bad_signature_is_refused(issuer: LocalIssuer, trusted: Origin) -> None:
    response = exchange(issuer.mint(key=new_key()))
    assert response.status_code == 401
    assert response.json()["type"].endswith("/bad-signature")
    garbage = exchange("not.a.jwt")
    assert garbage.status_code == 401 and garbage.json()["type"].endswith("/malformed")


def test_a_rotated_key_is_fetched_once_and_the_old_one_stops(
    issuer: LocalIssuer, trusted: Origin
) -> None:
    old = issuer.mint()
    assert exchange(issuer.mint()).status_code == 200
    assert exchange(issuer.mint()).status_code == 200
    assert issuer.jwks_fetches() == 1  # cached
    issuer.rotate()
    assert exchange(issuer.mint()).status_code == 200  # new kid: the set is fetched again
    assert issuer.jwks_fetches() == 2
    stale = exchange(old)  # its key is gone from the set
    assert stale.status_code == 401 and stale.json()["type"].endswith("/unknown-key")
    # An unknown kid refetches at most once per kid in a while: no fetch storm.
    for _ in range(3):
        assert exchange(issuer.mint(kid="nobody")).status_code == 401
    assert issuer.jwks_fetches() <= 4


def test_a_lapsed_origin_stops_the_exchange_and_its_tokens(
    issuer: LocalIssuer, trusted: Origin, site: CardServer, settings: Any
) -> None:
    secret = exchange(issuer.mint()).json()["token"]
    settings.REGISTRY_ORIGIN_RECHECK_FAILURES = 1
    site.routes.pop(http_file.WELL_KNOWN_PREFIX + str(trusted.pk))
    origins.recheck(trusted)
    trusted.refresh_from_db()
    assert trusted.state == Origin.State.LAPSED
    response = exchange(issuer.mint())
    assert response.status_code == 403
    assert response.json()["type"].endswith("/origin-not-verified")
    refused = with_token(secret).post("/api/v1/agents", {"url": card_on(site)}, format="json")
    assert refused.status_code == 403 and "no longer verified" in refused.json()["detail"]


def test_only_the_owner_of_a_verified_origin_registers_trusted_publishers(
    bob: APIClient, carol: APIClient, site: CardServer, issuer: LocalIssuer
) -> None:
    carols = origins.claim(carol.user, site.origin)  # type: ignore[attr-defined]
    assert not origins.verify(carols, "http").verified  # Carol never controls it
    refused = trust(carol, carols, issuer)
    assert refused.status_code == 403
    assert refused.json()["type"].endswith("/origin-not-verified")

    origin = prove(bob, site)
    assert trust(carol, origin, issuer).status_code == 404  # Bob's: not Carol's to see
    assert carol.get(f"/api/v1/origins/{origin.pk}/trusted-publishers").status_code == 404
    unknown = trust(bob, origin, issuer, issuer="https://ci.example")
    assert unknown.status_code == 400 and unknown.json()["errors"][0]["pointer"] == "/issuer"
    bad = trust(bob, origin, issuer, repository="norepo")
    assert bad.status_code == 400

    made = trust(bob, origin, issuer)
    assert made.status_code == 201, made.content
    assert trust(bob, origin, issuer).status_code == 200  # the same again
    listed = bob.get(f"/api/v1/origins/{origin.pk}/trusted-publishers").json()
    assert [row["repository"] for row in listed] == ["octo/agents"]
    publisher_id = made.json()["id"]
    path = f"/api/v1/origins/{origin.pk}/trusted-publishers/{publisher_id}"
    assert carol.delete(path).status_code == 404
    assert exchange(issuer.mint()).status_code == 200
    assert bob.delete(path).status_code == 204
    assert exchange(issuer.mint()).status_code == 403
    actions = set(origin.events.values_list("action", flat=True))
    assert {"trusted-publisher-added", "trusted-publisher-removed", "ci-exchange"} <= actions
    # A token of scope origin is trusted publishing's alone.
    made_token = bob.post("/api/v1/tokens", {"name": "ci", "scope": "origin"}, format="json")
    assert made_token.status_code == 400


def test_the_exchange_is_rate_limited_per_client(
    issuer: LocalIssuer, trusted: Origin, settings: Any
) -> None:
    settings.REGISTRY_TRUSTED_EXCHANGE_RATE = "2/minute"
    answers = [exchange("not.a.jwt").status_code for _ in range(3)]
    assert answers == [401, 401, 429]
