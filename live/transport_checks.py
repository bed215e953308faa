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
from live.interfaces import GRPC, HTTP_JSON, JSONRPC, Interface
from live.report import ANSWERS, FAIL, MUST, NOT_A2A, PASS, SHOULD, SKIP, UNREACHABLE, WARN, Check

TITLES = {
    "CORE-GET-002": "GetTask returns TaskNotFoundError for an unknown task id",
    "CORE-CANCEL-003": "CancelTask returns TaskNotFoundError for an unknown task id",
    "REG-JSONRPC-METHOD": "An unknown JSON-RPC method returns -32601",
    "REG-JSONRPC-PARSE": "A body that is not JSON returns -32700",
    "VER-SERVER-002": "An unsupported A2A-Version returns VersionNotSupportedError",
    "JSONRPC-ERR-001": "Errors use the JSON-RPC 2.0 error object",
    "HTTP_JSON-ERR-001": "HTTP+JSON errors use the AIP-193 shape",
    "CARD-CACHE-001": "The card is served with Cache-Control",
    "CARD-CACHE-002": "The card is served with an ETag",
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
    return check(check_id, FAIL, f"not sent: {reason}", interface, level=level)


def _expect_code(
    check_id: str, interface: Interface, exchange: Exchange, expected: int, name: str
) -> Check:
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

    def call(operation: str, params_id: str) -> tuple[Exchange, str | None]:
        request_id = f"live-{uuid.uuid4().hex[:12]}"
        body = wire.rpc(wire.method(interface, operation), {"id": params_id}, request_id)
        return send(interface.url, body=body, headers=headers, check=operation), request_id

    first, first_id = call("get", wire.unknown_task_id())
    if not first.answered:
        reason = ("refused: " if first.refused else "no answer: ") + str(first.error)
        checks = [check("CORE-GET-002", FAIL, reason, interface, first)]
        others = ["CORE-CANCEL-003", "REG-JSONRPC-METHOD", "REG-JSONRPC-PARSE", "JSONRPC-ERR-001"]
        if not interface.legacy:
            others.append("VER-SERVER-002")
        checks += [_not_sent(i, interface, "the first request got no answer") for i in others]
        return checks, UNREACHABLE
    checks = [
        _expect_code("CORE-GET-002", interface, first, wire.TASK_NOT_FOUND, "TaskNotFoundError")
    ]
    if first.json() is None:
        others = ["CORE-CANCEL-003", "REG-JSONRPC-METHOD", "REG-JSONRPC-PARSE", "JSONRPC-ERR-001"]
        checks += [_not_sent(i, interface, "the endpoint does not answer JSON") for i in others]
        return checks, NOT_A2A
    errors: list[tuple[Exchange, str | None]] = [(first, first_id)]

    def later(check_id: str) -> bool:
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
    if later("REG-JSONRPC-METHOD"):
        request_id = f"live-{uuid.uuid4().hex[:12]}"
        body = wire.rpc(f"registry/noSuchMethod{uuid.uuid4().hex[:6]}", {}, request_id)
        exchange = send(interface.url, body=body, headers=headers, check="unknown-method")
        checks.append(
            _expect_code(
                "REG-JSONRPC-METHOD", interface, exchange, wire.METHOD_NOT_FOUND, "Method not found"
            )
        )
        errors.append((exchange, request_id))
    if later("REG-JSONRPC-PARSE"):
        body = b'{"jsonrpc": "2.0", "id": 1, "method": '
        exchange = send(interface.url, body=body, headers=headers, check="parse-error")
        checks.append(
            _expect_code("REG-JSONRPC-PARSE", interface, exchange, wire.PARSE_ERROR, "Parse error")
        )
        errors.append((exchange, None))
    if not interface.legacy and later("VER-SERVER-002"):
        request_id = f"live-{uuid.uuid4().hex[:12]}"
        body = wire.rpc(wire.method(interface, "get"), {"id": wire.unknown_task_id()}, request_id)
        exchange = send(
            interface.url,
            body=body,
            headers={"A2A-Version": UNSUPPORTED_VERSION},
            check="unsupported-version",
        )
        checks.append(
            _expect_code(
                "VER-SERVER-002",
                interface,
                exchange,
                wire.VERSION_NOT_SUPPORTED,
                "VersionNotSupportedError",
            )
        )
    checks.append(_error_shapes(interface, errors))
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


def _rest_status(
    check_id: str, interface: Interface, exchange: Exchange, expected: int, name: str
) -> Check:
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
        reason = ("refused: " if get.refused else "no answer: ") + str(get.error)
        checks = [check("CORE-GET-002", FAIL, reason, interface, get)]
        checks.append(_not_sent("CORE-CANCEL-003", interface, "the first request got no answer"))
        return checks, UNREACHABLE
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
    if get.status == 404:
        problems = _aip193_problems(get.json())
        outcome, detail = (FAIL, "; ".join(problems)) if problems else (PASS, "AIP-193 error")
        checks.append(check("HTTP_JSON-ERR-001", outcome, detail, interface, get))
    if not clock.spent():
        version = send(
            wire.rest_url(interface, f"tasks/{wire.unknown_task_id()}"),
            method="GET",
            headers={"A2A-Version": UNSUPPORTED_VERSION},
            check="unsupported-version",
        )
        checks.append(
            _rest_status("VER-SERVER-002", interface, version, 400, "VersionNotSupportedError")
        )
    return checks, endpoint


def interface_checks(interface: Interface, clock: Clock) -> tuple[list[Check], str]:
    """The checks of one interface and what its endpoint did (answers, not-a2a, unreachable,
    not-checked)."""
    if interface.binding == JSONRPC:
        return _jsonrpc(interface, clock)
    if interface.binding == HTTP_JSON:
        return _http_json(interface, clock)
    reason = (
        "gRPC is not checked: the registry has no HTTP/2 gRPC client over its safe transport"
        if interface.binding == GRPC
        else f"unknown protocol binding {interface.binding!r}"
    )
    return [check("REG-INTERFACE", SKIP, reason, interface)], "not-checked"


def card_cache_checks(card_url: str) -> list[Check]:
    """CARD-CACHE-001/002 (SHOULD) from one GET of the card URL, as a client would read it."""
    exchange = send(card_url, method="GET", check="card")
    if not exchange.answered or not 200 <= (exchange.status or 0) < 300:
        reason = exchange.error or f"HTTP {exchange.status}"
        return [
            check(i, SKIP, f"the card URL did not answer: {reason}", None, exchange, SHOULD)
            for i in ("CARD-CACHE-001", "CARD-CACHE-002")
        ]
    out = []
    for check_id, header in (("CARD-CACHE-001", "cache-control"), ("CARD-CACHE-002", "etag")):
        value = exchange.headers.get(header)
        outcome, detail = (PASS, f"{header}: {value}") if value else (WARN, f"no {header} header")
        out.append(check(check_id, outcome, detail, None, exchange, SHOULD))
    return out


def binding_equivalence(checks: list[Check], interfaces: list[Interface]) -> Check | None:
    """BIND-EQUIV-003: with two bindings checked, an unknown task is "not found" on both."""
    bindings = {i.url: i.binding for i in interfaces if i.binding in (JSONRPC, HTTP_JSON)}
    got = [c for c in checks if c.id == "CORE-GET-002" and c.interface in bindings]
    if len({bindings[c.interface] for c in got if c.interface}) < 2:
        return None
    outcomes = {f"{bindings[c.interface]}: {c.outcome}" for c in got if c.interface}
    same = len({c.outcome for c in got}) == 1
    detail = ", ".join(sorted(outcomes))
    if same and got[0].outcome == PASS:
        return check("BIND-EQUIV-003", PASS, f"not found on every binding ({detail})", None)
    return check("BIND-EQUIV-003", FAIL if not same else WARN, detail, None)
