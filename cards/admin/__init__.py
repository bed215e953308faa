"""Admin registrations for the cards app (imported by Django's admin autodiscovery)."""

from __future__ import annotations

from cards.admin import agents

__all__ = ["agents"]
