"""Tokens an owner manages (issue 44 §2): three real accounts, a real card server on loopback.

Ann owns two agents, Ben one; Cy is an operator's account with a key from ``issue_token``.
Every request goes through the whole stack: middleware (the rate limiter), DRF authentication
(the scope), the views and PostgreSQL.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from cards.models import Agent
from publishers.models import PublisherToken
from tests.factories import minimal_card
from tests.support import CardServer

pytestmark = pytest.mark.django_db

PROBLEM = "application/problem+json"


def bearer(secret: str, scheme: str = "Bearer") -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"{scheme} {secret}")
    return client


def signed_in(account: Any) -> APIClient:
    client = APIClient()
    client.force_login(account)
    return client


def make_token(account: Any, **body: Any) -> str:
    response = signed_in(account).post(
        "/api/v1/tokens", {"name": "t", "scope": "publish", **body}, format="json"
    )
    assert response.status_code == 201, response.content
    secret: str = response.json()["token"]
    return secret


def row(secret: str) -> PublisherToken:
    return PublisherToken.objects.get(digest=hashlib.sha256(secret.encode()).hexdigest())


@dataclass
class World:
    ann: Any
    ben: Any
    ann_one: Agent
    ann_two: Agent
    ben_one: Agent
    server: CardServer
    capture: Any

    def submit(self, client: APIClient, path: str, name: str) -> Any:
        url = self.server.serve(path, json.dumps(minimal_card(name=name)).encode())
        with self.capture(execute=True):
            return client.post("/api/v1/agents", {"url": url}, format="json")


@pytest.fixture
def world(
    card_server: CardServer, loopback_allowed: None, django_capture_on_commit_callbacks: Any
) -> World:
    users = get_user_model().objects
    ann = users.create_user(username="ann", email="ann@example.com", password="x-pass-1234")
    ben = users.create_user(username="ben", email="ben@example.com", password="x-pass-5678")
    partial = World(ann, ben, None, None, None, card_server, django_capture_on_commit_callbacks)  # type: ignore[arg-type]
    ids = []
    for account, path, name in (
        (ann, "/ann/one.json", "Ann one"),
        (ann, "/ann/two.json", "Ann two"),
        (ben, "/ben/one.json", "Ben one"),
    ):
        response = partial.submit(signed_in(account), path, name)
        assert response.status_code == 202, response.content
        ids.append(response.json()["id"])
    agents = [Agent.objects.get(pk=pk) for pk in ids]
    assert [a.submitted_by_id for a in agents] == [ann.pk, ann.pk, ben.pk]
    partial.ann_one, partial.ann_two, partial.ben_one = agents
    return partial


def assert_scope_refused(response: Any, says: str) -> None:
    assert response.status_code == 403, response.content
    assert response["Content-Type"] == PROBLEM
    body = response.json()
    assert body["type"].endswith("/token-scope")
    assert says in body["detail"]


# --- made, shown once, stored as a digest -----------------------------------------------------


def test_a_token_is_shown_once_and_only_its_digest_is_kept(world: World) -> None:
    answer = signed_in(world.ann).post(
        "/api/v1/tokens",
        {"name": "CI deploys", "scope": "publish", "expires_in_days": 30},
        format="json",
    )
    assert answer.status_code == 201
    assert answer["Cache-Control"] == "no-store"
    made = answer.json()
    secret = made["token"]
    assert re.fullmatch(r"a2ar_[A-Za-z0-9_-]{43}", secret)
    stored = PublisherToken.objects.get(pk=made["id"])
    assert stored.digest == hashlib.sha256(secret.encode()).hexdigest()
    assert stored.prefix == secret[:12] == made["prefix"]
    assert stored.account == world.ann and stored.scope == "publish"
    assert stored.expires_at is not None
    assert timedelta(days=29) < stored.expires_at - timezone.now() <= timedelta(days=30)
    assert all(secret not in str(value) for value in vars(stored).values())
    listed = signed_in(world.ann).get("/api/v1/tokens").json()
    assert listed["total"] == 1
    (entry,) = listed["results"]
    assert entry["name"] == "CI deploys" and entry["state"] == "active"
    assert "token" not in entry and "digest" not in entry
    assert secret not in json.dumps(listed) and stored.digest not in json.dumps(listed)


def test_a_publish_token_submits_and_records_when_it_was_last_used(world: World) -> None:
    secret = make_token(world.ann, name="submitter")
    assert row(secret).last_used_at is None
    answer = world.submit(bearer(secret), "/ann/three.json", "Ann three")
    assert answer.status_code == 202, answer.content
    assert Agent.objects.get(pk=answer.json()["id"]).submitted_by == world.ann
    used = row(secret).last_used_at
    assert used is not None and timezone.now() - used < timedelta(seconds=30)
    # Within the minute, no further write; after it, the next use is recorded.
    assert bearer(secret, "Token").get("/api/v1/agents").status_code == 200
    assert row(secret).last_used_at == used
    PublisherToken.objects.filter(digest=row(secret).digest).update(
        last_used_at=used - timedelta(minutes=5)
    )
    assert bearer(secret).get("/api/v1/agents").status_code == 200
    later = row(secret).last_used_at
    assert later is not None and later > used - timedelta(minutes=1)


def test_a_session_post_needs_the_csrf_token(world: World) -> None:
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(world.ann)
    refused = client.post("/api/v1/tokens", {"name": "x", "scope": "read"}, format="json")
    assert refused.status_code == 403
    assert not PublisherToken.objects.exists()


# --- scopes -------------------------------------------------------------------------------------


def test_a_read_token_reads_and_is_refused_every_change(world: World) -> None:
    secret = make_token(world.ann, name="reader", scope="read")
    reader = bearer(secret)
    assert reader.get("/api/v1/agents").status_code == 200
    # Her own agent that is not public yet: the token reads as its account.
    detail = reader.get(f"/api/v1/agents/{world.ann_one.pk}")
    assert detail.status_code == 200 and detail.json()["owned"] is True
    # A POST that only checks what it is sent is a read.
    checked = reader.post("/api/v1/validate", minimal_card(), format="json")
    assert checked.status_code == 200
    refused = reader.post("/api/v1/agents", {"url": world.server.url("/x.json")}, format="json")
    assert_scope_refused(refused, "scope read: it may only read")
    assert refused.json()["token_scope"] == "read"
    assert_scope_refused(reader.delete(f"/api/v1/agents/{world.ann_one.pk}"), "scope read")
    # Views that set their own permission classes are held to the scope too.
    assert_scope_refused(reader.post(f"/api/v1/agents/{world.ann_one.pk}/probe"), "scope read")
    assert_scope_refused(reader.post(f"/api/v1/agents/{world.ann_one.pk}/try", {}), "scope read")
    assert Agent.objects.filter(deleted_at__isnull=True).count() == 3


def test_an_agent_token_changes_its_agent_only(world: World) -> None:
    secret = make_token(world.ann, name="one agent", scope="agent", agent=str(world.ann_one.pk))
    assert row(secret).agent == world.ann_one
    scoped = bearer(secret)
    # Reads anywhere.
    assert scoped.get(f"/api/v1/agents/{world.ann_two.pk}").status_code == 200
    assert scoped.get("/api/v1/agents").status_code == 200
    # Another of Ann's agents, Ben's agent, a new agent: refused.
    says = f"scoped to agent {world.ann_one.pk}"
    assert_scope_refused(scoped.delete(f"/api/v1/agents/{world.ann_two.pk}"), says)
    assert_scope_refused(scoped.delete(f"/api/v1/agents/{world.ben_one.pk}"), says)
    assert_scope_refused(scoped.post(f"/api/v1/agents/{world.ann_two.pk}/probe"), says)
    refused = world.submit(scoped, "/ann/new.json", "New")
    assert_scope_refused(refused, says)
    assert refused.json()["token_agent"] == str(world.ann_one.pk)
    assert_scope_refused(scoped.post("/api/v1/tokens", {"name": "n", "scope": "read"}), says)
    # Its own agent: what the account may do.
    assert scoped.delete(f"/api/v1/agents/{world.ann_one.pk}").status_code == 204
    assert set(Agent.objects.filter(deleted_at__isnull=False)) == {world.ann_one}


def test_an_agent_token_needs_an_agent_the_account_manages(world: World) -> None:
    ann = signed_in(world.ann)
    for body, pointer in (
        ({"scope": "agent"}, "/agent"),
        ({"scope": "read", "agent": str(world.ann_one.pk)}, "/agent"),
        ({"scope": "admin"}, "/scope"),
        ({"scope": "read", "expires_in_days": 0}, "/expires_in_days"),
        ({"scope": "read", "expires_in_days": 10_000}, "/expires_in_days"),
        ({"scope": "read", "expires_at": "2999-01-01T00:00:00Z"}, "/expires_at"),  # not taken
        ({"scope": "read", "lifetime": 3}, "/lifetime"),
    ):
        answer = ann.post("/api/v1/tokens", {"name": "n", **body}, format="json")
        assert answer.status_code == 400, body
        assert answer["Content-Type"] == PROBLEM
        assert answer.json()["errors"][0]["pointer"] == pointer, body
    # Another account's agent, or none: as if it did not exist (404), nothing made.
    for agent in (str(world.ben_one.pk), "not-a-uuid"):
        others = {"name": "n", "scope": "agent", "agent": agent}
        missing = ann.post("/api/v1/tokens", others, format="json")
        assert missing.status_code == 404 and missing.json()["type"].endswith("no-such-agent")
    assert not PublisherToken.objects.exists()


# --- refused tokens: 401 ----------------------------------------------------------------------


def test_expired_revoked_and_unknown_tokens_are_refused_with_401(world: World) -> None:
    expired, revoked = make_token(world.ann, name="e"), make_token(world.ann, name="r")
    PublisherToken.objects.filter(pk=row(expired).pk).update(
        expires_at=timezone.now() - timedelta(seconds=1)
    )
    ann = signed_in(world.ann)
    assert ann.delete(f"/api/v1/tokens/{row(revoked).pk}").status_code == 204
    assert row(revoked).revoked_at is not None
    for secret, says in (
        (expired, "expired"),
        (revoked, "revoked"),
        ("a2ar_" + "x" * 43, "Unknown token"),
    ):
        for method in ("get", "post"):
            answer = getattr(bearer(secret), method)("/api/v1/agents", {}, format="json")
            assert answer.status_code == 401, (secret, method)
            assert answer["Content-Type"] == PROBLEM
            assert says in answer.json()["detail"]
            assert answer["WWW-Authenticate"] == "Token"
    states = {t["name"]: t["state"] for t in ann.get("/api/v1/tokens").json()["results"]}
    assert states == {"e": "expired", "r": "revoked"}


# --- managing tokens ----------------------------------------------------------------------------


def test_an_account_sees_and_revokes_only_its_own_tokens(world: World) -> None:
    anns = make_token(world.ann, name="ann's")
    ann_id = row(anns).pk
    ben = signed_in(world.ben)
    assert ben.get("/api/v1/tokens").json() == {"results": [], "total": 0}
    refused = ben.delete(f"/api/v1/tokens/{ann_id}")
    assert refused.status_code == 404 and refused["Content-Type"] == PROBLEM
    assert bearer(make_token(world.ben)).delete(f"/api/v1/tokens/{ann_id}").status_code == 404
    assert row(anns).revoked_at is None
    assert bearer(anns).get("/api/v1/tokens").json()["total"] == 1
    # Anonymous: 401.
    assert APIClient().get("/api/v1/tokens").status_code == 401
    assert APIClient().post("/api/v1/tokens", {"name": "n", "scope": "read"}).status_code == 401


def test_a_token_never_makes_a_broader_or_longer_lived_one(world: World) -> None:
    reader = make_token(world.ann, name="reader", scope="read")
    refused = bearer(reader).get("/api/v1/tokens")
    assert_scope_refused(refused, "only a signed-in session or a token with scope publish")
    month = bearer(make_token(world.ann, name="month", expires_in_days=30))
    for body in ({}, {"expires_in_days": 31}, {"expires_in_days": 40}):
        answer = month.post("/api/v1/tokens", {"name": "n", "scope": "read", **body}, "json")
        assert answer.status_code == 400, body
        assert "outlives it" in answer.json()["detail"]
    made = month.post(
        "/api/v1/tokens", {"name": "week", "scope": "agent", "agent": str(world.ann_one.pk),
                           "expires_in_days": 7}, format="json",
    )  # fmt: skip
    assert made.status_code == 201, made.content
    assert made.json()["scope"] == "agent" and made.json()["agent"] == str(world.ann_one.pk)
    # A publish token may revoke itself.
    own = row(make_token(world.ann, name="self"))
    assert bearer(make_token(world.ann)).delete(f"/api/v1/tokens/{own.pk}").status_code == 204


# --- existing keys, the rate limiter ------------------------------------------------------------


def test_the_operators_issue_token_keys_keep_working(world: World) -> None:
    out = io.StringIO()
    call_command("issue_token", "cy", stdout=out, stderr=io.StringIO())
    key = out.getvalue().strip()
    assert re.fullmatch(r"[0-9a-f]{40}", key)
    for scheme in ("Token", "Bearer"):
        operator = bearer(key, scheme)
        assert operator.get("/api/v1/tokens").json()["total"] == 0
    answer = world.submit(bearer(key), "/cy/one.json", "Cy one")
    assert answer.status_code == 202
    owner = Agent.objects.get(pk=answer.json()["id"]).submitted_by
    assert owner is not None and owner.username == "cy"
    # An operator's key may do what its account may: it makes tokens too.
    made = bearer(key).post("/api/v1/tokens", {"name": "from key", "scope": "read"}, "json")
    assert made.status_code == 201
    assert bearer("0" * 40).get("/api/v1/agents").status_code == 401


def test_the_rate_limiter_counts_a_token_as_its_account(world: World, settings: Any) -> None:
    publish, reader = make_token(world.ann), make_token(world.ben, scope="read")
    revoked = make_token(world.ann, name="gone")
    signed_in(world.ann).delete(f"/api/v1/tokens/{row(revoked).pk}")
    settings.REGISTRY_ANON_RATE = "1/minute"
    for secret in (publish, reader):
        for _ in range(3):
            assert bearer(secret).get("/").status_code == 200  # a page: no DRF view
            assert bearer(secret).get("/api/v1/agents").status_code == 200
    gone = bearer(revoked)
    assert gone.get("/").status_code == 200  # a refused token is anonymous, and counted
    assert gone.get("/").status_code == 429


# --- the catalogue's page -----------------------------------------------------------------------


def csrf_of(client: Client, path: str) -> str:
    page = client.get(path)
    assert page.status_code == 200
    token: str = client.cookies["csrftoken"].value
    return token


def test_the_page_needs_a_signed_in_account() -> None:
    answer = Client().get("/account/tokens")
    assert answer.status_code == 302
    assert answer["Location"] == "/accounts/login/?next=/account/tokens"


def test_the_page_makes_shows_once_and_revokes(world: World) -> None:
    page = Client(enforce_csrf_checks=True)
    page.force_login(world.ann)
    csrf = csrf_of(page, "/account/tokens")
    listed = page.get("/account/tokens").content.decode()
    assert "Ann one" in listed and "Ann two" in listed and "Ben one" not in listed  # agent select
    made = page.post(
        "/account/tokens",
        {"name": "laptop", "scope": "agent", "agent": str(world.ann_two.pk), "expiry": "90",
         "csrfmiddlewaretoken": csrf},
    )  # fmt: skip
    assert made.status_code == 200
    assert made["Cache-Control"] == "no-store"
    secret = re.search(r'id="token-value">(a2ar_[A-Za-z0-9_-]+)<', made.content.decode()).group(1)  # type: ignore[union-attr]
    stored = row(secret)
    assert (stored.name, stored.scope, stored.agent, stored.account) == (
        "laptop", "agent", world.ann_two, world.ann,
    )  # fmt: skip
    assert stored.expires_at is not None
    assert timedelta(days=89) < stored.expires_at - timezone.now() <= timedelta(days=90)
    again = page.get("/account/tokens").content.decode()
    assert secret not in again and stored.prefix in again and "never used" in again
    # Used once: the page says when.
    assert bearer(secret).get("/api/v1/agents").status_code == 200
    assert "never used" not in page.get("/account/tokens").content.decode()
    # The form refuses what the API refuses.
    bad = page.post(
        "/account/tokens",
        {"name": "x", "scope": "agent", "expiry": "never", "csrfmiddlewaretoken": csrf},
    )
    assert bad.status_code == 400 and "names its agent" in bad.content.decode()
    assert "Ben one" not in bad.content.decode()
    # Ben cannot revoke it; Ann can (a POST with the CSRF token).
    other = Client()
    other.force_login(world.ben)
    assert other.post(f"/account/tokens/{stored.pk}/revoke").status_code == 404
    assert page.post(f"/account/tokens/{stored.pk}/revoke").status_code == 403  # no CSRF token
    revoked = page.post(f"/account/tokens/{stored.pk}/revoke", {"csrfmiddlewaretoken": csrf})
    assert revoked.status_code == 302 and revoked["Location"] == "/account/tokens"
    assert row(secret).revoked_at is not None
    assert "revoked" in page.get("/account/tokens").content.decode()
    assert bearer(secret).get("/api/v1/agents").status_code == 401
