"""JWK sets: reading public keys, RFC 7638 thumbprints, key type <-> algorithm, verification.

The key decides the algorithm: an Ed25519 key verifies only EdDSA, a P-256 key only ES256
(P-384: ES384, P-521: ES512), an RSA key only RS*/PS* (and only the one named by its JWK
``alg`` when it has one). Keys are built with ``cryptography`` from their public members
only; symmetric keys, published private keys, RSA under 2048 bits, Ed448 and curves other
than P-256/384/521 are rejected with a reason.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

import orjson
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

from cards.signatures.jose import b64url_decode, b64url_encode, loads_strict

MAX_KEYS = 100
MIN_RSA_BITS = 2048
MAX_RSA_BITS = 16384
_PRIVATE_MEMBERS = ("d", "p", "q", "dp", "dq", "qi", "oth", "k")
_CURVES: dict[str, tuple[ec.EllipticCurve, int, str]] = {
    "P-256": (ec.SECP256R1(), 32, "ES256"),
    "P-384": (ec.SECP384R1(), 48, "ES384"),
    "P-521": (ec.SECP521R1(), 66, "ES512"),
}
_HASHES: dict[str, type[hashes.HashAlgorithm]] = {
    "256": hashes.SHA256,
    "384": hashes.SHA384,
    "512": hashes.SHA512,
}
_THUMBPRINT_MEMBERS = {
    "EC": ("crv", "kty", "x", "y"),
    "OKP": ("crv", "kty", "x"),
    "RSA": ("e", "kty", "n"),
}


# Built keys by JWK (see parse_key), bounded: emptied when full.
_KEYS: dict[bytes, PublicKey] = {}
KEYS_SIZE = 1024
# Signature parameters per algorithm: stateless, so built once.
_ECDSA = {size: ec.ECDSA(hash_type()) for size, hash_type in _HASHES.items()}
_PSS = {
    size: padding.PSS(mgf=padding.MGF1(hash_type()), salt_length=hash_type().digest_size)
    for size, hash_type in _HASHES.items()
}


class JwksError(ValueError):
    """A JWK set that cannot be used at all; ``str()`` is the reason."""


def thumbprint(jwk: dict[str, Any]) -> str:
    """RFC 7638 SHA-256 thumbprint, base64url. The JWK must hold its required members."""
    members = {name: jwk[name] for name in _THUMBPRINT_MEMBERS[jwk["kty"]]}
    text = json.dumps(members, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return b64url_encode(hashlib.sha256(text.encode("utf-8")).digest())


@dataclass(frozen=True, eq=False)
class PublicKey:
    kid: str | None
    kty: str
    crv: str | None
    alg: str | None  # the JWK's own "alg" member
    use: str | None
    key_ops: tuple[str, ...] | None
    key: Any  # Ed25519PublicKey | EllipticCurvePublicKey | RSAPublicKey
    thumbprint: str
    size: int  # signature length in bytes

    def describe(self) -> str:
        if self.kty == "RSA":
            return f"an RSA-{self.key.key_size} key"
        return f"an {self.kty} {self.crv} key"

    def refusal_for(self, alg: str) -> str | None:
        """Why this key cannot verify ``alg``, or None."""
        name = f"key {self.kid!r}" if self.kid else f"key {self.thumbprint}"
        if self.use is not None and self.use != "sig":
            return f"{name} is published for use {self.use!r}, not for signatures"
        if self.key_ops is not None and "verify" not in self.key_ops:
            return f"{name} has key_ops without 'verify'"
        if self.kty == "OKP":
            fits = alg == "EdDSA"
        elif self.kty == "EC":
            fits = alg == _CURVES[self.crv or ""][2]
        else:
            fits = alg[:2] in ("RS", "PS")
        if not fits:
            return f"{name} is {self.describe()}; it cannot verify {alg}"
        if self.alg is not None and self.alg != alg:
            return f"{name} is declared for {self.alg!r} (its alg member); {alg} is refused"
        return None

    def verify(self, alg: str, signing_input: bytes, signature: bytes) -> bool:
        """Check the signature; False on mismatch. ``refusal_for(alg)`` must be None."""
        try:
            if self.kty == "OKP":
                self.key.verify(signature, signing_input)
            elif self.kty == "EC":
                half = self.size // 2
                r = int.from_bytes(signature[:half], "big")
                s = int.from_bytes(signature[half:], "big")
                self.key.verify(encode_dss_signature(r, s), signing_input, _ECDSA[alg[2:]])
            elif alg.startswith("RS"):
                self.key.verify(signature, signing_input, padding.PKCS1v15(), _HASHES[alg[2:]]())
            else:
                self.key.verify(signature, signing_input, _PSS[alg[2:]], _HASHES[alg[2:]]())
        except InvalidSignature:
            return False
        return True


def _b64_member(jwk: dict[str, Any], name: str) -> bytes:
    value = jwk.get(name)
    raw = b64url_decode(value) if isinstance(value, str) else None
    if not raw:
        raise ValueError(f"its {name!r} member is missing or not base64url")
    return raw


def _text_member(jwk: dict[str, Any], name: str) -> str | None:
    value = jwk.get(name)
    if value is not None and not isinstance(value, str):
        raise ValueError(f"its {name!r} member is not a string")
    return value


def _build(jwk: dict[str, Any]) -> tuple[Any, int, str | None]:
    """(cryptography key, signature size, crv) for a public JWK. Raises ValueError."""
    kty = jwk.get("kty")
    if kty == "oct":
        raise ValueError("it is a symmetric (oct) key; symmetric keys are never used")
    private = [m for m in _PRIVATE_MEMBERS if m in jwk]
    if private:
        raise ValueError(
            f"it contains private key material ({', '.join(private)}); a published private "
            "key proves nothing, so it is not used"
        )
    if kty == "OKP":
        crv = jwk.get("crv")
        if crv != "Ed25519":
            raise ValueError(f"OKP curve {str(crv)[:20]!r} is not accepted (only Ed25519)")
        x = _b64_member(jwk, "x")
        if len(x) != 32:
            raise ValueError("its Ed25519 'x' is not 32 bytes")
        return ed25519.Ed25519PublicKey.from_public_bytes(x), 64, crv
    if kty == "EC":
        crv = jwk.get("crv")
        if not isinstance(crv, str) or crv not in _CURVES:
            raise ValueError(f"EC curve {str(crv)[:20]!r} is not accepted (P-256/384/521)")
        curve, length, _ = _CURVES[crv]
        x, y = _b64_member(jwk, "x"), _b64_member(jwk, "y")
        if len(x) != length or len(y) != length:
            raise ValueError(f"its {crv} coordinates are not {length} bytes")
        numbers = ec.EllipticCurvePublicNumbers(
            int.from_bytes(x, "big"), int.from_bytes(y, "big"), curve
        )
        return numbers.public_key(), 2 * length, crv  # raises if the point is off the curve
    if kty == "RSA":
        n = int.from_bytes(_b64_member(jwk, "n"), "big")
        e = int.from_bytes(_b64_member(jwk, "e"), "big")
        bits = n.bit_length()
        if bits < MIN_RSA_BITS:
            raise ValueError(f"it is an RSA-{bits} key; at least {MIN_RSA_BITS} bits are required")
        if bits > MAX_RSA_BITS:
            raise ValueError(f"it is an RSA-{bits} key; at most {MAX_RSA_BITS} bits are read")
        return rsa.RSAPublicNumbers(e, n).public_key(), (bits + 7) // 8, None
    raise ValueError(f"key type {str(kty)[:20]!r} is not supported")


def parse_key(jwk: Any) -> PublicKey:
    """A PublicKey from one JWK. Raises ValueError with a reason.

    Keys are memoised per JWK (its members as canonical JSON, so per thumbprint and kid, alg,
    use and key_ops): the pinned keys of an agent, parsed for every crawl, and a JWKS served
    with a new body but old keys do not rebuild them.
    """
    if not isinstance(jwk, dict):
        raise ValueError("it is not a JSON object")
    try:
        ident: bytes | None = orjson.dumps(jwk, option=orjson.OPT_SORT_KEYS)
    except orjson.JSONEncodeError:
        ident = None
    if ident is not None and (known := _KEYS.get(ident)) is not None:
        return known
    key = _parse_key(jwk)
    if ident is not None:
        if len(_KEYS) >= KEYS_SIZE:
            _KEYS.clear()
        _KEYS[ident] = key
    return key


def _parse_key(jwk: dict[str, Any]) -> PublicKey:
    kid = _text_member(jwk, "kid")
    alg = _text_member(jwk, "alg")
    use = _text_member(jwk, "use")
    ops = jwk.get("key_ops")
    if ops is not None and not (isinstance(ops, list) and all(isinstance(o, str) for o in ops)):
        raise ValueError("its key_ops is not a list of strings")
    key, size, crv = _build(jwk)
    return PublicKey(
        kid=kid,
        kty=jwk["kty"],
        crv=crv,
        alg=alg,
        use=use,
        key_ops=tuple(ops) if ops is not None else None,
        key=key,
        thumbprint=thumbprint(jwk),
        size=size,
    )


@dataclass
class KeySet:
    keys: list[PublicKey] = field(default_factory=list)
    rejected: list[tuple[str | None, str]] = field(default_factory=list)  # (kid, reason)

    def find(self, kid: str) -> list[PublicKey]:
        """Keys with this kid; a key without a kid matches its RFC 7638 thumbprint."""
        return [k for k in self.keys if k.kid == kid or (k.kid is None and k.thumbprint == kid)]

    def rejections_for(self, kid: str) -> list[str]:
        return [reason for key_id, reason in self.rejected if key_id == kid]

    def summary(self) -> str:
        usable = len(self.keys)
        text = f"{usable} usable key{'s' if usable != 1 else ''}"
        if self.rejected:
            text += f", {len(self.rejected)} rejected ({self.rejected[0][1]})"
        return text


def parse_jwks(document: Any) -> KeySet:
    """A KeySet from a JWKS object. Raises JwksError when the set itself is unusable."""
    if not isinstance(document, dict):
        raise JwksError("it is not a JSON object")
    if "keys" not in document:
        raise JwksError("it has no 'keys' member")
    entries = document["keys"]
    if not isinstance(entries, list):
        raise JwksError("its 'keys' member is not an array")
    if not entries:
        raise JwksError("its 'keys' array is empty")
    if len(entries) > MAX_KEYS:
        raise JwksError(f"it has {len(entries)} keys; at most {MAX_KEYS} are read")
    keyset = KeySet()
    for position, entry in enumerate(entries):
        raw_kid = entry.get("kid") if isinstance(entry, dict) else None
        kid = raw_kid if isinstance(raw_kid, str) else None
        try:
            keyset.keys.append(parse_key(entry))
        except (ValueError, TypeError, OverflowError) as exc:
            label = f"key {kid!r}" if kid else f"keys[{position}]"
            keyset.rejected.append((kid, f"{label} is not usable: {exc}"))
    return keyset


def parse_jwks_bytes(body: bytes) -> KeySet:
    """A KeySet from served JWKS bytes. Raises JwksError."""
    try:
        text = body.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError:
        raise JwksError("it is not UTF-8 text") from None
    if not text.strip():
        raise JwksError("it is empty")
    try:
        document = loads_strict(text)
    except ValueError as exc:
        raise JwksError(f"it is not valid JSON: {exc}") from None
    return parse_jwks(document)
