"""Parse and validate: bytes to a v1.0 card and findings (card rules plus registered checks)."""

from __future__ import annotations

from typing import Any

from django.conf import settings

from cards import hooks
from cards.parsing import parse_card_bytes
from cards.pipeline.report import CardReport
from cards.rules import RuleContext, validate_card
from registry.findings import Finding


def rule_context() -> RuleContext:
    return RuleContext(
        allow_http=settings.REGISTRY_FETCH_ALLOW_HTTP,
        allowed_networks=tuple(settings.REGISTRY_FETCH_ALLOWED_NETWORKS),
    )


def _has_nul(value: Any) -> bool:
    # PostgreSQL's jsonb cannot hold U+0000; such a document is kept as raw bytes only.
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(_has_nul(k) or _has_nul(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_nul(v) for v in value)
    return False


def check(*, raw: bytes, lenient_content_type: bool = False) -> CardReport:
    """Parse and validate card bytes; the same engine serves ingestion and /validate."""
    parsed = parse_card_bytes(raw)
    findings = list(parsed.findings)
    if lenient_content_type:
        findings.append(
            Finding(
                code="fetch.lenient-content-type",
                severity="warning",
                pointer="",
                message="The card was not served as application/json; serve it as JSON.",
            )
        )
    if parsed.data is not None and _has_nul(parsed.data):
        findings.append(
            Finding(
                code="json.nul-character",
                severity="error",
                pointer="",
                message="The document contains U+0000, which the registry cannot index.",
            )
        )
        parsed.data = None
        parsed.card = None
    if parsed.data is not None and parsed.card is not None:
        findings.extend(validate_card(parsed.data, parsed.card, parsed.shape, rule_context()))
        for check in hooks.card_checks:  # schemas_app: embedded schemas and extension params
            findings.extend(check(parsed.data, parsed.card))
    return CardReport(parsed=parsed, findings=findings)
