"""What a publisher has: proven (or claimed) origins with their audit trail, and tokens."""

from __future__ import annotations

import secrets

from django.conf import settings
from django.db import models
from django.db.models import Q


def new_challenge() -> str:
    """The value an account publishes to prove an origin: 32 random bytes, URL-safe."""
    return secrets.token_urlsafe(32)


class Origin(models.Model):
    """An origin (``scheme://host[:port]`` in normal form) an account claims, and its proof.

    One account has one row per origin. Several accounts may claim one origin; at most one holds
    it verified at a time: the latest successful proof wins and the earlier one is superseded
    (a domain that changed hands moves to whoever proves it now).
    """

    class State(models.TextChoices):
        PENDING = "pending", "pending: not proven yet"
        VERIFIED = "verified", "verified"
        LAPSED = "lapsed", "lapsed: the proof is gone"
        SUPERSEDED = "superseded", "superseded: another account proved it since"

    class Method(models.TextChoices):
        HTTP = "http", "a file at a well-known path"
        DNS = "dns", "a DNS TXT record"
        JWKS = "jwks", "a signature by a key of the origin's JWKS"

    account = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="origins"
    )
    origin = models.CharField(max_length=300, help_text="scheme://host[:port], normal form.")
    state = models.CharField(max_length=16, choices=State.choices, default=State.PENDING)
    challenge = models.CharField(max_length=64, default=new_challenge)
    method = models.CharField(
        max_length=8, choices=Method.choices, blank=True, help_text="How it was proven last."
    )
    key_id = models.CharField(
        max_length=200, blank=True, help_text="The JWKS key (kid) that signed, for jwks proofs."
    )
    verified_at = models.DateTimeField(null=True, blank=True)
    checked_at = models.DateTimeField(null=True, blank=True, help_text="Last proof or re-check.")
    next_check_at = models.DateTimeField(null=True, blank=True, db_index=True)
    failures = models.PositiveIntegerField(
        default=0, help_text="Re-checks failed in a row; the proof lapses at the limit."
    )
    last_error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["origin", "id"]
        constraints = [
            models.UniqueConstraint(fields=["account", "origin"], name="origin_once_per_account"),
            models.UniqueConstraint(
                fields=["origin"], condition=Q(state="verified"), name="origin_verified_once"
            ),
        ]
        indexes = [models.Index(fields=["origin", "state"], name="origin_state")]

    def __str__(self) -> str:
        return f"{self.origin} ({self.state})"

    @property
    def host(self) -> str:
        """The host part, as the DNS method names its record (``_a2a-registry.<host>``)."""
        rest = self.origin.split("://", 1)[-1]
        if rest.startswith("["):
            return rest[1:].split("]", 1)[0]
        return rest.rsplit(":", 1)[0] if ":" in rest else rest


class OriginEvent(models.Model):
    """The audit trail of origins: every claim, proof, failure, lapse and move of agents."""

    class Action(models.TextChoices):
        CLAIMED = "claimed"
        VERIFIED = "verified"
        FAILED = "failed"
        RECHECKED = "rechecked"
        LAPSED = "lapsed"
        SUPERSEDED = "superseded"
        REMOVED = "removed"
        AGENTS_MOVED = "agents-moved"
        TRUSTED_PUBLISHER_ADDED = "trusted-publisher-added"
        TRUSTED_PUBLISHER_REMOVED = "trusted-publisher-removed"
        CI_EXCHANGE = "ci-exchange"

    origin = models.ForeignKey(
        Origin, null=True, blank=True, on_delete=models.SET_NULL, related_name="events"
    )
    origin_text = models.CharField(max_length=300, help_text="Kept when the claim is removed.")
    account = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    action = models.CharField(max_length=32, choices=Action.choices)
    method = models.CharField(max_length=8, blank=True)
    detail = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.origin_text} {self.action}"


class PublisherToken(models.Model):
    """An API token its owner made: shown once, stored as a SHA-256 digest, scoped, expiring."""

    class Scope(models.TextChoices):
        READ = "read", "read: reads only"
        PUBLISH = "publish", "publish: submit and manage the account's agents"
        AGENT = "agent", "one agent: manage that agent only"
        ORIGIN = "origin", "one origin: submit and manage its agents (CI, trusted publishing)"

    account = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="publisher_tokens"
    )
    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=16, help_text="The token's first characters, to tell it.")
    digest = models.CharField(max_length=64, unique=True, help_text="SHA-256 of the token, hex.")
    scope = models.CharField(max_length=8, choices=Scope.choices, default=Scope.PUBLISH)
    agent = models.ForeignKey(
        "cards.Agent", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    origin = models.ForeignKey(
        Origin,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="+",
        help_text="With scope origin: the origin whose agents the token covers.",
    )
    expires_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(scope="agent", agent__isnull=False) | ~Q(scope="agent"),
                name="token_agent_scope_names_agent",
            ),
            models.CheckConstraint(
                condition=Q(scope="origin", origin__isnull=False, expires_at__isnull=False)
                | (~Q(scope="origin") & Q(origin__isnull=True)),
                name="token_origin_scope_names_origin",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"


class TrustedPublisher(models.Model):
    """A CI workflow the owner of a verified origin trusts to publish its agents (issue 45 §1).

    A job whose OIDC ID token comes from ``issuer`` with these claims exchanges it for a short
    publish token of scope origin (publishers/trusted_publishing.py). ``repository`` is GitHub's
    ``repository`` claim (``owner/repo``) or GitLab's ``project_path``; ``workflow`` the path
    of the workflow file in it (``.github/workflows/release.yml``, or ``.gitlab-ci.yml``);
    ``environment``, when set, must be the job's deployment environment.
    """

    origin = models.ForeignKey(Origin, on_delete=models.CASCADE, related_name="trusted_publishers")
    issuer = models.CharField(max_length=300)
    repository = models.CharField(max_length=200)
    workflow = models.CharField(max_length=300)
    environment = models.CharField(max_length=200, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["origin", "issuer", "repository", "workflow", "environment"],
                name="trusted_publisher_once",
            )
        ]
        indexes = [models.Index(fields=["issuer", "repository"], name="trusted_issuer_repo")]

    def __str__(self) -> str:
        return f"{self.repository} {self.workflow} -> {self.origin.origin}"


class UsedTokenId(models.Model):
    """The ``jti`` of every OIDC ID token exchanged, kept until the token expires: a token is
    exchanged once (a replay is refused). Rows past ``expires_at`` are pruned on each use."""

    issuer = models.CharField(max_length=300)
    jti = models.CharField(max_length=200)
    expires_at = models.DateTimeField(db_index=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["issuer", "jti"], name="used_token_id_once")]

    def __str__(self) -> str:
        return f"{self.issuer} {self.jti}"
