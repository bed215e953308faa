"""The registry's own Ed25519 signing key, for the attestations it issues, and its JWKS.

Where the key comes from:

* ``REGISTRY_SIGNING_KEY`` (PEM text, or the path of a PEM file): that key signs. Its public
  half is also recorded in :class:`~cards.models.RegistrySigningKey` (with an empty
  ``private_pem``: the private key stays in the configuration), so that after the
  configuration changes to a new key the old one is still published until retired.
* otherwise the newest active row of ``RegistrySigningKey``; when there is none, a key is
  generated once and stored. Generation holds a lock, so processes starting together end up
  with one active key.

Every key not retired is in the JWKS, so tokens signed before a rotation still verify.
The ``kid`` is the key's RFC 7638 thumbprint.
"""

from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import connection, transaction
from django.utils import timezone

from cards.models import RegistrySigningKey

ALGORITHM = "EdDSA"
# An arbitrary, fixed PostgreSQL advisory-lock id: "one key generation or rotation at a time".
_LOCK_ID = 0x5265_6753_6B65_79


class SigningKeyError(RuntimeError):
    """A rotation or retirement that cannot be done; ``str()`` says why."""


@dataclass(frozen=True)
class SigningKey:
    kid: str
    private_key: Ed25519PrivateKey
    public_jwk: dict[str, str]


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def thumbprint(jwk: dict[str, Any]) -> str:
    """RFC 7638 SHA-256 thumbprint of an OKP key: its required members, sorted, no spaces."""
    members = {"crv": jwk["crv"], "kty": jwk["kty"], "x": jwk["x"]}
    text = json.dumps(members, sort_keys=True, separators=(",", ":"))
    return _b64url(hashlib.sha256(text.encode("ascii")).digest())


def public_jwk(private_key: Ed25519PrivateKey) -> dict[str, str]:
    raw = private_key.public_key().public_bytes(
        serialization.Encoding.Raw, serialization.PublicFormat.Raw
    )
    jwk = {"kty": "OKP", "crv": "Ed25519", "x": _b64url(raw)}
    return {**jwk, "kid": thumbprint(jwk), "alg": ALGORITHM, "use": "sig"}


def private_pem(private_key: Ed25519PrivateKey) -> str:
    return private_key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode("ascii")


@lru_cache(maxsize=16)
def _load_pem(pem: str) -> SigningKey:
    try:
        key = serialization.load_pem_private_key(pem.encode("utf-8"), password=None)
    except (ValueError, TypeError) as exc:
        raise ImproperlyConfigured(f"the registry signing key is not a usable PEM: {exc}") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise ImproperlyConfigured("the registry signing key must be an Ed25519 private key")
    jwk = public_jwk(key)
    return SigningKey(kid=jwk["kid"], private_key=key, public_jwk=jwk)


def _configured_pem(value: str) -> str:
    if "-----BEGIN" in value:
        # An environment variable may carry the PEM's line breaks as literal "\n".
        return value.replace("\\n", "\n")
    path = Path(value)
    try:
        return path.read_text(encoding="ascii")
    except (OSError, UnicodeDecodeError) as exc:
        raise ImproperlyConfigured(f"REGISTRY_SIGNING_KEY: cannot read {path}: {exc}") from None


def configured_key() -> SigningKey | None:
    value = getattr(settings, "REGISTRY_SIGNING_KEY", None)
    return _load_pem(_configured_pem(value)) if value else None


def _lock() -> None:
    """Serialise key generation and rotation across processes (inside a transaction)."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [_LOCK_ID])
    else:
        # SQLite: a write, even of no row, takes the database's write lock until commit.
        RegistrySigningKey.objects.filter(pk=-1).update(active=False)


def _signing_rows() -> Any:
    return (
        RegistrySigningKey.objects.filter(active=True, retired_at__isnull=True)
        .exclude(private_pem="")
        .order_by("-created_at", "-id")
    )


def _create_row(private_key: Ed25519PrivateKey) -> RegistrySigningKey:
    jwk = public_jwk(private_key)
    return RegistrySigningKey.objects.create(
        kid=jwk["kid"], private_pem=private_pem(private_key), public_jwk=jwk, active=True
    )


def _stored_key() -> SigningKey:
    row = _signing_rows().first()
    if row is None:
        with transaction.atomic():
            _lock()
            row = _signing_rows().first()  # another process may have won the race
            if row is None:
                row = _create_row(Ed25519PrivateKey.generate())
    return _load_pem(row.private_pem)


_recorded: set[str] = set()


def _record_configured(key: SigningKey) -> None:
    """Publish the configured key's public half and make it the active row (once a process)."""
    if key.kid in _recorded:
        return
    with transaction.atomic():
        _lock()
        row, _ = RegistrySigningKey.objects.get_or_create(
            kid=key.kid, defaults={"private_pem": "", "public_jwk": key.public_jwk}
        )
        RegistrySigningKey.objects.filter(pk=row.pk).update(active=True, retired_at=None)
        RegistrySigningKey.objects.filter(active=True).exclude(pk=row.pk).update(active=False)
    _recorded.add(key.kid)


def active_key() -> SigningKey:
    """The key that signs now: the configured one, else the stored one (generated if none)."""
    key = configured_key()
    if key is not None:
        _record_configured(key)
        return key
    return _stored_key()


def jwks() -> dict[str, list[dict[str, str]]]:
    """The public keys of every key not retired, the signing key first."""
    current = active_key()
    keys = [current.public_jwk]
    for row in RegistrySigningKey.objects.filter(retired_at__isnull=True).order_by(
        "-active", "-created_at", "-id"
    ):
        if row.kid != current.kid:
            keys.append({name: str(value) for name, value in row.public_jwk.items()})
    return {"keys": keys}


def rotate() -> RegistrySigningKey:
    """Make a new key the signing key; earlier keys stay published until retired."""
    if configured_key() is not None:
        raise SigningKeyError(
            "the signing key comes from REGISTRY_SIGNING_KEY: rotate by configuring a new key "
            "(the previous one stays published until retired)"
        )
    with transaction.atomic():
        _lock()
        RegistrySigningKey.objects.filter(active=True).update(active=False)
        return _create_row(Ed25519PrivateKey.generate())


def retire(kid: str) -> RegistrySigningKey:
    """Stop publishing a key that no longer signs: tokens it signed stop verifying."""
    with transaction.atomic():
        _lock()
        row = RegistrySigningKey.objects.select_for_update().filter(kid=kid).first()
        if row is None:
            raise SigningKeyError(f"no registry signing key has kid {kid!r}")
        configured = configured_key()
        if row.active or (configured is not None and configured.kid == kid):
            raise SigningKeyError(f"key {kid!r} signs now: rotate before retiring it")
        if row.retired_at is None:
            row.retired_at = timezone.now()
            row.save(update_fields=["retired_at"])
    return row
