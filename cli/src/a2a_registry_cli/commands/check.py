"""``a2a-registry check ID``: run an agent's live checks now and wait for the verdicts."""

from __future__ import annotations

import click

from a2a_registry_cli import exits, report, waiting
from a2a_registry_cli.session import Failure, Session, command, json_option


@click.command("check")
@click.argument("agent_id", metavar="ID")
@click.option(
    "--timeout",
    type=click.FloatRange(min=0),
    default=300,
    show_default=True,
    help="Seconds to wait for the verdicts.",
)
@json_option
@command
def check(session: Session, agent_id: str, timeout: float) -> int:
    """Probe agent ID's endpoint with the live checks and print the verdicts.

    Needs a token of the agent's owner, who has proven the agent's origins. When the agent
    was checked moments ago, that run's verdicts are shown. Exits 0 when they pass, 2 when
    they fail (or the endpoint could not be judged: not-checked), 3 on errors.

    \b
    Example:
      a2a-registry check 6f1c9a64-0d0e-4a55-9f59-2f0a3b8c1d2e
    """
    registry = session.authenticated()
    before = waiting.section(registry.agent(agent_id), "live").get("checked_at")
    detail, refusal = waiting.probed(session, registry, agent_id, before, timeout)
    live = waiting.section(detail, "live")
    if refusal is not None and (refusal.slug != "probe-too-soon" or not live.get("checked_at")):
        raise Failure(refusal.message, hint=refusal.hint)
    if refusal is not None:
        session.say(f"Not probed now ({refusal.message}); the verdicts of that run:")
    report.print_live(session, live)
    outcome = live.get("outcome")
    code = exits.OK if outcome == "pass" else exits.LIVE_FAILED
    session.emit(
        {
            "ok": code == exits.OK,
            "exit_code": code,
            "id": agent_id,
            "fresh": refusal is None,
            "live": live,
        }
    )
    return code
