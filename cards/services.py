"""Writes: submitting agents, crawling them, and checking cards.

Views and tasks call these; nothing here knows about HTTP requests. Every outcome of a crawl
is recorded on the agent row, so a failure is visible in the API and the admin, not only in logs.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from cards import hooks, queue
from cards.discovery import InvalidURL, candidate_card_urls, is_origin, normalise_url
from cards.models import Agent
from cards.moderation import agent_restore
from cards.parsing import ParsedDocument, parse_card_bytes
from cards.rules import RuleContext, validate_card
from registry.errors import ProblemError
from registry.findings import Finding, counts
from registry.http import FetchError, FetchPolicy, FetchResult, check_url, fetch

logger = logging.getLogger(__name__)


class TransientCrawlError(Exception):
    """The crawl failed for a reason that may go away (timeout, 5xx, 429): retry later."""

    def __init__(self, reason: str, *, retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.retry_after = retry_after


# --- checking a card ---------------------------------------------------------------------------


@dataclass
class CardReport:
    """What the registry concludes about one card document; stores nothing."""

    parsed: ParsedDocument
    findings: list[Finding] = field(default_factory=list)

    @property
    def card(self) -> dict[str, Any] | None:
        return self.parsed.card

    @property
    def valid(self) -> bool:
        return not any(f.severity == "error" for f in self.findings)

    def validation(self) -> dict[str, Any]:
        return {
            "valid": self.valid,
            "counts": counts(self.findings),
            "findings": [f.as_dict() for f in self.findings],
        }


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


def card_check(*, raw: bytes, lenient_content_type: bool = False) -> CardReport:
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


# --- fetching --------------------------------------------------------------------------------


def fetch_card(
    url: str,
    *,
    discover: bool,
    policy: FetchPolicy | None = None,
    headers: dict[str, str] | None = None,
) -> FetchResult:
    """Fetch the card at ``url``; for an origin, try the well-known paths in order.

    A 404 or 410 on the first well-known path moves on to the next one; any other failure
    is final for this attempt.
    """
    policy = policy or FetchPolicy.from_settings()
    candidates = candidate_card_urls(url) if discover else [url]
    last_error: FetchError | None = None
    for candidate in candidates:
        try:
            return fetch(candidate, policy=policy, headers=headers)
        except FetchError as err:
            last_error = err
            if err.status in (404, 410):
                continue
            raise
    assert last_error is not None
    if len(candidates) > 1:
        last_error.reason = (
            "no agent card at " + " nor ".join(candidates) + f" ({last_error.reason})"
        )
    raise last_error


# --- submission ------------------------------------------------------------------------------


def _invalid_url(detail: str) -> ProblemError:
    return ProblemError(
        status=400,
        slug="invalid-url",
        title="Invalid agent URL",
        detail=detail,
        errors=[{"pointer": "/url", "message": detail}],
    )


def submitted_url_check(url: Any) -> str:
    """Normalise a submitted URL and refuse what the fetch policy would refuse."""
    if not isinstance(url, str):
        raise _invalid_url("url must be a string")
    try:
        normalised = normalise_url(url)
    except InvalidURL as exc:
        raise _invalid_url(str(exc)) from None
    if len(normalised.encode("utf-8")) > 2048:
        raise _invalid_url("the URL is longer than 2048 bytes")
    try:
        check_url(normalised, FetchPolicy.from_settings())
    except FetchError as err:
        raise _invalid_url(err.reason) from None
    return normalised


def agent_submit(*, url: Any, user: Any, enqueue: bool = True) -> tuple[Agent, bool]:
    """Register an agent by URL, or return the one already registered for it.

    Returns ``(agent, created)``. Concurrent submissions of one URL meet at the unique
    constraint on ``Agent.url``: the loser reads the winner's row.
    """
    normalised = submitted_url_check(url)
    existing = Agent.objects.filter(Q(url=normalised) | Q(card_url=normalised)).first()
    if existing is not None:
        if existing.deleted_at is not None:
            # Deleted by its owner, submitted again: it comes back, owned by this submitter.
            agent_restore(agent=existing, actor=user)
        return existing, False
    discover = is_origin(normalised)
    try:
        with transaction.atomic():
            agent = Agent.objects.create(
                url=normalised,
                discover=discover,
                card_url="" if discover else normalised,
                submitted_by=user,
                next_crawl_at=timezone.now(),
                moderation=(
                    Agent.Moderation.APPROVED
                    if settings.REGISTRY_AUTO_APPROVE
                    else Agent.Moderation.PENDING
                ),
            )
            if enqueue:
                transaction.on_commit(lambda: enqueue_crawl(agent.pk))
    except IntegrityError:
        return Agent.objects.get(url=normalised), False
    return agent, True


def enqueue_crawl(
    agent_id: Any, *, countdown: float | None = None, priority: int = queue.ASKED
) -> bool:
    """Queue a crawl; if the broker is down the agent stays due and a later sweep takes it.

    A crawl someone asked for (the default) runs ahead of the periodic sweep's crawls."""
    return queue.send("cards.crawl_agent", str(agent_id), countdown=countdown, priority=priority)


def card_check_url(url: Any) -> tuple[CardReport, FetchResult]:
    """Fetch a card by URL for ``/validate``: the same policy as a crawl, nothing stored."""
    normalised = submitted_url_check(url)
    try:
        result = fetch_card(normalised, discover=is_origin(normalised))
    except FetchError as err:
        raise ProblemError(
            status=422,
            slug="fetch-failed",
            title="The card could not be fetched",
            detail=err.reason,
            extra={"code": err.code},
        ) from None
    return card_check(raw=result.body, lenient_content_type=result.lenient_content_type), result
