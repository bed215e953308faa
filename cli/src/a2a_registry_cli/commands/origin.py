"""``a2a-registry verify-origin ORIGIN``: claim an origin, say what to publish, wait for proof."""

from __future__ import annotations

import json
import time
from typing import Any

import click

from a2a_registry_cli import exits
from a2a_registry_cli.client import ApiError
from a2a_registry_cli.session import Failure, Session, command, json_option


def instructions(method: str, challenges: dict[str, Any]) -> list[str]:
    """Human lines saying exactly what to publish for ``method``."""
    challenge = challenges.get(method)
    if not isinstance(challenge, dict):
        raise Failure(
            f"The registry offers no {method} challenge for this origin.",
            hint="An IP-address host has no DNS proof: use --method http.",
        )
    if method == "http":
        return [
            "Serve this exact body (text/plain) at this URL:",
            f"  URL:  {challenge.get('url')}",
            f"  Body: {challenge.get('body')}",
        ]
    if method == "dns":
        return [
            "Publish this DNS record:",
            f"  Name:  {challenge.get('name')}",
            f"  Type:  {challenge.get('type', 'TXT')}",
            f"  Value: {challenge.get('value')}",
        ]
    payload = json.dumps(challenge.get("payload"), separators=(",", ":"))
    return [
        f"Sign this payload as a compact JWS with a key published at {challenge.get('jwks_url')}",
        f"  Payload: {payload}",
        "and pass the JWS with --jws.",
    ]


@click.command("verify-origin")
@click.argument("origin")
@click.option(
    "--method",
    type=click.Choice(["http", "dns", "jwks"]),
    default="http",
    show_default=True,
    help="How to prove it: a file at a well-known URL, a DNS TXT record, or a JWKS key.",
)
@click.option("--jws", help="jwks only: the compact JWS you made over the challenge payload.")
@click.option(
    "--timeout",
    type=click.FloatRange(min=0),
    default=600,
    show_default=True,
    help="Seconds to keep checking before giving up.",
)
@click.option(
    "--interval",
    type=click.FloatRange(min=1),
    default=15,
    show_default=True,
    help="Seconds between checks (the registry limits attempts per hour).",
)
@json_option
@command
def verify_origin(
    session: Session, origin: str, method: str, jws: str | None, timeout: float, interval: float
) -> int:
    """Prove that you run ORIGIN (https://host[:port]).

    Claims the origin for your account, prints what to publish (the URL and body of the http
    challenge, or the DNS TXT record), then asks the registry to check it until it is verified
    or --timeout passes. Agents on a verified origin become yours, and their live checks and
    message probes are allowed. Exits 0 when verified, 1 when not, 3 on errors.

    \b
    Example:
      a2a-registry verify-origin https://agents.example.com --method dns
    """
    if method == "jwks" and not jws:
        raise Failure("--method jwks needs --jws.", hint="Sign the payload printed by the claim.")
    registry = session.authenticated()
    claim = registry.claim_origin(origin)
    origin_id, name = int(claim["id"]), str(claim.get("origin", origin))
    challenges = claim.get("challenges") or {}
    document: dict[str, Any] = {"origin": name, "id": origin_id, "method": method}
    document["challenge"] = challenges.get(method)
    if claim.get("state") == "verified":
        session.say(f"{name} is already verified for this account ({claim.get('method')}).")
        session.emit({**document, "ok": True, "verified": True, "exit_code": exits.OK})
        return exits.OK
    session.say(f"Origin {name} (claim {origin_id}).")
    for line in instructions(method, challenges):
        session.say(line)
    deadline = time.monotonic() + timeout
    attempts, result = 0, {}
    while True:
        attempts += 1
        try:
            result = registry.verify_origin(origin_id, method, jws)
        except ApiError as exc:
            if exc.status != 429:
                raise
            wait = exc.retry_after or interval
            session.progress(f"  rate-limited by the registry; waiting {wait:.0f} s")
        else:
            if result.get("verified"):
                break
            wait = interval
            session.progress(f"  not yet ({result.get('state')}): {result.get('error', '')}")
        if time.monotonic() + wait > deadline:
            break
        time.sleep(wait)
    verified = bool(result.get("verified"))
    if verified:
        session.say(f"{name} is verified ({method}).")
    else:
        session.say(f"{name} is not verified after {attempts} attempt(s): {result.get('error')}")
    code = exits.OK if verified else exits.CARD_ERRORS
    session.emit(
        {
            **document,
            "ok": verified,
            "verified": verified,
            "state": result.get("state"),
            "error": result.get("error"),
            "attempts": attempts,
            "exit_code": code,
        }
    )
    return code
