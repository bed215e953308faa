"""validate_card: run every rule over one card, turning a broken rule into a finding."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cards.parsing import Shape
from cards.rules.card import (
    rule_capabilities,
    rule_endpoint,
    rule_provider_and_links,
    rule_signatures,
    rule_top_level,
)
from cards.rules.context import Report, RuleContext, Run
from cards.rules.fields import REQUIRED_BY_SHAPE
from cards.rules.interfaces import rule_interfaces
from cards.rules.modes import rule_modes
from cards.rules.objects import kind_of
from cards.rules.security import rule_security
from cards.rules.skills import rule_skills
from cards.rules.style import rule_deprecated, rule_snake_case, rule_templates
from cards.rules.versions import judged_shape, rule_versions
from registry.findings import Finding

# In this order, so findings come out in a stable, readable order.
RULES: tuple[Callable[[Run], None], ...] = (
    rule_endpoint,
    rule_top_level,
    rule_interfaces,
    rule_provider_and_links,
    rule_capabilities,
    rule_skills,
    rule_modes,
    rule_security,
    rule_signatures,
    rule_versions,
    rule_deprecated,
    rule_snake_case,
    rule_templates,
)


def validate_card(
    data: dict[str, Any], card: dict[str, Any], shape: Shape, ctx: RuleContext | None = None
) -> list[Finding]:
    """All findings for one card. `data` is the JSON as served, `card` its v1.0 normal form.

    Never raises: wrong types anywhere become findings.
    """
    report = Report()
    if not isinstance(data, dict):
        report.error("card.wrong-type", "", f"the card must be an object, not {kind_of(data)}")
        return report.findings
    layout: Shape = shape if shape in REQUIRED_BY_SHAPE else "unknown"
    run = Run(
        data=data,
        card=card if isinstance(card, dict) else {},
        shape=layout,
        ctx=ctx or RuleContext(),
        report=report,
        judged=judged_shape(data, layout),
    )
    for rule in RULES:
        try:
            rule(run)
        except Exception as exc:  # noqa: BLE001 - one broken rule must not hide the others
            report.error("rules.internal-error", "", f"{rule.__name__} failed: {exc!r}")
    if report.dropped:
        message = f"{report.dropped} more findings were not recorded"
        report.findings.append(Finding("card.too-many-findings", "info", "", message))
    return report.findings
