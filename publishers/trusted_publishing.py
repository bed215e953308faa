"""Trusted publishing (issue 45 §1): a CI job's OIDC ID token exchanged for a short publish token.

The owner of a verified origin registers a trusted publisher for it (:func:`register`): an
issuer (one of ``REGISTRY_TRUSTED_ISSUERS``), a repository (GitHub's ``repository`` claim,
GitLab's ``project_path``), the workflow file in it and optionally an environment. A CI job then
sends its ID token, minted for ``REGISTRY_TRUSTED_PUBLISHING_AUDIENCE``, to :func:`exchange`:

1. the unverified header and ``iss`` are read; ``iss`` must be an allowed issuer;
2. ``{iss}/.well-known/openid-configuration`` names the ``jwks_uri`` (cached 10 minutes); the
   key set is fetched by the registry's JWKS source (cards/signatures/jwks.py: the fetch policy
   and politeness gate, a cache, and one rate-limited refetch on an unknown ``kid``, which is
   how a rotated key is picked up);
3. PyJWT verifies the signature (RS256 or ES256 only), ``iss``, ``aud``, ``exp``, ``nbf`` and
   ``iat`` (a leeway of :data:`LEEWAY`); ``jti`` is recorded until ``exp`` and a replay refused;
4. the trusted publishers of (issuer, repository) whose workflow, and environment when one is
   set, match the claims are found; their origin must still be verified;
5. a :class:`PublisherToken` of scope ``origin`` is minted for the origin's account, lasting
   ``REGISTRY_TRUSTED_PUBLISH_TOKEN_MINUTES``.

Every exchange whose token was signed by an allowed issuer is audited (OriginEvent
``ci-exchange``, refusals too, with the reason); every one is counted in
``registry_trusted_exchanges_total`` (outcome ``ok``/``refused``, reason from :data:`REASONS`).
A refusal names the check that failed, never which repositories are registered.
"""

from __future__ import annotations

import hashlib
import json
import logging
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import jwt
from django.conf import settings
from django.core.cache import cache
from django.db import IntegrityError, transaction
from django.utils import timezone

from cards.signatures.jwks import JwksSource
from cards.signatures.keys import PublicKey
from publishers import tokens
from publishers.models import Origin, OriginEvent, PublisherToken, TrustedPublisher, UsedTokenId
from registry import metrics
from registry.http import FetchError, FetchPolicy, fetch

logger = logging.getLogger(__name__)

ALGORITHMS = ("RS256", "ES256")
LEEWAY = 30  # seconds of clock skew allowed on exp, nbf and iat
MAX_TOKEN_LENGTH = 16 * 1024
DISCOVERY_TTL = 10 * 60
JWKS_TTL = 10 * 60
DISCOVERY_PATH = "/.well-known/openid-configuration"
_CACHE_PREFIX = "publishers.trusted.discovery.v1:"
# The reasons an exchange is refused: the metrics' closed set of labels, and the problem's slug.
REASONS = {
    "malformed": 401,
    "issuer-not-allowed": 401,
    "issuer-unreachable": 503,
    "unknown-key": 401,
    "bad-signature": 401,
    "wrong-audience": 401,
    "expired": 401,
    "not-yet-valid": 401,
    "missing-claim": 401,
    "replayed": 401,
    "no-match": 403,
    "ambiguous": 409,
    "origin-not-verified": 403,
}
NO_MATCH = (
    "No trusted publisher matches this token (its issuer, repository, workflow and environment). "
    "The origin's owner registers one with POST /api/v1/origins/{origin_id}/trusted-publishers."
)


class Refused(Exception):
    """An exchange refused: ``reason`` (a key of :data:`REASONS`) and what to do."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail
        self.status = REASONS[reason]


class Invalid(ValueError):
    """A trusted publisher that cannot be registered; ``field`` names the offending member."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


@dataclass(frozen=True)
class Exchanged:
    token: PublisherToken
    secret: str
    expires_at: datetime


def allowed_issuers() -> list[str]:
    value = settings.REGISTRY_TRUSTED_ISSUERS
    items = value.split(",") if isinstance(value, str) else list(value)
    return [item.strip().rstrip("/") for item in items if item.strip()]


# --- Registering ----------------------------------------------------------------------------


def _text(field: str, value: Any, limit: int, *, required: bool = True) -> str:
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value.strip()):
        raise Invalid(field, f"{field} must be a non-empty string.")
    text = value.strip()
    if len(text) > limit or any(ch.isspace() or ord(ch) < 0x20 for ch in text) or "@" in text:
        raise Invalid(field, f"{field} must be at most {limit} characters, without spaces or @.")
    return text


def register(
    origin: Origin, account: Any, *, issuer: Any, repository: Any, workflow: Any, environment: Any
) -> tuple[TrustedPublisher, bool]:
    """(the trusted publisher, whether it was made now) for ``origin``, which must be verified
    and the account's (the caller checks the account). Raises :class:`Invalid`."""
    issuer_text = _text("issuer", issuer, 300).rstrip("/")
    if issuer_text not in allowed_issuers():
        raise Invalid("issuer", f"issuer must be one of: {', '.join(allowed_issuers())}.")
    repo = _text("repository", repository, 200).strip("/")
    if "/" not in repo:
        raise Invalid("repository", "repository is owner/name (GitLab: group/project).")
    path = _text("workflow", workflow, 300).removeprefix("./")
    if path.startswith("/") or path.endswith("/"):
        raise Invalid("workflow", "workflow is the file's path, e.g. .github/workflows/release.yml")
    env = _text("environment", environment, 200, required=False)
    fields = {"issuer": issuer_text, "repository": repo, "workflow": path, "environment": env}
    with transaction.atomic():
        found = TrustedPublisher.objects.filter(origin=origin, **fields).first()
        if found is not None:
            return found, False
        row = TrustedPublisher.objects.create(origin=origin, created_by=account, **fields)
        _audit(origin, OriginEvent.Action.TRUSTED_PUBLISHER_ADDED, {"id": row.pk, **fields})
    return row, True


def remove(row: TrustedPublisher) -> None:
    fields = {"id": row.pk, "issuer": row.issuer, "repository": row.repository}
    with transaction.atomic():
        _audit(row.origin, OriginEvent.Action.TRUSTED_PUBLISHER_REMOVED, fields)
        row.delete()


def _audit(origin: Origin | None, action: str, detail: dict[str, Any]) -> None:
    OriginEvent.objects.create(
        origin=origin,
        origin_text=origin.origin if origin is not None else "",
        account_id=origin.account_id if origin is not None else None,
        action=action,
        detail=detail,
    )


# --- Checking the ID token ------------------------------------------------------------------


def _unverified(id_token: Any) -> tuple[dict[str, Any], str]:
    """(header, issuer) of a token, unverified; refuses what is not a JWT of ours."""
    if not isinstance(id_token, str) or not id_token or len(id_token) > MAX_TOKEN_LENGTH:
        raise Refused("malformed", "token must be the CI job's OIDC ID token (a compact JWT).")
    try:
        header = jwt.get_unverified_header(id_token)
        claims = jwt.decode(id_token, options={"verify_signature": False})
    except jwt.PyJWTError as exc:
        raise Refused("malformed", f"The token is not a readable JWT: {exc}.") from None
    if header.get("alg") not in ALGORITHMS:
        raise Refused("malformed", f"The token's alg must be one of {', '.join(ALGORITHMS)}.")
    if not isinstance(header.get("kid"), str) or not header["kid"]:
        raise Refused("malformed", "The token's header names no key (kid).")
    issuer = claims.get("iss")
    if not isinstance(issuer, str) or not issuer:
        raise Refused("missing-claim", "The token has no iss claim.")
    if issuer.rstrip("/") not in allowed_issuers():
        raise Refused(
            "issuer-not-allowed",
            f"Tokens of this issuer are not accepted; allowed: {', '.join(allowed_issuers())}.",
        )
    return header, issuer


def jwks_uri(issuer: str) -> str:
    """The issuer's ``jwks_uri``, from its discovery document (cached)."""
    key = _CACHE_PREFIX + hashlib.sha256(issuer.encode()).hexdigest()[:40]
    try:
        known = cache.get(key)
    except Exception:  # the cache is down: discover again
        known = None
    if isinstance(known, str):
        return known
    url = issuer.rstrip("/") + DISCOVERY_PATH
    try:
        result = fetch(url, policy=FetchPolicy.from_settings(), expect_json=True)
        document = json.loads(result.body)
    except FetchError as err:
        raise Refused("issuer-unreachable", f"{url} could not be fetched: {err.reason}") from None
    except ValueError:
        raise Refused("issuer-unreachable", f"{url} is not JSON.") from None
    uri = document.get("jwks_uri") if isinstance(document, dict) else None
    if document.get("issuer", "").rstrip("/") != issuer.rstrip("/") or not isinstance(uri, str):
        raise Refused("issuer-unreachable", f"{url} names another issuer or no jwks_uri.")
    try:
        cache.set(key, uri, DISCOVERY_TTL)
    except Exception:  # noqa: S110 - a cache outage only costs a refetch
        pass
    return uri


def signing_key(issuer: str, kid: str, alg: str) -> PublicKey:
    """The issuer's key ``kid``, able to verify ``alg``; the set is fetched again once (rate
    limited) when a cached one lacks the kid: a rotated key."""
    url = jwks_uri(issuer)
    source = JwksSource(FetchPolicy.from_settings(), default_ttl=JWKS_TTL, max_ttl=JWKS_TTL)
    lookup = source.get(url)
    found = lookup.keyset.find(kid) if lookup.keyset is not None else []
    if not found and lookup.cached:
        again = source.refetch(url, kid)
        if again is not None:
            lookup = again
            found = lookup.keyset.find(kid) if lookup.keyset is not None else []
    if lookup.keyset is None:
        raise Refused("issuer-unreachable", lookup.error or f"no key set at {url}")
    usable = [key for key in found if key.refusal_for(alg) is None]
    if not usable:
        raise Refused("unknown-key", f"The issuer publishes no {alg} key with kid {kid[:80]!r}.")
    return usable[0]


_PYJWT_REASONS: tuple[tuple[type[Exception], str], ...] = (
    (jwt.ExpiredSignatureError, "expired"),
    (jwt.ImmatureSignatureError, "not-yet-valid"),
    (jwt.InvalidAudienceError, "wrong-audience"),
    (jwt.MissingRequiredClaimError, "missing-claim"),
    (jwt.InvalidSignatureError, "bad-signature"),
)


def verified_claims(id_token: Any) -> tuple[str, dict[str, Any]]:
    """(issuer, claims) of a valid ID token for this registry; :class:`Refused` otherwise."""
    header, issuer = _unverified(id_token)
    key = signing_key(issuer, header["kid"], header["alg"])
    audience = settings.REGISTRY_TRUSTED_PUBLISHING_AUDIENCE
    try:
        claims: dict[str, Any] = jwt.decode(
            id_token,
            key=key.key,
            algorithms=[header["alg"]],
            audience=audience,
            issuer=issuer,
            leeway=LEEWAY,
            options={"require": ["exp", "iat", "iss", "aud", "jti"]},
        )
    except jwt.PyJWTError as exc:
        reason = next((r for kind, r in _PYJWT_REASONS if isinstance(exc, kind)), "malformed")
        if reason == "wrong-audience":
            detail = f"The token's aud must be {audience!r}: ask the CI for a token for it."
        else:
            detail = f"The token was refused: {exc}."
        raise Refused(reason, detail) from None
    if not isinstance(claims.get("jti"), str) or not claims["jti"]:
        raise Refused("missing-claim", "The token's jti must be a non-empty string.")
    return issuer, claims


def workflow_paths(claims: dict[str, Any], repository: str) -> set[str]:
    """The workflow file paths the claims name in ``repository``: GitHub's ``job_workflow_ref``
    and ``workflow_ref`` (``owner/repo/<path>@<ref>``), GitLab's ``ci_config_ref_uri``
    (``host/group/project//<path>@<ref>``)."""
    paths: set[str] = set()
    prefix = repository.lower() + "/"
    for name in ("job_workflow_ref", "workflow_ref"):
        value = claims.get(name)
        if isinstance(value, str):
            head = value.split("@", 1)[0]
            if head.lower().startswith(prefix):
                paths.add(head[len(prefix) :])
    value = claims.get("ci_config_ref_uri")
    if isinstance(value, str):
        where, _, path = value.split("@", 1)[0].partition("//")
        if path and where.lower().endswith("/" + repository.lower()):
            paths.add(path)
    return paths


def matching(issuer: str, claims: dict[str, Any], origin: str | None) -> TrustedPublisher:
    """The one trusted publisher these claims match, its origin verified."""
    repository = claims.get("repository") or claims.get("project_path")
    if not isinstance(repository, str) or not repository:
        raise Refused("missing-claim", "The token names no repository (or project_path).")
    rows = TrustedPublisher.objects.filter(
        issuer=issuer.rstrip("/"), repository__iexact=repository
    ).select_related("origin", "origin__account")
    if origin:
        rows = rows.filter(origin__origin=origin)
    paths = workflow_paths(claims, repository)
    environment = str(claims.get("environment") or "").lower()
    matched = [
        row
        for row in rows
        if row.workflow in paths and (not row.environment or row.environment.lower() == environment)
    ]
    if not matched:
        raise Refused("no-match", NO_MATCH)
    verified = [row for row in matched if row.origin.state == Origin.State.VERIFIED]
    if not verified:
        raise Refused(
            "origin-not-verified",
            "The origin of the trusted publisher this token matches is no longer verified: "
            "its owner must prove it again before CI can publish.",
        )
    names = sorted({row.origin.origin for row in verified})
    if len(names) > 1:
        raise Refused(
            "ambiguous",
            f"This workflow publishes to several origins ({', '.join(names)}): send "
            '"origin" with the token to say which.',
        )
    return verified[0]


def _burn(issuer: str, claims: dict[str, Any]) -> None:
    """Record the token's jti until it expires; a second use is a replay."""
    now = timezone.now()
    expires = datetime.fromtimestamp(int(claims["exp"]) + LEEWAY, tz=UTC)
    UsedTokenId.objects.filter(expires_at__lt=now).delete()
    try:
        with transaction.atomic():
            UsedTokenId.objects.create(issuer=issuer, jti=claims["jti"][:200], expires_at=expires)
    except IntegrityError:
        raise Refused("replayed", "This ID token was exchanged already; mint a new one.") from None


def _identity(claims: dict[str, Any]) -> dict[str, Any]:
    names = ("repository", "project_path", "workflow_ref", "job_workflow_ref")
    shown = {name: str(claims[name])[:300] for name in names if name in claims}
    for name in ("environment", "ci_config_ref_uri", "ref", "sha", "run_id", "jti"):
        if name in claims:
            shown[name] = str(claims[name])[:300]
    return shown


def _counted(reason: str) -> None:
    metrics.TRUSTED_EXCHANGES.labels(
        outcome="ok" if reason == "ok" else "refused", reason=reason
    ).inc()


def exchange(id_token: Any, origin: str | None = None) -> Exchanged:
    """A publish token (scope origin) for a CI job's ID token; raises :class:`Refused`."""
    claims: dict[str, Any] | None = None
    issuer = ""
    try:
        issuer, claims = verified_claims(id_token)
        _burn(issuer, claims)
        row = matching(issuer, claims, origin)
    except Refused as refused:
        _counted(refused.reason)
        logger.info("trusted publishing exchange refused: %s", refused.reason)
        if claims is not None:  # signed by an allowed issuer: worth the audit trail
            detail = {"outcome": "refused", "reason": refused.reason, "issuer": issuer}
            _audit(None, OriginEvent.Action.CI_EXCHANGE, {**detail, **_identity(claims)})
        raise
    now = timezone.now()
    expires = now + timedelta(minutes=settings.REGISTRY_TRUSTED_PUBLISH_TOKEN_MINUTES)
    secret = tokens.PREFIX + secrets.token_urlsafe(32)
    name = f"CI: {row.repository}@{row.workflow}"[: tokens.NAME_MAX]
    with transaction.atomic():
        token = PublisherToken.objects.create(
            account=row.origin.account,
            name=name,
            prefix=secret[: tokens.SHOWN],
            digest=tokens.digest_of(secret),
            scope=PublisherToken.Scope.ORIGIN,
            origin=row.origin,
            expires_at=expires,
        )
        done: dict[str, Any] = {
            "outcome": "ok",
            "issuer": issuer,
            "trusted_publisher": row.pk,
            "token_prefix": token.prefix,
            "expires_at": expires.isoformat(),
        }
        _audit(row.origin, OriginEvent.Action.CI_EXCHANGE, {**done, **_identity(claims)})
    _counted("ok")
    return Exchanged(token=token, secret=secret, expires_at=expires)
