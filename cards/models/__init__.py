"""Agents, the snapshots of their cards, the index rows search runs on, and what happened."""

from cards.models.activity import AuditEntry, CrawlAttempt, ImportItem, ImportJob
from cards.models.agents import Agent, FacetCount
from cards.models.ard import Manifest
from cards.models.cards import Extension, Mode, Skill, SkillTag, Snapshot
from cards.models.keys import AgentEvent, AgentKey, PinnedKey, RegistrySigningKey

__all__ = [
    "Agent",
    "AgentEvent",
    "AgentKey",
    "AuditEntry",
    "CrawlAttempt",
    "Extension",
    "FacetCount",
    "ImportItem",
    "ImportJob",
    "Manifest",
    "Mode",
    "PinnedKey",
    "RegistrySigningKey",
    "Skill",
    "SkillTag",
    "Snapshot",
]
