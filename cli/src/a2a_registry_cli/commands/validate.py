"""``a2a-registry validate FILE|URL``: the registry's rules on a card, nothing stored."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from a2a_registry_cli import exits, report
from a2a_registry_cli.session import Failure, Session, command, json_option


def request_body(target: str) -> tuple[Any, str]:
    """The body for /validate: ``{"url"}`` for an http(s) URL, else the file's JSON ("-" is
    stdin)."""
    if target.startswith(("http://", "https://")):
        return {"url": target}, target
    try:
        text = sys.stdin.read() if target == "-" else Path(target).read_text(encoding="utf-8")
    except OSError as exc:
        raise Failure(f"Cannot read {target}: {exc.strerror or exc}") from None
    try:
        card = json.loads(text)
    except ValueError as exc:
        raise Failure(
            f"{target} is not JSON: {exc}", hint="Give the agent card file (JSON) or its URL."
        ) from None
    return {"card": card} if isinstance(card, dict) else card, target


@click.command("validate")
@click.argument("target", metavar="FILE|URL")
@json_option
@command
def validate(session: Session, target: str) -> int:
    """Check an agent card with the registry's rules (the same finding codes as a crawl).

    FILE is a card on disk (or - for stdin); URL is fetched by the registry under its fetch
    policy. Nothing is stored and no token is needed. Exits 1 when any finding is at level
    error, 0 otherwise.

    \b
    Example:
      a2a-registry validate .well-known/agent-card.json
      a2a-registry validate https://agents.example.com/.well-known/agent-card.json
    """
    body, label = request_body(target)
    answer = session.client().validate(body)
    validation = answer.get("validation") or {}
    failed = report.has_errors(validation)
    session.say(f"{label}: {'INVALID' if failed else 'valid'} ({answer.get('shape') or '?'})")
    report.print_findings(session, validation)
    code = exits.CARD_ERRORS if failed else exits.OK
    session.emit(
        {
            "ok": not failed,
            "exit_code": code,
            "source": answer.get("source"),
            "shape": answer.get("shape"),
            "validation": validation,
        }
    )
    return code
