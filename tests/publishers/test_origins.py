"""Proof of an origin (issue 44 §3): the three methods against real servers on loopback (an
HTTP server for the well-known file and the JWKS, a dnslib DNS server for the TXT record), and
three real accounts through the API: alice runs the origin, bob claims it too and proves it
later, mallory never controls it and can neither prove it nor see the others' rows."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from publishers import ownership
from publishers.models import Origin, OriginEvent
from tests.publishers.dns_server import LocalDns
from tests.support import CardServer, running_server

pytestmark = pytest.mark.django_db

HOST = "agents.example.test"


@pytest.fixture(autouse=True)
def _origin_settings(settings: Any, loopback_allowed: None) -> None:
    settings.REGISTRY_ORIGIN_VERIFY_RATE = "1000/minute"
    settings.REGISTRY_DNS_TIMEOUT_SECONDS = 1.0


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[Any]]:
    """What ownership was told, the lead's functions still called."""
    seen: dict[str, list[Any]] = {"verified": [], "lost": []}
    verified, lost = ownership.origin_verified, ownership.origin_lost

    def on_verified(origin: Origin) -> None:
        seen["verified"].append((origin.account.username, origin.origin))
        verified(origin)

    def on_lost(origin_text: str) -> None:
        seen["lost"].append(origin_text)
        lost(origin_text)

    monkeypatch.setattr(ownership, "origin_verified", on_verified)
    monkeypatch.setattr(ownership, "origin_lost", on_lost)
    return seen


def claim(client: APIClient, origin: str) -> dict[str, Any]:
    response = client.post("/api/v1/origins", {"origin": origin}, format="json")
    assert response.status_code in (200, 201), response.content
    return dict(response.json())


def verify(client: APIClient, origin_id: int, method: str, **extra: Any) -> dict[str, Any]:
    body = {"method": method, **extra}
    response = client.post(f"/api/v1/origins/{origin_id}/verify", body, format="json")
    assert response.status_code == 200, response.content
    return dict(response.json())


def serve_challenge(site: CardServer, row: dict[str, Any]) -> None:
    http = row["challenges"]["http"]
    site.serve(
        http["url"][len(site.origin) :], f"{http['body']}\n".encode(), content_type="text/plain"
    )


def actions(origin_id: int) -> list[str]:
    events = OriginEvent.objects.filter(origin_id=origin_id).order_by("created_at", "id")
    return [e.action for e in events]


# --- Claiming ---------------------------------------------------------------------------------


def test_claim_answers_each_method_and_is_idempotent(alice: APIClient) -> None:
    response = alice.post(
        "/api/v1/origins", {"origin": f"https://{HOST.upper()}:443/"}, format="json"
    )
    assert response.status_code == 201
    row = response.json()
    assert row["origin"] == f"https://{HOST}" and row["state"] == "pending"
    challenge = Origin.objects.get(pk=row["id"]).challenge
    ways = row["challenges"]
    assert ways["http"]["url"] == f"https://{HOST}/.well-known/a2a-registry-challenge/{row['id']}"
    assert ways["http"]["body"] == challenge
    assert ways["dns"] == {
        "name": f"_a2a-registry.{HOST}",
        "type": "TXT",
        "value": f"a2a-registry-verification={challenge}",
    }
    assert ways["jwks"]["jwks_url"] == f"https://{HOST}/.well-known/jwks.json"
    assert ways["jwks"]["payload"] == {"origin": f"https://{HOST}", "challenge": challenge}
    again = alice.post("/api/v1/origins", {"origin": f"https://{HOST}"}, format="json")
    assert again.status_code == 200
    assert again.json()["id"] == row["id"]
    assert again.json()["challenges"]["http"]["body"] == challenge
    assert actions(row["id"]) == ["claimed"]


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("https://example.com/agents", "scheme, host and port only"),
        ("ftp://example.com", "http or https"),
        ("not a url", ""),
        ("https://10.1.2.3", "cannot reach"),
    ],
)
def test_a_bad_origin_is_a_400_problem_with_the_reason(
    alice: APIClient, text: str, reason: str
) -> None:
    response = alice.post("/api/v1/origins", {"origin": text}, format="json")
    assert response.status_code == 400
    assert response["Content-Type"].startswith("application/problem+json")
    assert reason in response.json()["detail"]
    assert not Origin.objects.exists()


def test_anonymous_clients_get_401(client_anon: APIClient) -> None:
    assert client_anon.get("/api/v1/origins").status_code == 401
    assert (
        client_anon.post("/api/v1/origins", {"origin": "https://a.test"}, format="json").status_code
        == 401
    )


# --- http ---------------------------------------------------------------------------------------


def test_http_proof_and_an_account_that_never_controls_the_origin(
    site: CardServer, alice: APIClient, mallory: APIClient, calls: dict[str, list[Any]]
) -> None:
    row = claim(alice, site.origin)
    result = verify(alice, row["id"], "http")
    assert result["verified"] is False and result["state"] == "pending"
    assert "404" in result["error"] and row["challenges"]["http"]["body"] in result["error"]

    site.serve(
        row["challenges"]["http"]["url"][len(site.origin) :],
        b"something else",
        content_type="text/plain",
    )
    result = verify(alice, row["id"], "http")
    assert "'something else'" in result["error"] and "expected exactly" in result["error"]

    serve_challenge(site, row)
    result = verify(alice, row["id"], "http")
    assert result == {
        "id": row["id"],
        "origin": site.origin,
        "verified": True,
        "state": "verified",
        "method": "http",
    }
    stored = Origin.objects.get(pk=row["id"])
    assert stored.verified_at is not None and stored.last_error == ""
    assert stored.next_check_at is not None
    assert abs((stored.next_check_at - stored.verified_at) - timedelta(hours=24)) < timedelta(
        seconds=5
    )
    assert actions(row["id"]) == ["claimed", "failed", "failed", "verified"]
    assert calls["verified"] == [("alice", site.origin)]

    # mallory claims the same origin: a row and challenge of her own, which the origin never serves
    theirs = claim(mallory, site.origin)
    assert theirs["id"] != row["id"]
    assert theirs["challenges"]["http"]["body"] != row["challenges"]["http"]["body"]
    failed = verify(mallory, theirs["id"], "http")
    assert failed["verified"] is False and failed["state"] == "pending"
    # alice's row is not hers to see, prove or remove
    assert mallory.get(f"/api/v1/origins/{row['id']}").status_code == 404
    assert (
        mallory.post(
            f"/api/v1/origins/{row['id']}/verify", {"method": "http"}, format="json"
        ).status_code
        == 404
    )
    assert mallory.delete(f"/api/v1/origins/{row['id']}").status_code == 404
    assert [o["id"] for o in mallory.get("/api/v1/origins").json()] == [theirs["id"]]
    assert Origin.objects.get(pk=row["id"]).state == "verified"
    assert calls["verified"] == [("alice", site.origin)]


def test_a_redirect_to_another_origin_proves_nothing(site: CardServer, alice: APIClient) -> None:
    row = claim(alice, site.origin)
    with running_server() as elsewhere:
        serve_challenge_at = elsewhere.serve(
            "/challenge", row["challenges"]["http"]["body"].encode(), content_type="text/plain"
        )
        path = row["challenges"]["http"]["url"][len(site.origin) :]
        site.serve(path, b"", status=302, headers={"Location": serve_challenge_at})
        result = verify(alice, row["id"], "http")
    assert result["verified"] is False and "another origin" in result["error"]


def test_a_second_account_proving_supersedes_the_first(
    site: CardServer, alice: APIClient, bob: APIClient, calls: dict[str, list[Any]]
) -> None:
    first = claim(alice, site.origin)
    serve_challenge(site, first)
    assert verify(alice, first["id"], "http")["verified"]
    second = claim(bob, site.origin)
    serve_challenge(site, second)  # the domain changed hands: the new owner publishes theirs
    result = verify(bob, second["id"], "http")
    assert result["verified"] is True
    assert Origin.objects.get(pk=first["id"]).state == "superseded"
    assert Origin.objects.get(pk=first["id"]).next_check_at is None
    assert Origin.objects.filter(origin=site.origin, state="verified").count() == 1
    assert actions(first["id"])[-1] == "superseded"
    detail = alice.get(f"/api/v1/origins/{first['id']}").json()
    assert detail["state"] == "superseded"
    assert detail["events"][0]["action"] == "superseded"
    assert "by_account" not in detail["events"][0]["detail"]  # who took it stays in the audit
    bob_id = get_user_model().objects.get(username="bob").pk
    superseded = OriginEvent.objects.get(origin_id=first["id"], action="superseded")
    assert superseded.detail == {"by_account": bob_id}
    assert calls["verified"] == [("alice", site.origin), ("bob", site.origin)]
    # alice proves it again (her file is still served): it swings back, audited both ways
    assert verify(alice, first["id"], "http")["verified"] is True
    assert Origin.objects.get(pk=second["id"]).state == "superseded"


def test_remove_is_audited_and_loses_a_verified_origin(
    site: CardServer, alice: APIClient, calls: dict[str, list[Any]]
) -> None:
    row = claim(alice, site.origin)
    serve_challenge(site, row)
    verify(alice, row["id"], "http")
    assert alice.delete(f"/api/v1/origins/{row['id']}").status_code == 204
    assert not Origin.objects.filter(pk=row["id"]).exists()
    removed = OriginEvent.objects.get(action="removed")
    assert removed.origin_id is None and removed.origin_text == site.origin
    assert removed.account is not None and removed.account.username == "alice"
    assert calls["lost"] == [site.origin]
    pending = claim(alice, site.origin)
    alice.delete(f"/api/v1/origins/{pending['id']}")
    assert calls["lost"] == [site.origin]  # a pending claim was never the origin's proof


def test_detail_lists_recent_events_and_the_list_the_state(
    site: CardServer, alice: APIClient
) -> None:
    row = claim(alice, site.origin)
    verify(alice, row["id"], "http")
    detail = alice.get(f"/api/v1/origins/{row['id']}").json()
    assert [e["action"] for e in detail["events"]] == ["failed", "claimed"]
    assert "404" in detail["events"][0]["detail"]["error"]
    assert detail["last_error"].startswith(row["challenges"]["http"]["url"])
    listed = alice.get("/api/v1/origins").json()
    assert listed[0]["id"] == row["id"] and listed[0]["state"] == "pending"
    assert {"method", "verified_at", "checked_at", "next_check_at", "last_error"} <= set(listed[0])


def test_verify_attempts_are_rate_limited_per_account(
    settings: Any, site: CardServer, alice: APIClient, bob: APIClient
) -> None:
    settings.REGISTRY_ORIGIN_VERIFY_RATE = "2/minute"
    row = claim(alice, site.origin)
    for _ in range(2):
        verify(alice, row["id"], "http")
    refused = alice.post(f"/api/v1/origins/{row['id']}/verify", {"method": "http"}, format="json")
    assert refused.status_code == 429 and "Retry-After" in refused
    assert refused["Content-Type"].startswith("application/problem+json")
    theirs = claim(bob, site.origin)
    verify(bob, theirs["id"], "http")  # another account has its own budget


def test_bad_verify_bodies_are_400_problems(site: CardServer, alice: APIClient) -> None:
    row = claim(alice, site.origin)
    for body in ({"method": "carrier-pigeon"}, {}, {"method": "jwks"}):
        response = alice.post(f"/api/v1/origins/{row['id']}/verify", body, format="json")
        assert response.status_code == 400, body
        assert response["Content-Type"].startswith("application/problem+json")


# --- dns ----------------------------------------------------------------------------------------


def test_dns_proof_against_a_local_dns_server(
    dns: LocalDns, alice: APIClient, mallory: APIClient
) -> None:
    row = claim(alice, f"https://{HOST}")
    record = row["challenges"]["dns"]
    result = verify(alice, row["id"], "dns")
    assert result["verified"] is False
    assert "NXDOMAIN" in result["error"] and record["value"] in result["error"]
    assert dns.zone.queries == [record["name"]]

    dns.zone.records[record["name"]] = ["v=spf1 -all"]
    result = verify(alice, row["id"], "dns")
    assert (
        "'v=spf1 -all'" in result["error"]
        and f"expected a TXT record {record['value']!r}" in result["error"]
    )

    long_other = "x" * 600  # split in 255-byte strings, joined again
    dns.zone.records[record["name"]] = ["v=spf1 -all", long_other, record["value"]]
    assert verify(alice, row["id"], "dns")["verified"] is True
    assert Origin.objects.get(pk=row["id"]).method == "dns"

    theirs = claim(mallory, f"https://{HOST}")
    assert verify(mallory, theirs["id"], "dns")["verified"] is False
    assert Origin.objects.get(pk=row["id"]).state == "verified"


def test_dns_is_refused_for_an_ip_address_host(site: CardServer, alice: APIClient) -> None:
    row = claim(alice, site.origin)
    assert row["challenges"]["dns"] is None
    result = verify(alice, row["id"], "dns")
    assert result["verified"] is False and "IP address" in result["error"]


def test_a_silent_name_server_is_a_transient_timeout(settings: Any, alice: APIClient) -> None:
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as silent:
        silent.bind(("127.0.0.1", 0))
        settings.REGISTRY_DNS_NAMESERVERS = [("127.0.0.1", silent.getsockname()[1])]
        settings.REGISTRY_DNS_TIMEOUT_SECONDS = 0.5
        row = claim(alice, f"https://{HOST}")
        result = verify(alice, row["id"], "dns")
    assert result["verified"] is False and result["transient"] is True
    assert "timed out" in result["error"]


# --- jwks ---------------------------------------------------------------------------------------


def make_key(alg: str) -> tuple[Any, dict[str, Any]]:
    if alg == "ES256":
        private: Any = ec.generate_private_key(ec.SECP256R1())
        jwk = json.loads(jwt.algorithms.ECAlgorithm.to_jwk(private.public_key()))
    elif alg == "RS256":
        private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(private.public_key()))
    else:
        private = ed25519.Ed25519PrivateKey.generate()
        jwk = json.loads(jwt.algorithms.OKPAlgorithm.to_jwk(private.public_key()))
    return private, jwk


def publish_jwks(site: CardServer, *jwks: dict[str, Any]) -> None:
    site.serve("/.well-known/jwks.json", json.dumps({"keys": list(jwks)}).encode())


@pytest.mark.parametrize("alg", ["ES256", "RS256", "EdDSA"])
def test_jwks_proof_with_a_key_made_here(site: CardServer, alice: APIClient, alg: str) -> None:
    private, jwk = make_key(alg)
    publish_jwks(site, {**jwk, "kid": "signing-1", "use": "sig"})
    row = claim(alice, site.origin)
    token = jwt.encode(
        row["challenges"]["jwks"]["payload"], private, algorithm=alg, headers={"kid": "signing-1"}
    )
    result = verify(alice, row["id"], "jwks", jws=token)
    assert result["verified"] is True, result
    stored = Origin.objects.get(pk=row["id"])
    assert stored.method == "jwks" and stored.key_id == "signing-1"


def test_jwks_refuses_a_wrong_key_a_wrong_payload_and_unsigned_tokens(
    site: CardServer, alice: APIClient, mallory: APIClient
) -> None:
    private, jwk = make_key("ES256")
    publish_jwks(site, {**jwk, "kid": "k1"})
    row = claim(alice, site.origin)
    payload = row["challenges"]["jwks"]["payload"]

    # mallory has a key of her own, not the origin's, and signs her own challenge with it
    hers, _ = make_key("ES256")
    theirs = claim(mallory, site.origin)
    forged = jwt.encode(
        theirs["challenges"]["jwks"]["payload"], hers, algorithm="ES256", headers={"kid": "k1"}
    )
    result = verify(mallory, theirs["id"], "jwks", jws=forged)
    assert result["verified"] is False and "does not verify" in result["error"]

    # a JWS the origin's key made for alice's challenge does not prove mallory's row
    alices = jwt.encode(payload, private, algorithm="ES256", headers={"kid": "k1"})
    result = verify(mallory, theirs["id"], "jwks", jws=alices)
    assert result["verified"] is False and "challenge" in result["error"]

    unknown = jwt.encode(payload, private, algorithm="ES256", headers={"kid": "k9"})
    assert "no key with kid 'k9'" in verify(alice, row["id"], "jwks", jws=unknown)["error"]
    other_origin = jwt.encode(
        {**payload, "origin": "https://elsewhere.test"},
        private,
        algorithm="ES256",
        headers={"kid": "k1"},
    )
    assert "origin" in verify(alice, row["id"], "jwks", jws=other_origin)["error"]
    hmac_token = jwt.encode(
        payload,
        "a shared secret long enough for HS256 use",
        algorithm="HS256",
        headers={"kid": "k1"},
    )
    assert "HMAC" in verify(alice, row["id"], "jwks", jws=hmac_token)["error"]
    assert "compact" in verify(alice, row["id"], "jwks", jws="not-a-jws")["error"]
    assert Origin.objects.get(pk=row["id"]).state == "pending"
    assert Origin.objects.get(pk=theirs["id"]).state == "pending"


# --- Tokens and ids -------------------------------------------------------------------------


def test_an_owners_token_scopes_apply_and_unknown_ids_are_404(alice: APIClient) -> None:
    from publishers import tokens

    user = get_user_model().objects.get(username="alice")
    publish = tokens.issue(user, name="ci", scope="publish").secret
    read = tokens.issue(user, name="dashboard", scope="read").secret
    publisher, reader = APIClient(), APIClient()
    publisher.credentials(HTTP_AUTHORIZATION=f"Bearer {publish}")
    reader.credentials(HTTP_AUTHORIZATION=f"Bearer {read}")
    row = claim(publisher, f"https://{HOST}")
    assert [o["id"] for o in reader.get("/api/v1/origins").json()] == [row["id"]]
    refused = reader.post(f"/api/v1/origins/{row['id']}/verify", {"method": "dns"}, format="json")
    assert refused.status_code == 403
    claimed = reader.post("/api/v1/origins", {"origin": "https://b.test"}, format="json")
    assert claimed.status_code == 403
    for missing in (row["id"] + 1000, 10**30):
        assert alice.get(f"/api/v1/origins/{missing}").status_code == 404
