"""Checks that send real messages: only for agents whose owner (or staff) opted in.

For each skill with an ``application/json;schema=X`` input mode: one valid payload must start a
task (SCHEMAS-TASK, seed 000: MUST), one payload missing a required member should be refused
(SCHEMAS-INVALID, SHOULD: a miss is a warning), each artifact data part naming a declared schema
must validate against it (SCHEMAS-OUTPUT), and where the card declares seed 002's extension the
progress metadata must follow its schema (PROGRESS-META). One plain-text skill gets one text
message (CORE-SEND-001): a skill whose input modes (its own, else the card's defaults) include
the bare ``text`` of the v0.3 samples, ``text/plain`` or any ``text/...``. When no message is sent
at all, a ``REG-MESSAGES`` row says why. An answer too slow or too large for the registry is its
``REG-`` row (live/limits.py), not the check's failure. Every message carries the metadata key and
header of docs/live-checks.md, and no more than the day's allowance is sent.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings

from cards.models import Skill
from live import instances, progress, store, wire
from live.exchange import Exchange, send
from live.interfaces import HTTP_JSON, JSONRPC, Interface
from live.limits import limit_row
from live.report import FAIL, MUST, PASS, REGISTRY, SHOULD, SKIP, WARN, Check
from registry.mediatypes import MediaTypeError, parse_media_type, schema_modes
from schemas_app.payloads import DeclaredSchemas, check_payload

TITLES = {
    "SCHEMAS-TASK": "A valid structured input starts a task",
    "SCHEMAS-INVALID": "Invalid structured input is refused",
    "SCHEMAS-OUTPUT": "Schema'd output follows its declared schema",
    "PROGRESS-META": "Progress metadata follows the extension's schema",
    "CORE-SEND-001": "SendMessage returns a Task or a Message",
    "REG-MESSAGES": "Messages can be sent",
}


@dataclass
class Allowance:
    """The messages a run may send to one agent: each is counted on the agent's row before it is
    sent (:func:`live.store.take_message`), against the day's limit shared with "Try it"."""

    agent_id: Any
    sent: int = 0

    def take(self) -> bool:
        if not store.take_message(self.agent_id):
            return False
        self.sent += 1
        return True


@dataclass
class Answer:
    exchange: Exchange
    kind: str = "none"  # task, message, error, other, none
    obj: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    tasks: list[dict[str, Any]] = field(default_factory=list)


def _check(
    check_id: str,
    outcome: str,
    detail: str,
    interface: Interface,
    skill: str | None,
    exchange: Exchange | None = None,
    level: str = MUST,
) -> Check:
    return Check(
        id=check_id,
        title=TITLES[check_id],
        level=level,
        outcome=outcome,
        detail=detail,
        interface=interface.url,
        exchange=exchange,
        skill=skill,
    )


def not_sent(detail: str, interface: Interface | None = None) -> Check:
    """The row that says why no message was sent."""
    return Check(
        id="REG-MESSAGES",
        title=TITLES["REG-MESSAGES"],
        level=REGISTRY,
        outcome=SKIP,
        detail=f"no message sent: {detail}",
        interface=interface.url if interface else None,
    )


def _limited(
    check_id: str, answer: Answer, interface: Interface, skill: str | None, level: str = MUST
) -> Check | None:
    return limit_row((check_id, TITLES[check_id], level), interface, answer.exchange, skill)


def accepts_text(modes: list[Any] | None) -> bool:
    """A skill takes a text message: no modes at all, the bare ``text`` (a2a-python, a2a-js
    and v0.3 samples), or a ``text/...`` media type."""
    found = [str(m).strip().lower() for m in modes or []]
    return not found or any(m == "text" or m.startswith("text/") for m in found)


def sender(interfaces: list[Interface]) -> Interface | None:
    """The interface messages go to: JSON-RPC first, then HTTP+JSON."""
    for binding in (JSONRPC, HTTP_JSON):
        for interface in interfaces:
            if interface.binding == binding:
                return interface
    return None


def _send_message(interface: Interface, message: dict[str, Any], check_id: str) -> Answer:
    params = wire.send_params(interface, message)
    headers = wire.version_headers(interface)
    if interface.binding == JSONRPC:
        request_id = f"live-{uuid.uuid4().hex[:12]}"
        body = wire.rpc(wire.method(interface, "send"), params, request_id)
        exchange = send(interface.url, body=body, headers=headers, check=check_id)
        document = exchange.json()
        answer = Answer(exchange)
        if exchange.problem():
            return answer
        if wire.rpc_error(document) is not None:
            answer.kind, answer.error = "error", wire.rpc_error(document)
            return answer
        result = document.get("result") if isinstance(document, dict) else None
    else:
        body = json.dumps(params).encode()
        url = wire.rest_url(interface, "message:send")
        exchange = send(url, body=body, headers=headers, check=check_id)
        answer = Answer(exchange)
        if exchange.problem():
            return answer
        if not 200 <= (exchange.status or 0) < 300:
            answer.kind, answer.error = "error", {"code": exchange.status}
            return answer
        result = exchange.json()
    answer.kind, answer.obj = wire.task_or_message(result, interface)
    return answer


def _structured_input(skill: Skill) -> list[tuple[str, str]]:
    """(media type, schema name) of the skill's ``application/json;schema=X`` input modes."""
    return schema_modes(skill.input_modes)


def _valid_payload(name: str, declared: DeclaredSchemas) -> tuple[Any, str] | str:
    """(payload, where it came from), or why there is none."""
    document = declared.documents.get(name)
    if document is None or not document.usable:
        return f"the schema {name!r} is not declared or cannot be used"
    schema = document.content
    candidates: list[tuple[Any, str]] = []
    examples = schema.get("examples") if isinstance(schema, dict) else None
    for index, example in enumerate(examples if isinstance(examples, list) else []):
        candidates.append((example, f"the schema's examples[{index}]"))
    try:
        candidates.append((instances.build(schema), "an instance built from the schema"))
    except instances.CannotBuild as err:
        reason = f"no example validates and none could be built ({err})"
    else:
        reason = "no example validates and the built instance does not either"
    for payload, where in candidates:
        if check_payload(name, payload, declared).get("valid"):
            return payload, where
    return reason


def _outcome_of_valid(answer: Answer, interface: Interface, skill: str, where: str) -> Check:
    limited = _limited("SCHEMAS-TASK", answer, interface, skill)
    if limited is not None:
        return limited
    exchange = answer.exchange
    problem = exchange.problem()
    if problem:
        return _check("SCHEMAS-TASK", FAIL, problem, interface, skill, exchange)
    if answer.kind == "task":
        state = wire.task_state(answer.obj or {})
        return _check(
            "SCHEMAS-TASK", PASS, f"a Task ({state}) for {where}", interface, skill, exchange
        )
    if answer.kind == "error":
        code = (answer.error or {}).get("code")
        message = str((answer.error or {}).get("message", ""))[:120]
        detail = f"an error ({code}: {message!r}) for {where}, which validates"
        return _check("SCHEMAS-TASK", FAIL, detail, interface, skill, exchange)
    detail = f"a {answer.kind}, not a Task, for {where}"
    return _check("SCHEMAS-TASK", FAIL, detail, interface, skill, exchange)


def _outcome_of_invalid(answer: Answer, interface: Interface, skill: str, missing: str) -> Check:
    limited = _limited("SCHEMAS-INVALID", answer, interface, skill, SHOULD)
    if limited is not None:
        return limited
    exchange = answer.exchange
    problem = exchange.problem()
    if problem:
        return _check("SCHEMAS-INVALID", FAIL, problem, interface, skill, exchange, SHOULD)
    if answer.kind == "error":
        code = (answer.error or {}).get("code")
        detail = f"refused with an error ({code}) without {missing!r}"
        return _check("SCHEMAS-INVALID", PASS, detail, interface, skill, exchange, SHOULD)
    state = wire.task_state(answer.obj or {}) if answer.kind == "task" else None
    if state in wire.REFUSING_STATES:
        detail = f"a task in state {state} without {missing!r}"
        return _check("SCHEMAS-INVALID", PASS, detail, interface, skill, exchange, SHOULD)
    detail = f"accepted without the required {missing!r} ({answer.kind}, state {state})"
    return _check("SCHEMAS-INVALID", WARN, detail, interface, skill, exchange, SHOULD)


def _output_check(
    tasks: list[tuple[str, dict[str, Any], Exchange]],
    declared: DeclaredSchemas,
    interface: Interface,
) -> Check:
    checked, failures = 0, []
    last: Exchange | None = None
    for skill, task, exchange in tasks:
        for media, data in wire.data_parts(task):
            try:
                name = parse_media_type(media).schema if media else None
            except MediaTypeError:
                name = None
            if not name or name not in declared.documents:
                continue
            checked += 1
            last = exchange
            result = check_payload(name, data, declared)
            if result.get("valid") is False:
                errors = "; ".join(e["message"] for e in result.get("errors", [])[:3])
                failures.append(f"{skill}: {name}: {errors}")
    if failures:
        return _check("SCHEMAS-OUTPUT", FAIL, " | ".join(failures), interface, None, last)
    if not checked:
        detail = "no artifact data part named a declared schema"
        return _check("SCHEMAS-OUTPUT", SKIP, detail, interface, None)
    detail = f"{checked} data part(s) valid against their declared schemas"
    return _check("SCHEMAS-OUTPUT", PASS, detail, interface, None, last)


def _progress_check(
    tasks: list[tuple[str, dict[str, Any], Exchange]], interface: Interface
) -> Check:
    found = 0
    for skill, task, exchange in tasks:
        for where, value in progress.found_in(task):
            found += 1
            issues = progress.problems(value)
            if issues:
                detail = f"{skill}: {where}: " + "; ".join(issues)
                return _check("PROGRESS-META", FAIL, detail, interface, None, exchange)
    if not found:
        detail = "the card declares the extension; no answer carried progress metadata"
        return _check("PROGRESS-META", SKIP, detail, interface, None)
    return _check("PROGRESS-META", PASS, f"{found} progress entr(ies) valid", interface, None)


def run(
    *,
    card: dict[str, Any],
    skills: list[Skill],
    declared: DeclaredSchemas,
    interfaces: list[Interface],
    allowance: Allowance,
) -> list[Check]:
    interface = sender(interfaces)
    if interface is None:
        return [not_sent("the card has no JSON-RPC or HTTP+JSON interface to send to")]
    registry = settings.REGISTRY_BASE_URL or settings.REGISTRY_USER_AGENT
    checks: list[Check] = []
    tasks: list[tuple[str, dict[str, Any], Exchange]] = []
    limit = f"not sent: the day's limit of {settings.REGISTRY_LIVE_MESSAGES_PER_DAY} messages"
    text_skill: Skill | None = None
    for skill in skills:
        structured = _structured_input(skill)
        if not structured:
            if text_skill is None and accepts_text(skill.input_modes):
                text_skill = skill
            continue
        media_type, name = structured[0]
        found = _valid_payload(name, declared)
        if isinstance(found, str):
            checks.append(_check("SCHEMAS-TASK", SKIP, found, interface, skill.skill_id))
            continue
        payload, where = found
        if not allowance.take():
            checks.append(_check("SCHEMAS-TASK", SKIP, limit, interface, skill.skill_id))
            continue
        message = wire.data_message(interface, payload, media_type, "SCHEMAS-TASK", registry)
        answer = _send_message(interface, message, "SCHEMAS-TASK")
        checks.append(_outcome_of_valid(answer, interface, skill.skill_id, where))
        if answer.kind == "task" and answer.obj:
            tasks.append((skill.skill_id, answer.obj, answer.exchange))
        document = declared.documents.get(name)
        broken = instances.without_required(document.content if document else None, payload)
        if broken is None:
            detail = "the schema requires no member at its top level: nothing to leave out"
            checks.append(_check("SCHEMAS-INVALID", SKIP, detail, interface, skill.skill_id))
            continue
        if not allowance.take():
            checks.append(
                _check("SCHEMAS-INVALID", SKIP, limit, interface, skill.skill_id, level=SHOULD)
            )
            continue
        bad_payload, missing = broken
        message = wire.data_message(interface, bad_payload, media_type, "SCHEMAS-INVALID", registry)
        answer = _send_message(interface, message, "SCHEMAS-INVALID")
        checks.append(_outcome_of_invalid(answer, interface, skill.skill_id, missing))
    if any(c.id == "SCHEMAS-TASK" and c.outcome != SKIP for c in checks):
        checks.append(_output_check(tasks, declared, interface))
    if text_skill is not None:
        checks.append(_text_check(text_skill, interface, registry, allowance, limit, tasks))
    if progress.declared(card):
        checks.append(_progress_check(tasks, interface))
    if all(c.id == "PROGRESS-META" for c in checks):  # nothing was sent, and no row says why
        detail = (
            "no skill takes text or an application/json;schema=X input declared by the card"
            if skills
            else "the card declares no skill"
        )
        checks.append(not_sent(detail, interface))
    return checks


def _text_check(
    skill: Skill,
    interface: Interface,
    registry: str,
    allowance: Allowance,
    limit: str,
    tasks: list[tuple[str, dict[str, Any], Exchange]],
) -> Check:
    examples = [e for e in skill.examples or [] if isinstance(e, str) and e.strip()]
    text = examples[0] if examples else (skill.name or skill.skill_id)
    if not allowance.take():
        return _check("CORE-SEND-001", SKIP, limit, interface, skill.skill_id)
    message = wire.text_message(interface, text[:500], "CORE-SEND-001", registry)
    answer = _send_message(interface, message, "CORE-SEND-001")
    limited = _limited("CORE-SEND-001", answer, interface, skill.skill_id)
    if limited is not None:
        return limited
    problem = answer.exchange.problem()
    if problem:
        return _check("CORE-SEND-001", FAIL, problem, interface, skill.skill_id, answer.exchange)
    if answer.kind in ("task", "message"):
        if answer.kind == "task" and answer.obj:
            tasks.append((skill.skill_id, answer.obj, answer.exchange))
        detail = f"a {answer.kind.title()} for the text {text[:60]!r}"
        return _check("CORE-SEND-001", PASS, detail, interface, skill.skill_id, answer.exchange)
    code = (answer.error or {}).get("code") if answer.kind == "error" else None
    detail = f"an error ({code})" if answer.kind == "error" else f"neither ({answer.kind})"
    return _check("CORE-SEND-001", FAIL, detail, interface, skill.skill_id, answer.exchange)


def send_message(interface: Interface, message: dict[str, Any], check_id: str) -> Answer:
    """One message through the checks' sender (their fetch policy, limits and headers), for
    the catalogue's "Try it" send (tryit/sending.py)."""
    return _send_message(interface, message, check_id)
