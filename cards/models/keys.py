"""Keys: those that verified an agent's cards, those curators pinned, the registry's own."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from cards.models.agents import Agent
from cards.models.cards import Snapshot


class AgentKey(models.Model):
    """A key (by RFC 7638 thumbprint) that verified one of the agent's cards: key continuity."""

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="keys")
    thumbprint = models.CharField(max_length=64)
    key_source = models.CharField(max_length=16, blank=True)
    key_url = models.CharField(max_length=2048, blank=True)
    first_seen_at = models.DateTimeField()
    last_seen_at = models.DateTimeField()
    current = models.BooleanField(default=True)

    class Meta:
        ordering = ["agent", "-last_seen_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["agent", "thumbprint"], name="agentkey_unique_thumbprint"
            ),
        ]


class PinnedKey(models.Model):
    """A JWKS a curator pinned for one agent: its keys count as bound to the agent."""

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="pinned_keys")
    jwks = models.JSONField(help_text='A JWKS document: {"keys": [...]}.')
    note = models.CharField(max_length=512, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)


class AgentEvent(models.Model):
    """Something in an agent's history that is not a new snapshot by itself (a key change)."""

    class Kind(models.TextChoices):
        SIGNING_KEY_CHANGED = "signing-key-changed"
        SIGNATURE_STATUS_CHANGED = "signature-status-changed"
        MANIFEST_ENTRY_REMOVED = "manifest-entry-removed"
        MANIFEST_ENTRY_RESTORED = "manifest-entry-restored"
        ARD_IDENTIFIER_REFUSED = "ard-identifier-refused"

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="events")
    snapshot = models.ForeignKey(
        Snapshot, null=True, blank=True, on_delete=models.SET_NULL, related_name="events"
    )
    kind = models.CharField(max_length=32, choices=Kind.choices)
    detail = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]


class RegistrySigningKey(models.Model):
    """The registry's own Ed25519 keys for the attestations it issues; the active one signs."""

    kid = models.CharField(max_length=64, unique=True)
    private_pem = models.TextField(help_text="PKCS#8 PEM of the private key.")
    public_jwk = models.JSONField()
    active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)
    retired_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
