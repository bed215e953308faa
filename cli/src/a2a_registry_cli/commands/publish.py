"""``a2a-registry publish URL``: submit (or re-crawl) an agent, wait, print what was found."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import click

from a2a_registry_cli import exits, report, waiting
from a2a_registry_cli.session import Failure, Session, command, json_option


@click.command("publish")
@click.argument("url")
@click.option(
    "--require-live",
    is_flag=True,
    help="Fail (exit 2) unless the live checks ran and passed.",
)
@click.option(
    "--no-live",
    is_flag=True,
    help="Do not ask for the live checks (report any that ran after the crawl).",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0),
    default=300,
    show_default=True,
    help="Seconds to wait for the crawl, and again for the live checks.",
)
@json_option
@command
def publish(session: Session, url: str, require_live: bool, no_live: bool, timeout: float) -> int:
    """Publish the agent whose card is at URL, and gate on the result.

    Submits URL (or, when it is registered already and yours, crawls it again), waits for the
    crawl, prints the card's findings, then asks for the live checks (allowed once you proved
    the origin: `a2a-registry verify-origin`) and prints their verdicts. A refused probe
    (origin not proven, checked moments ago) is reported, not fatal, unless --require-live.

    \b
    Exit codes:
      0  published, the card is valid (and the live checks passed, when they ran)
      1  the card has error-level findings, or its crawl failed
      2  the live checks ran and failed (or --require-live and they did not run)
      3  usage, token, network or registry errors

    \b
    Example:
      a2a-registry publish https://agents.example.com/.well-known/agent-card.json
    """
    parts = urlsplit(url)
    registry = session.authenticated(f"{parts.scheme}://{parts.netloc}" if parts.netloc else None)
    status, submitted = registry.submit(url)
    agent_id = str(submitted["id"])
    if status == 200:
        existing = registry.agent(agent_id)
        if not existing.get("owned"):
            raise Failure(
                f"{url} is registered already (agent {agent_id}) and is not yours.",
                hint="Prove its origin with `a2a-registry verify-origin` and it becomes yours.",
            )
        crawled_before = waiting.section(existing, "crawl").get("last_crawled_at")
        live_before = waiting.section(existing, "live").get("checked_at")
        session.say(f"Agent {agent_id} is registered already: crawling it again.")
        registry.recrawl(agent_id)
    else:
        crawled_before = live_before = None
        session.say(f"Submitted: agent {agent_id}.")
    detail = waiting.crawled(session, registry, agent_id, crawled_before, timeout)
    crawl = waiting.section(detail, "crawl")
    validation = waiting.section(detail, "validation")
    document: dict[str, Any] = {"id": agent_id, "url": url, "created": status == 202}
    document["detail_url"] = f"{registry.base_url}/api/v1/agents/{agent_id}"
    if crawl.get("status") == "error":
        session.say(f"The crawl failed: {crawl.get('last_error')}")
        document.update(ok=False, crawl=crawl, validation=validation, live=None)
        document["exit_code"] = exits.CARD_ERRORS
        session.emit(document)
        return exits.CARD_ERRORS
    card_bad = report.has_errors(validation)
    session.say(f"Crawled: the card is {'INVALID' if card_bad else 'valid'}.")
    report.print_findings(session, validation)

    note = None
    if not no_live:
        checked = waiting.section(detail, "live").get("checked_at")
        detail, refusal = waiting.probed(session, registry, agent_id, checked, timeout)
        if refusal is not None:
            note = refusal.message + (f" {refusal.hint}" if refusal.hint else "")
            session.say(f"Live checks not run now: {note}")
    live = waiting.section(detail, "live")
    ran = live.get("checked_at") is not None and live.get("checked_at") != live_before
    if ran:
        report.print_live(session, live)
    elif not note:
        session.say("Live checks: not run.")
    live_failed = ran and live.get("outcome") == "fail"
    if card_bad:
        code = exits.CARD_ERRORS
    elif live_failed or (require_live and (not ran or live.get("outcome") != "pass")):
        code = exits.LIVE_FAILED
    else:
        code = exits.OK
    publisher = detail.get("publisher")
    if isinstance(publisher, dict) and publisher.get("verified"):
        session.say(f"Verified publisher: {publisher.get('name')}")
    session.say(f"Agent: {document['detail_url']}")
    document.update(
        ok=code == exits.OK,
        exit_code=code,
        crawl=crawl,
        validation=validation,
        live=live if ran else None,
        live_not_run=note,
        publisher=publisher,
    )
    session.emit(document)
    return code
