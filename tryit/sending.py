"""The "Try it" send: one message from the owner (or staff) of an opted-in agent, through the
live checks' sender, counted against the agent's daily message allowance.

The allowance is the live checks' own (``REGISTRY_LIVE_MESSAGES_PER_DAY``, the ``messages`` of
the agent's live report): a send takes one under a row lock and is refused when none is left,
so the form cannot make the registry send more than the checks may.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.conf import settings

from cards.models import Agent
from live import wire
from live.interfaces import HTTP_JSON, JSONRPC, requires_auth
from live.message_checks import send_message
from live.store import take_message
from registry.errors import ProblemError
from registry.mediatypes import MediaTypeError, parse_media_type
from schemas_app.payloads import DeclaredSchemas, check_payload
from schemas_app.skill_inputs import skill_input
from tryit.blocks import interface_of

CHECK_ID = "TRY-IT"
# What an answer shows of a data part or a text part.
MAX_TEXT = 4000


@dataclass
class Refusal(Exception):
    status: int
    slug: str
    detail: str
    errors: list[dict[str, Any]] | None = None


def _media_schema(media: str | None) -> str | None:
    try:
        return parse_media_type(media).schema if media else None
    except MediaTypeError:
        return None


def _artifacts(task: dict[str, Any], declared: DeclaredSchemas) -> list[dict[str, Any]]:
    out = []
    for artifact in task.get("artifacts") or []:
        if not isinstance(artifact, dict):
            continue
        for part in artifact.get("parts") or []:
            if not isinstance(part, dict):
                continue
            found = part.get("metadata")
            metadata: dict[str, Any] = found if isinstance(found, dict) else {}
            media = part.get("mediaType") or metadata.get("mimeType") or metadata.get("mediaType")
            item: dict[str, Any] = {
                "artifact": str(artifact.get("name") or artifact.get("artifactId") or ""),
                "media_type": media if isinstance(media, str) else None,
            }
            if "data" in part:
                item["data"] = part["data"]
                name = _media_schema(item["media_type"])
                item["schema"] = name
                if name and name in declared.documents:
                    result = check_payload(name, part["data"], declared)
                    item["valid"] = result.get("valid")
                    item["errors"] = result.get("errors", [])[:10]
            elif isinstance(part.get("text"), str):
                item["text"] = part["text"][:MAX_TEXT]
            out.append(item)
    return out


def try_send(*, agent: Agent, skill_id: str, payload: Any) -> dict[str, Any]:
    """Send ``payload`` to the agent's skill as a data part; what came back, judged. The
    skill's schema'd input mode names the part's media type and the schema it is checked
    against; a skill with inputFields instead gets plain ``application/json``, checked against
    the schema its fields compose to (schemas_app.skill_inputs)."""
    snapshot = agent.latest_snapshot  # loaded once: the skill's fields are read from it too
    try:
        found = skill_input(agent, skill_id)
    except ProblemError as problem:
        raise Refusal(problem.status, problem.slug, problem.detail, problem.errors) from None
    media_type = found.media_type
    declared = DeclaredSchemas.of(agent)
    checked = found.check(payload, declared)
    if checked.get("valid") is False:
        raise Refusal(422, "invalid-payload", checked["detail"], checked.get("errors"))
    card = snapshot.card if snapshot is not None and isinstance(snapshot.card, dict) else {}
    if card and requires_auth(card):
        raise Refusal(
            422,
            "requires-auth",
            "The card requires authentication; the registry sends no credentials.",
        )
    interface = interface_of(agent)
    if interface is None or interface.binding not in (JSONRPC, HTTP_JSON):
        raise Refusal(422, "no-interface", "The card declares no JSON-RPC or HTTP+JSON interface.")
    if not take_message(agent.pk):
        raise Refusal(
            429,
            "allowance-spent",
            f"Today's {settings.REGISTRY_LIVE_MESSAGES_PER_DAY} messages to this agent are sent.",
        )
    registry = settings.REGISTRY_BASE_URL or settings.REGISTRY_USER_AGENT
    message = wire.data_message(interface, payload, media_type, CHECK_ID, registry)
    answer = send_message(interface, message, CHECK_ID)
    task = answer.obj if answer.kind == "task" and answer.obj else None
    return {
        "sent": answer.exchange.answered,
        "refused": answer.exchange.refused,
        "problem": answer.exchange.problem(),
        "kind": answer.kind,
        "state": wire.task_state(task) if task else None,
        "error": answer.error,
        "artifacts": _artifacts(task, declared) if task else [],
        "message": answer.obj if answer.kind == "message" else None,
        "exchange": answer.exchange.as_dict(),
    }
