"""Where apps built on top of ``cards`` plug into its pipeline and pages.

``cards`` knows agents and their cards; ``schemas_app`` (and later apps) know more about them.
The dependency points one way, from those apps to ``cards`` (DESIGN.md, "Layers"): instead of
``cards`` importing them, each registers its steps here when Django starts (``AppConfig.ready``).
With an app left out of ``INSTALLED_APPS``, its steps are simply not there.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from registry.findings import Finding

# (data as served, card in the v1.0 shape) -> more findings about the card; database-free.
CardCheck = Callable[[Any, Any], Iterable[Finding]]
# (agent, card, snapshot, fresh) -> None: more index rows, written in the ingest transaction;
# ``fresh``: the agent had no card stored before, so it has no such rows to replace.
IndexStep = Callable[..., Any]
# (snapshot ids) -> {snapshot id: [detail rows]}: what a history entry shows besides the card.
SnapshotDetails = Callable[[list[Any]], dict[Any, list[dict[str, Any]]]]
# (agent) -> [schema rows] for the catalogue page of an agent.
AgentRows = Callable[[Any], list[dict[str, Any]]]
# (request, agent) -> a section of the agent's catalogue page or None: {"template": name,
# "context": {...}, "scripts": bool}; with scripts, the page's policy lets its own static
# scripts run (cards.catalogue.common.SCRIPT_POLICY).
PageSection = Callable[[Any, Any], dict[str, Any] | None]

# (agent id, crawl outcome) -> None: told after each crawl task's crawl (live checks queue theirs).
AfterCrawl = Callable[[str, str], None]
# (agent ids) -> None: told in the transaction that stored new text for these agents (a crawl's
# card, a manifest's entries); search embeds them once it commits.
TextChanged = Callable[[list[str]], None]

# (card URL) -> (account id, origin) of the verified publisher of the URL's origin, or None
# (publishers: issue 44). The first lookup that answers decides.
PublisherLookup = Callable[[str], tuple[int, str] | None]
# (user, agent, action) -> None, or raise a ProblemError: may ``user`` do ``action`` to
# ``agent`` (today "probe_messages-on": opting in to messages, which reach its endpoints)?
ActionGuard = Callable[[Any, Any, str], None]

card_checks: list[CardCheck] = []
publisher_lookups: list[PublisherLookup] = []
action_guards: list[ActionGuard] = []
after_crawl: list[AfterCrawl] = []
text_changes: list[TextChanged] = []
index_steps: list[IndexStep] = []
snapshot_details: dict[str, SnapshotDetails] = {}
agent_schema_rows: list[AgentRows] = []
agent_page_sections: list[PageSection] = []


def register_card_check(check: CardCheck) -> None:
    if check not in card_checks:
        card_checks.append(check)


def register_index_step(step: IndexStep) -> None:
    if step not in index_steps:
        index_steps.append(step)


def register_snapshot_details(name: str, details: SnapshotDetails) -> None:
    snapshot_details[name] = details


def register_agent_schema_rows(rows: AgentRows) -> None:
    if rows not in agent_schema_rows:
        agent_schema_rows.append(rows)


def register_after_crawl(step: AfterCrawl) -> None:
    if step not in after_crawl:
        after_crawl.append(step)


def register_text_changed(step: TextChanged) -> None:
    if step not in text_changes:
        text_changes.append(step)


def text_changed(agent_ids: list[str]) -> None:
    """Tell every registered step that these agents' text may have changed."""
    for step in text_changes:
        step(agent_ids)


def register_agent_page_section(section: PageSection) -> None:
    if section not in agent_page_sections:
        agent_page_sections.append(section)


def register_publisher_lookup(lookup: PublisherLookup) -> None:
    if lookup not in publisher_lookups:
        publisher_lookups.append(lookup)


def register_action_guard(guard: ActionGuard) -> None:
    if guard not in action_guards:
        action_guards.append(guard)


def guard(user: Any, agent: Any, action: str) -> None:
    """Ask every registered guard; the first that refuses raises."""
    for check in action_guards:
        check(user, agent, action)
