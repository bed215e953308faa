"""Signed attestations, verified offline with PyJWT against the JWKS the registry publishes."""

from __future__ import annotations

import base64
import hashlib
import json
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import jwt
import pytest
import rfc8785
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from django.contrib.auth import get_user_model
from django.core.exceptions import ImproperlyConfigured
from django.core.management import CommandError, call_command
from django.db import connection
from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from cards import signing_keys
from cards.attestation import attestation_claims, sign
from cards.models import Agent, RegistrySigningKey
from tests.factories import agent_from_card, minimal_card

ISSUER = "http://testserver"


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def published(client: Client) -> jwt.PyJWKSet:
    response = client.get("/.well-known/jwks.json")
    assert response.status_code == 200
    return jwt.PyJWKSet.from_dict(response.json())


def verify(token: str, keys: jwt.PyJWKSet, **options: Any) -> dict[str, Any]:
    """What an offline verifier does: pick the key by kid, check signature, exp and iss."""
    header = jwt.get_unverified_header(token)
    assert header["alg"] == "EdDSA" and header["typ"] == "JWT"
    key = keys[header["kid"]]
    return jwt.decode(token, key=key, algorithms=["EdDSA"], issuer=ISSUER, **options)


def attestation(client: Client, agent: Agent) -> str:
    response = client.get(f"/api/v1/agents/{agent.pk}/attestation")
    assert response.status_code == 200, response.content
    assert response["Content-Type"] == "application/jwt"
    return response.content.decode("ascii")


@pytest.fixture
def agent(db: None) -> Agent:
    agent = agent_from_card(minimal_card(name="Attested agent"))
    Agent.objects.filter(pk=agent.pk).update(
        signature_status="verified",
        signature={"status": "verified", "thumbprints": ["abc123thumb"]},
        health="healthy",
    )
    agent.refresh_from_db()
    return agent


def test_an_attestation_verifies_offline_with_the_published_jwks(
    agent: Agent, client: Client
) -> None:
    token = attestation(client, agent)
    claims = verify(token, published(client))
    snapshot = agent.latest_snapshot
    assert snapshot is not None
    assert claims["sub"] == agent.card_url
    assert claims["card_sha256"] == hashlib.sha256(rfc8785.dumps(snapshot.data)).hexdigest()
    assert claims["signature"] == {"status": "verified", "thumbprints": ["abc123thumb"]}
    assert claims["validation"] == {
        "valid": agent.valid,
        "errors": agent.error_count,
        "warnings": agent.warning_count,
        "infos": agent.info_count,
    }
    assert claims["health"] == "healthy" and claims["moderation"] == "approved"
    assert claims["agent_id"] == str(agent.pk)
    assert 0 < claims["exp"] - claims["iat"] <= 3600
    assert uuid.UUID(claims["jti"])


def test_the_json_form_carries_the_token_and_its_claims(agent: Agent, client: Client) -> None:
    response = client.get(f"/api/v1/agents/{agent.pk}/attestation", {"format": "json"})
    assert response.status_code == 200
    assert response["Cache-Control"] == "no-store"
    body = response.json()
    assert verify(body["token"], published(client)) == body["claims"]


def test_accept_application_jwt_is_honoured(agent: Agent, client: Client) -> None:
    response = client.get(f"/api/v1/agents/{agent.pk}/attestation", HTTP_ACCEPT="application/jwt")
    assert response.status_code == 200 and response["Content-Type"] == "application/jwt"


def test_every_token_is_fresh(agent: Agent, client: Client) -> None:
    keys = published(client)
    first, second = (
        verify(attestation(client, agent), keys),
        verify(attestation(client, agent), keys),
    )
    assert first["jti"] != second["jti"]


def test_a_tampered_payload_is_rejected(agent: Agent, client: Client) -> None:
    token = attestation(client, agent)
    keys = published(client)
    header, payload, signature = token.split(".")
    # A flipped byte in the payload segment.
    flipped = payload[:10] + ("A" if payload[10] != "A" else "B") + payload[11:]
    with pytest.raises(jwt.InvalidTokenError):
        verify(".".join([header, flipped, signature]), keys)
    # A well-formed but altered claim: the signature no longer matches.
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    claims["moderation"], claims["health"] = "featured", "healthy"
    forged = b64url(json.dumps(claims).encode())
    with pytest.raises(jwt.InvalidSignatureError):
        verify(".".join([header, forged, signature]), keys)
    # A signature from another key under the registry's kid.
    stranger = Ed25519PrivateKey.generate()
    impostor = jwt.encode(
        claims,
        stranger,
        algorithm="EdDSA",
        headers={"kid": jwt.get_unverified_header(token)["kid"]},
    )
    with pytest.raises(jwt.InvalidSignatureError):
        verify(impostor, keys)


def test_an_expired_token_is_rejected(agent: Agent, client: Client) -> None:
    claims = attestation_claims(agent, iss=ISSUER, now=int(time.time()) - 7200)
    token = sign(claims)
    with pytest.raises(jwt.ExpiredSignatureError):
        verify(token, published(client))


def test_the_lifetime_is_configurable(agent: Agent, client: Client, settings: Any) -> None:
    settings.REGISTRY_ATTESTATION_TTL_SECONDS = 120
    claims = verify(attestation(client, agent), published(client))
    assert claims["exp"] - claims["iat"] == 120


def test_the_issuer_can_be_configured(agent: Agent, client: Client, settings: Any) -> None:
    settings.REGISTRY_BASE_URL = "https://registry.example.com"
    token = attestation(client, agent)
    claims = jwt.decode(
        token,
        key=published(client)[jwt.get_unverified_header(token)["kid"]],
        algorithms=["EdDSA"],
        issuer="https://registry.example.com",
    )
    assert claims["iss"] == "https://registry.example.com"


# --- who may get one --------------------------------------------------------------------------


def test_unknown_and_never_fetched_agents_are_404_problems(db: None, client: Client) -> None:
    missing = client.get(f"/api/v1/agents/{uuid.uuid4()}/attestation")
    assert missing.status_code == 404
    assert missing["Content-Type"] == "application/problem+json"
    owner = get_user_model().objects.create_user(username="fresh-owner")
    fresh = Agent.objects.create(url="https://new.example.com/agent-card.json", submitted_by=owner)
    # Without a card the agent is its owner's only (cards.reads.gate): a 404 to anyone else,
    # and to its owner a 409 saying there is nothing to attest yet.
    unfetched = client.get(f"/api/v1/agents/{fresh.pk}/attestation")
    assert unfetched.status_code == 404
    client.force_login(owner)
    unfetched = client.get(f"/api/v1/agents/{fresh.pk}/attestation")
    assert unfetched.status_code == 409
    assert unfetched.json()["type"] == "/problems/no-card"


@pytest.mark.parametrize("moderation", ["hidden", "rejected", "pending"])
def test_agents_hidden_from_the_reader_are_404(
    agent: Agent, client: Client, moderation: str
) -> None:
    Agent.objects.filter(pk=agent.pk).update(moderation=moderation)
    response = client.get(f"/api/v1/agents/{agent.pk}/attestation")
    assert response.status_code == 404
    assert response["Content-Type"] == "application/problem+json"


def test_the_owner_gets_an_attestation_of_their_pending_agent(agent: Agent, client: Client) -> None:
    owner = get_user_model().objects.create_user(username="owner")
    Agent.objects.filter(pk=agent.pk).update(moderation="pending", submitted_by=owner)
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=owner).key}")
    response = api.get(f"/api/v1/agents/{agent.pk}/attestation")
    assert response.status_code == 200
    assert verify(response.content.decode(), published(client))["moderation"] == "pending"


def test_deleted_agents_are_404(agent: Agent, client: Client) -> None:
    from django.utils import timezone

    Agent.objects.filter(pk=agent.pk).update(deleted_at=timezone.now())
    assert client.get(f"/api/v1/agents/{agent.pk}/attestation").status_code == 404


# --- the JWKS and the keys --------------------------------------------------------------------


def test_the_jwks_publishes_only_public_ed25519_keys(db: None, client: Client) -> None:
    response = client.get("/.well-known/jwks.json")
    assert response["Content-Type"] == "application/jwk-set+json"
    assert "max-age=" in response["Cache-Control"]
    keys = response.json()["keys"]
    assert len(keys) == 1
    key = keys[0]
    assert key["kty"] == "OKP" and key["crv"] == "Ed25519" and key["alg"] == "EdDSA"
    assert key["use"] == "sig" and "d" not in key
    required = json.dumps(
        {"crv": key["crv"], "kty": key["kty"], "x": key["x"]}, separators=(",", ":")
    )
    assert key["kid"] == b64url(hashlib.sha256(required.encode()).digest())  # RFC 7638


def test_the_key_is_generated_once_and_kept(db: None, client: Client) -> None:
    first = client.get("/.well-known/jwks.json").json()
    second = client.get("/.well-known/jwks.json").json()
    assert first == second
    assert RegistrySigningKey.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_processes_starting_together_end_with_one_key() -> None:
    barrier = threading.Barrier(6)
    kids: list[str] = []
    errors: list[BaseException] = []

    def start() -> None:
        try:
            barrier.wait()
            kids.append(signing_keys.active_key().kid)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=start) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert len(set(kids)) == 1
    assert RegistrySigningKey.objects.filter(active=True).count() == 1


def test_rotation_keeps_old_tokens_verifiable_until_retired(agent: Agent, client: Client) -> None:
    old_token = attestation(client, agent)
    old_kid = jwt.get_unverified_header(old_token)["kid"]
    call_command("rotate_signing_key")
    new_token = attestation(client, agent)
    new_kid = jwt.get_unverified_header(new_token)["kid"]
    assert new_kid != old_kid
    keys = published(client)
    assert {key.key_id for key in keys.keys} == {old_kid, new_kid}
    verify(old_token, keys)
    verify(new_token, keys)
    assert client.get("/.well-known/jwks.json").json()["keys"][0]["kid"] == new_kid

    with pytest.raises(CommandError, match="signs now"):
        call_command("rotate_signing_key", f"--retire={new_kid}")
    call_command("rotate_signing_key", f"--retire={old_kid}")
    keys = published(client)
    assert [key.key_id for key in keys.keys] == [new_kid]
    with pytest.raises(KeyError):
        verify(old_token, keys)
    verify(new_token, keys)


def test_retiring_an_unknown_key_is_an_error(db: None) -> None:
    with pytest.raises(CommandError, match="no registry signing key"):
        call_command("rotate_signing_key", "--retire", "nope")


# --- a configured key -------------------------------------------------------------------------


def pem_of(key: Any) -> str:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()


@pytest.mark.parametrize("form", ["text", "escaped", "file"])
def test_a_configured_key_signs(
    agent: Agent, client: Client, settings: Any, tmp_path: Path, form: str
) -> None:
    private = Ed25519PrivateKey.generate()
    pem = pem_of(private)
    if form == "file":
        path = tmp_path / "registry-key.pem"
        path.write_text(pem)
        settings.REGISTRY_SIGNING_KEY = str(path)
    else:
        settings.REGISTRY_SIGNING_KEY = pem if form == "text" else pem.replace("\n", "\\n")
    token = attestation(client, agent)
    expected = signing_keys.public_jwk(private)
    assert jwt.get_unverified_header(token)["kid"] == expected["kid"]
    verify(token, published(client))
    stored = RegistrySigningKey.objects.get(kid=expected["kid"])
    assert stored.private_pem == ""  # the private key stays in the configuration
    with pytest.raises(CommandError, match="REGISTRY_SIGNING_KEY"):
        call_command("rotate_signing_key")


def test_changing_the_configured_key_keeps_the_previous_one_published(
    agent: Agent, client: Client, settings: Any
) -> None:
    settings.REGISTRY_SIGNING_KEY = pem_of(Ed25519PrivateKey.generate())
    old_token = attestation(client, agent)
    signing_keys._recorded.clear()  # as a restarted process would
    settings.REGISTRY_SIGNING_KEY = pem_of(Ed25519PrivateKey.generate())
    new_token = attestation(client, agent)
    keys = published(client)
    verify(old_token, keys)
    verify(new_token, keys)
    assert (
        client.get("/.well-known/jwks.json").json()["keys"][0]["kid"]
        == (jwt.get_unverified_header(new_token)["kid"])
    )


def test_a_configured_key_that_is_not_ed25519_is_refused(settings: Any) -> None:
    settings.REGISTRY_SIGNING_KEY = pem_of(ec.generate_private_key(ec.SECP256R1()))
    with pytest.raises(ImproperlyConfigured, match="Ed25519"):
        signing_keys.configured_key()
