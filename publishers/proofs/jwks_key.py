"""Proof by signature: the challenge signed by a key the origin's JWKS publishes.

The key binding is the one the registry checks for signed cards (cards/signatures/binding.py):
the keys of ``{origin}/.well-known/jwks.json``, fetched and parsed by the registry's own JWKS
source (the fetch policy, the cache and the refetch on an unknown kid: cards/signatures/jwks.py)
and built by its key code, which decides which algorithm each key may verify (EdDSA for
Ed25519, ES256/384/512 for P-256/384/521, RS*/PS* for RSA of 2048 bits or more).

The account sends a compact JWS whose protected header has ``alg`` and ``kid`` and whose payload
is the JSON object ``{"origin": "<origin>", "challenge": "<challenge>"}`` (other members are
ignored). A ``jku`` in the header is ignored: the keys are always the origin's well-known set.
A stored proof cannot be signed again, so a re-check asks only that the kid is still published.
"""

from __future__ import annotations

import hmac
from typing import Any

from cards.signatures import jose
from cards.signatures.binding import WELL_KNOWN_JWKS_PATH
from cards.signatures.jwks import JwksLookup, JwksSource
from cards.signatures.keys import KeySet, PublicKey
from publishers.models import Origin
from publishers.proofs import Outcome, failed, passed

MAX_JWS_LENGTH = 16 * 1024
HOW = (
    "sign the payload as a compact JWS (protected header with alg and kid; ES256, RS256, EdDSA "
    "and the other JOSE asymmetric algorithms) with a key whose public half is in the JWKS"
)


def jwks_url(origin: Origin) -> str:
    return origin.origin + WELL_KNOWN_JWKS_PATH


def payload(origin: Origin) -> dict[str, str]:
    return {"origin": origin.origin, "challenge": origin.challenge}


def instructions(origin: Origin) -> dict[str, Any]:
    return {"jwks_url": jwks_url(origin), "payload": payload(origin), "how": HOW}


def _keys(
    source: JwksSource, url: str, kid: str
) -> tuple[JwksLookup, KeySet | None, list[PublicKey]]:
    """The set at ``url`` and its keys for ``kid``, fetched again once if a cached set has
    none (a key added since the set was cached)."""
    lookup = source.get(url)
    keyset = lookup.keyset
    found = keyset.find(kid) if keyset is not None else []
    if not found and lookup.cached:
        again = source.refetch(url, kid)
        if again is not None:
            lookup, keyset = again, again.keyset
            found = keyset.find(kid) if keyset is not None else []
    return lookup, keyset, found


def _payload_problem(origin: Origin, encoded: str) -> str | None:
    raw = jose.b64url_decode(encoded)
    if raw is None:
        return "the JWS payload is not base64url"
    try:
        document = jose.loads_strict(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        return f"the JWS payload is not JSON: {exc}"
    if not isinstance(document, dict):
        return "the JWS payload is not a JSON object"
    expected = payload(origin)
    for name, value in expected.items():
        given = document.get(name)
        if not isinstance(given, str) or not hmac.compare_digest(
            given.encode("utf-8"), value.encode("utf-8")
        ):
            return f"the JWS payload has {name} {given!r}; expected {value!r}"
    return None


def check(origin: Origin, jws: Any, source: JwksSource | None = None) -> Outcome:
    """Verify ``jws`` (compact serialisation) for ``origin``."""
    if not isinstance(jws, str) or not jws.strip():
        return failed('the jwks method needs "jws": a compact JWS over the payload')
    jws = jws.strip()
    if len(jws) > MAX_JWS_LENGTH:
        return failed(f"the JWS is longer than {MAX_JWS_LENGTH} characters")
    parts = jws.split(".")
    if len(parts) != 3:
        return failed("the JWS is not in compact form (three base64url parts joined by dots)")
    protected, encoded, signature = parts
    header, problem = jose.parse_protected(protected)
    if header is None:
        return failed(problem)
    refusal = jose.header_problem(header)
    if refusal is not None:
        return failed(refusal[1])
    payload_problem = _payload_problem(origin, encoded)
    if payload_problem is not None:
        return failed(payload_problem)
    sig, problem = jose.decode_signature(signature)
    if sig is None:
        return failed(problem)
    kid, alg = header.kid or "", header.alg or ""
    url = jwks_url(origin)
    lookup, keyset, keys = _keys(source or JwksSource.from_settings(), url, kid)
    if keyset is None:
        return failed(lookup.error, transient=lookup.transient)
    if not keys:
        rejected = keyset.rejections_for(kid)
        if rejected:
            return failed(f"{rejected[0]} ({url})")
        return failed(f"no key with kid {kid[:80]!r} in {url} ({keyset.summary()})")
    reason = ""
    for key in keys:
        refused = key.refusal_for(alg)
        if refused:
            reason = reason or f"{refused} ({url})"
            continue
        if len(sig) == key.size and key.verify(alg, f"{protected}.{encoded}".encode("ascii"), sig):
            return passed(key_id=kid)
        reason = f"the signature does not verify with key {kid[:80]!r} of {url} ({alg})"
    return failed(reason)


def recheck(origin: Origin, source: JwksSource | None = None) -> Outcome:
    """Whether the key that signed (``origin.key_id``) is still in the origin's JWKS."""
    url, kid = jwks_url(origin), origin.key_id
    lookup, keyset, keys = _keys(source or JwksSource.from_settings(), url, kid)
    if keyset is None:
        return failed(lookup.error, transient=lookup.transient)
    if not keys:
        return failed(f"the key {kid[:80]!r} that signed the proof is gone from {url}")
    return passed(key_id=kid)
