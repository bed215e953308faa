"""What the schema app adds to ``cards``' pipeline and pages (registered in ``apps.ready``)."""

from __future__ import annotations

from typing import Any

from cards import hooks
from registry.compiled import Compiled
from schemas_app.checks import schema_findings
from schemas_app.models import SchemaUse
from schemas_app.selectors import changes_by_snapshot
from schemas_app.services import index_agent_schemas


def _index(*, agent: Any, card: dict[str, Any], snapshot: Any, fresh: bool = False) -> None:
    index_agent_schemas(agent=agent, card=card, snapshot=snapshot, fresh=fresh)


# The uses an agent page reads at most (a card may have thousands: one a skill).
CATALOGUE_ROWS = 500


_uses: Compiled | None = None


def _catalogue_uses() -> Compiled:
    """The read of :func:`catalogue_rows`, compiled to SQL once (registry/compiled.py)."""
    global _uses
    if _uses is None:
        _uses = Compiled(
            lambda agent: SchemaUse.objects.filter(agent_id=agent)
            .order_by("name", "id")
            .values_list(
                "name", "skill_id", "field_name", "role", "document_id", "document__sha256",
                "document__title", "document__draft", "document__usable",
            )[:CATALOGUE_ROWS],
            agent=SchemaUse._meta.get_field("agent"),
        )  # fmt: skip
    return _uses


def catalogue_rows(agent: Any) -> list[dict[str, Any]]:
    """The agent's first schema uses (by name), each with its document (for the catalogue
    page, which shows the first schemas: cards.catalogue.schema_rows)."""
    # Plain rows, not model instances: a page of 500 uses cost 1,000 instances (half the page).
    uses = _catalogue_uses().all(agent=agent.pk)
    return [
        {
            "name": name,
            "skill_id": skill_id,
            "field_name": field_name,
            "role": role,
            "document": None
            if document_id is None
            else {"sha256": sha256, "title": title, "draft": draft, "usable": usable},
        }
        for name, skill_id, field_name, role, document_id, sha256, title, draft, usable in uses
    ]


def register() -> None:
    hooks.register_card_check(schema_findings)
    hooks.register_index_step(_index)
    hooks.register_snapshot_details("schema_changes", changes_by_snapshot)
    hooks.register_agent_schema_rows(catalogue_rows)
