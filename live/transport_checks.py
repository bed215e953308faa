"""Checks that cannot start work: each declared interface is asked about a task that cannot
exist, a method that does not exist, a body that is not JSON and a version nobody speaks; the
card URL's cache headers are read; two bindings must map errors alike.

Ids are the A2A TCK's requirement ids (a2aproject/a2a-tck, ``tck/requirements/``) where one
exists; ``REG-`` ids are the registry's own (JSON-RPC 2.0 rules the TCK has no id for).
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass

from live import wire
from live.exchange import Exchange, send
from live.interfaces import HTTP_JSON, JSONRPC, Interface
from live.limits import TOO_SLOW, held_back, held_back_why, limit_of, limit_row
from live.report import (
    ANSWERS,
    FAIL,
    MUST,
    NOT_A2A,
    NOT_CHECKED,
    PASS,
    SHOULD,
    SKIP,
    UNREACHABLE,
    WARN,
    Check,
)
from live.selection import unchecked_reason

TITLES = {
    "CORE-GET-002": "GetTask returns TaskNotFoundError for an unknown task id",
    "CORE-CANCEL-003": "CancelTask returns TaskNotFoundError for an unknown task id",
    "REG-JSONRPC-METHOD": "An unknown JSON-RPC method returns -32601",
    "REG-JSONRPC-PARSE": "A body that is not JSON returns -32700",
    "VER-SERVER-002": "An unsupported A2A-Version returns VersionNotSupportedError",
    "JSONRPC-ERR-001": "Errors use the JSON-RPC 2.0 error object",
    "HTTP_JSON-ERR-001": "HTTP+JSON errors use the AIP-193 shape",
    "JSONRPC-ERR-003": "A2A errors carry a google.rpc.ErrorInfo in error.data",
    "HTTP_JSON-ERR-002": "A2A errors carry a google.rpc.ErrorInfo in error.details",
    "BIND-EQUIV-003": "All bindings map errors consistently",
    "REG-INTERFACE": "The interface can be checked",
}
UNSUPPORTED_VERSION = "99.0"


@dataclass
class Clock:
    """The run's deadline: a hostile endpoint costs at most this much of a worker."""

    deadline: float
    seconds: float

    def spent(self) -> bool:
        return time.monotonic() >= self.deadline


def check(
    check_id: str,
    outcome: str,
    detail: str,
    interface: Interface | None,
    exchange: Exchange | None = None,
    level: str = MUST,
) -> Check:
    return Check(
        id=check_id,
        title=TITLES.get(check_id, check_id),
        level=level,
        outcome=outcome,
        detail=detail,
        interface=interface.url if interface else None,
        exchange=exchange,
    )


def _not_sent(check_id: str, interface: Interface, reason: str, level: str = MUST) -> Check:
    """A check that was not sent: ``skip`` with the reason, never the agent's failure."""
    return check(check_id, SKIP, f"not sent: {reason}", interface, level=level)


def _limited(check_id: str, interface: Interface, exchange: Exchange) -> Check | None:
    """The row for a check whose answer met a limit of the registry's own, or None."""
    return limit_row((check_id, TITLES.get(check_id, check_id), MUST), interface, exchange)


def _first_failed(
    check_id: str, interface: Interface, exchange: Exchange, others: list[str]
) -> tuple[list[Check], str]:
    """The interface's first request got no answer: its row, the others not sent, and what
    the endpoint did (unreachable; not-checked when the registry's own limit was the cause)."""
    limited = _limited(check_id, interface, exchange)
    if limited is not None:
        if held_back(exchange):
            reason = held_back_why(exchange)
        else:
            words = "too slow" if limit_of(exchange) == TOO_SLOW else "too large"
            reason = f"the first answer was {words} for the registry"
        return [limited, *(_not_sent(i, interface, reason) for i in others)], NOT_CHECKED
    reason = ("refused: " if exchange.refused else "no answer: ") + str(exchange.error)
    checks = [check(check_id, FAIL, reason, interface, exchange)]
    checks += [_not_sent(i, interface, "the first request got no answer") for i in others]
    return checks, UNREACHABLE


def _expect_code(
    check_id: str, interface: Interface, exchange: Exchange, expected: int, name: str
) -> Check:
    limited = _limited(check_id, interface, exchange)
    if limited is not None:
        return limited
    problem = exchange.problem()
    if problem:
        return check(check_id, FAIL, problem, interface, exchange)
    error = wire.rpc_error(exchange.json())
    if error is None:
        return check(
            check_id,
            FAIL,
            f"answered without an error (HTTP {exchange.status}); expected {name} {expected}",
            interface,
            exchange,
        )
    code = error.get("code")
    if code == expected:
        return check(check_id, PASS, f"{name} ({expected})", interface, exchange)
    message = str(error.get("message", ""))[:120]
    return check(
        check_id,
        FAIL,
        f"answered error {code!r} ({message!r}); expected {name} {expected}",
        interface,
        exchange,
    )


def _jsonrpc(interface: Interface, clock: Clock) -> tuple[list[Check], str]:
    headers = wire.version_headers(interface)
    # Why the rest is not sent once the registry's per-destination limit held a request back.
    held: list[str] = []

    def post(body: bytes, name: str, extra: dict[str, str] | None = None) -> Exchange:
        exchange = send(interface.url, body=body, headers=extra or headers, check=name)
        if held_back(exchange):
            held.append(held_back_why(exchange))
        return exchange

    def call(operation: str, params_id: str) -> tuple[Exchange, str | None]:
        request_id = f"live-{uuid.uuid4().hex[:12]}"
        body = wire.rpc(wire.method(interface, operation), {"id": params_id}, request_id)
        return post(body, operation), request_id

    first, first_id = call("get", wire.unknown_task_id())
    if not first.answered:
        others = ["CORE-CANCEL-003", "REG-JSONRPC-METHOD", "REG-JSONRPC-PARSE", "JSONRPC-ERR-001"]
        if not interface.legacy:
            others += ["VER-SERVER-002", "JSONRPC-ERR-003"]
        return _first_failed("CORE-GET-002", interface, first, others)
    checks = [
        _expect_code("CORE-GET-002", interface, first, wire.TASK_NOT_FOUND, "TaskNotFoundError")
    ]
    if first.json() is None:
        others = ["CORE-CANCEL-003", "REG-JSONRPC-METHOD", "REG-JSONRPC-PARSE", "JSONRPC-ERR-001"]
        checks += [_not_sent(i, interface, "the endpoint does not answer JSON") for i in others]
        return checks, NOT_A2A
    errors: list[tuple[Exchange, str | None]] = [(first, first_id)]
    # The answers that should be A2A errors (TaskNotFoundError, VersionNotSupportedError).
    a2a_errors = [(first, wire.TASK_NOT_FOUND)]

    def later(check_id: str) -> bool:
        if held:
            checks.append(_not_sent(check_id, interface, held[0]))
            return False
        if clock.spent():
            checks.append(
                check(
                    check_id, SKIP, f"not sent: the run's {clock.seconds:g} s are spent", interface
                )
            )
            return False
        return True

    if later("CORE-CANCEL-003"):
        exchange, request_id = call("cancel", wire.unknown_task_id())
        checks.append(
            _expect_code(
                "CORE-CANCEL-003", interface, exchange, wire.TASK_NOT_FOUND, "TaskNotFoundError"
            )
        )
        errors.append((exchange, request_id))
        a2a_errors.append((exchange, wire.TASK_NOT_FOUND))
    if later("REG-JSONRPC-METHOD"):
        request_id = f"live-{uuid.uuid4().hex[:12]}"
        body = wire.rpc(f"registry/noSuchMethod{uuid.uuid4().hex[:6]}", {}, request_id)
        exchange = post(body, "unknown-method")
        checks.append(
            _expect_code(
                "REG-JSONRPC-METHOD", interface, exchange, wire.METHOD_NOT_FOUND, "Method not found"
            )
        )
        errors.append((exchange, request_id))
    if later("REG-JSONRPC-PARSE"):
        body = b'{"jsonrpc": "2.0", "id": 1, "method": '
        exchange = post(body, "parse-error")
        checks.append(
            _expect_code("REG-JSONRPC-PARSE", interface, exchange, wire.PARSE_ERROR, "Parse error")
        )
        errors.append((exchange, None))
    if not interface.legacy and later("VER-SERVER-002"):
        request_id = f"live-{uuid.uuid4().hex[:12]}"
        body = wire.rpc(wire.method(interface, "get"), {"id": wire.unknown_task_id()}, request_id)
        exchange = post(body, "unsupported-version", {"A2A-Version": UNSUPPORTED_VERSION})
        checks.append(
            _expect_code(
                "VER-SERVER-002",
                interface,
                exchange,
                wire.VERSION_NOT_SUPPORTED,
                "VersionNotSupportedError",
            )
        )
        a2a_errors.append((exchange, wire.VERSION_NOT_SUPPORTED))
    checks.append(_error_shapes(interface, errors))
    if not interface.legacy:
        checks.append(_error_info("JSONRPC-ERR-003", interface, a2a_errors))
    return checks, ANSWERS


def _error_shapes(interface: Interface, errors: list[tuple[Exchange, str | None]]) -> Check:
    """JSONRPC-ERR-001 over every error answer the other checks received."""
    seen = 0
    for exchange, request_id in errors:
        document = exchange.json()
        if wire.rpc_error(document) is None:
            continue
        seen += 1
        problems = wire.rpc_shape_problems(document, request_id, v1=not interface.legacy)
        if problems:
            return check("JSONRPC-ERR-001", FAIL, "; ".join(problems), interface, exchange)
    if not seen:
        return check("JSONRPC-ERR-001", FAIL, "no answer was a JSON-RPC error object", interface)
    return check("JSONRPC-ERR-001", PASS, f"{seen} error answer(s) well formed", interface)


def _error_info(check_id: str, interface: Interface, answers: list[tuple[Exchange, int]]) -> Check:
    """JSONRPC-ERR-003 (spec 9.5: SHOULD since v1.0.1, MUST in v1.0.0) or HTTP_JSON-ERR-002
    (spec 11.6: MUST) over the answers that are A2A errors: each carries a google.rpc.ErrorInfo
    naming it, in the domain ``a2a-protocol.org``."""
    rest = check_id == "HTTP_JSON-ERR-002"
    level = MUST if rest else SHOULD
    judged = 0
    for exchange, expected in answers:
        details = wire.a2a_error_details(exchange, expected, rest=rest)
        if details is None:
            continue
        judged += 1
        problems = wire.error_info_problems(details, wire.REASONS[expected])
        if problems:
            outcome = WARN if level == SHOULD else FAIL
            detail = "; ".join(problems)
            return check(check_id, outcome, detail, interface, exchange, level=level)
    if not judged:
        detail = "no answer was an A2A error to judge"
        return check(check_id, SKIP, detail, interface, level=level)
    detail = f"{judged} A2A error answer(s) carry their ErrorInfo"
    return check(check_id, PASS, detail, interface, level=level)


def _rest_status(
    check_id: str, interface: Interface, exchange: Exchange, expected: int, name: str
) -> Check:
    limited = _limited(check_id, interface, exchange)
    if limited is not None:
        return limited
    if not exchange.answered:
        return check(check_id, FAIL, f"no answer: {exchange.error}", interface, exchange)
    if exchange.status == expected:
        return check(check_id, PASS, f"HTTP {expected} ({name})", interface, exchange)
    return check(
        check_id,
        FAIL,
        f"answered HTTP {exchange.status}; expected {expected} ({name})",
        interface,
        exchange,
    )


def _aip193_problems(document: object) -> list[str]:
    error = document.get("error") if isinstance(document, dict) else None
    if not isinstance(error, dict):
        return ['no "error" object']
    problems = []
    if not isinstance(error.get("code"), int):
        problems.append('"error.code" is not an integer')
    if not isinstance(error.get("status"), str):
        problems.append('"error.status" is not a string')
    if not isinstance(error.get("message"), str):
        problems.append('"error.message" is not a string')
    return problems


def _http_json(interface: Interface, clock: Clock) -> tuple[list[Check], str]:
    headers = wire.version_headers(interface)
    get = send(
        wire.rest_url(interface, f"tasks/{wire.unknown_task_id()}"),
        method="GET",
        headers=headers,
        check="get",
    )
    if not get.answered:
        others = ["CORE-CANCEL-003"]
        if not interface.legacy:
            others += ["HTTP_JSON-ERR-001", "VER-SERVER-002", "HTTP_JSON-ERR-002"]
        return _first_failed("CORE-GET-002", interface, get, others)
    checks = [_rest_status("CORE-GET-002", interface, get, 404, "TaskNotFoundError")]
    endpoint = ANSWERS if get.json() is not None else NOT_A2A
    if clock.spent():
        checks.append(
            check("CORE-CANCEL-003", SKIP, "not sent: the run's time is spent", interface)
        )
        return checks, endpoint
    cancel = send(
        wire.rest_url(interface, f"tasks/{wire.unknown_task_id()}:cancel"),
        body=b"{}",
        headers=headers,
        check="cancel",
    )
    checks.append(_rest_status("CORE-CANCEL-003", interface, cancel, 404, "TaskNotFoundError"))
    if interface.legacy:
        return checks, endpoint
    answers = [(get, wire.TASK_NOT_FOUND), (cancel, wire.TASK_NOT_FOUND)]
    if get.status == 404:
        problems = _aip193_problems(get.json())
        outcome, detail = (FAIL, "; ".join(problems)) if problems else (PASS, "AIP-193 error")
        checks.append(check("HTTP_JSON-ERR-001", outcome, detail, interface, get))
    if held_back(cancel):
        checks.append(_not_sent("VER-SERVER-002", interface, held_back_why(cancel)))
    elif not clock.spent():
        version = send(
            wire.rest_url(interface, f"tasks/{wire.unknown_task_id()}"),
            method="GET",
            headers={"A2A-Version": UNSUPPORTED_VERSION},
            check="unsupported-version",
        )
        checks.append(
            _rest_status("VER-SERVER-002", interface, version, 400, "VersionNotSupportedError")
        )
        answers.append((version, wire.VERSION_NOT_SUPPORTED))
    checks.append(_error_info("HTTP_JSON-ERR-002", interface, answers))
    return checks, endpoint


def interface_checks(interface: Interface, clock: Clock) -> tuple[list[Check], str]:
    """The checks of one interface and what its endpoint did (answers, not-a2a, unreachable,
    not-checked)."""
    if interface.binding == JSONRPC:
        return _jsonrpc(interface, clock)
    if interface.binding == HTTP_JSON:
        return _http_json(interface, clock)
    reason = unchecked_reason(interface) or f"unknown protocol binding {interface.binding!r}"
    return [check("REG-INTERFACE", SKIP, reason, interface)], NOT_CHECKED


def binding_equivalence(checks: list[Check], interfaces: list[Interface]) -> Check | None:
    """BIND-EQUIV-003: with two bindings checked, an unknown task is "not found" on both."""
    bindings = {}
    for i in interfaces:
        if i.binding in (JSONRPC, HTTP_JSON):
            bindings[i.url] = bindings[i.versioned()] = i.binding
    # Only what was judged: a check not sent (skip) says nothing of its binding.
    got = [
        c
        for c in checks
        if c.id == "CORE-GET-002" and c.interface in bindings and c.outcome != SKIP
    ]
    if len({bindings[c.interface] for c in got if c.interface}) < 2:
        return None
    outcomes = {f"{bindings[c.interface]}: {c.outcome}" for c in got if c.interface}
    same = len({c.outcome for c in got}) == 1
    detail = ", ".join(sorted(outcomes))
    if same and got[0].outcome == PASS:
        return check("BIND-EQUIV-003", PASS, f"not found on every binding ({detail})", None)
    return check("BIND-EQUIV-003", FAIL if not same else WARN, detail, None)
