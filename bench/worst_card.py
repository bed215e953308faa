"""The largest agent cards the registry accepts, for measuring what one costs to show.

A card is accepted up to ``REGISTRY_FETCH_MAX_BYTES`` (1 MiB by default, docs/fetch-policy.md);
ingest keeps an agent's description up to 20,000 characters, a skill's too, 100 tags and 100
examples a skill (cards/indexing.py), and a card's findings up to 1,000 (cards/rules). Each
builder here fills the byte cap with one kind of bulk, so each door is measured against the
card that is worst for it:

- ``skills``: as many skills as fit, each with a schema'd input mode (a "Try it" form each);
- ``interfaces``: as many interfaces as fit (the 9,000-interface card of issue 43, and more);
- ``strings``: the longest strings ingest keeps, in characters HTML and JSON escape (``&<>"``),
  many tags and examples per skill, many schemas and extensions.

:func:`live_report` is a stored report of the live checks with many rows (three checks per
interface, as a run before issue 43's cap wrote them), each with its exchange excerpts.

Used by bench/page_cost.py and tests/test_page_cost.py; no Django import at module level.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

TAG = "worst-card"
# Characters that grow when escaped: & < > in HTML, " in both.
ESCAPED = '&<>"' * 5


def _size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode())


def _base(name: str, description: str) -> dict[str, Any]:
    return {
        "name": name,
        "description": description,
        "version": "1.0.0",
        "provider": {"organization": "Worst Card Ltd", "url": "https://worst.example/"},
        "supportedInterfaces": [
            {
                "url": "https://worst.example/a2a/v1",
                "protocolBinding": "JSONRPC",
                "protocolVersion": "1.0",
            }
        ],
        "capabilities": {"streaming": False},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [],
    }


def _fill(card: dict[str, Any], items: list[Any], make: Callable[[int], Any], cap: int) -> None:
    """Append ``make(i)`` to ``items`` (a list inside ``card``) while the card stays under
    ``cap`` bytes in its compact JSON form."""
    size = _size(card)
    index = 0
    while True:
        item = make(index)
        grown = _size(item) + (1 if items else 0)
        if size + grown > cap:
            return
        items.append(item)
        size += grown
        index += 1


PAIR_SCHEMA = {
    "type": "object",
    "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
    "required": ["a", "b"],
}


def skills_card(cap: int) -> dict[str, Any]:
    card = _base("Worst card: skills", "As many skills as a card may hold.")
    card["schemas"] = {"pair": PAIR_SCHEMA}
    card["capabilities"]["extensions"] = [
        {
            "uri": "https://raw.githubusercontent.com/facultyai/a2a-extension-object-schemas/"
            "refs/heads/main/v1"
        }
    ]

    def skill(i: int) -> dict[str, Any]:
        return {
            "id": f"s{i}",
            "name": f"Skill {i}",
            "description": "d",
            "tags": [TAG],
            "examples": ['{"a":"x","b":"y"}'],
            "inputModes": ["application/json;schema=pair"],
        }

    _fill(card, card["skills"], skill, cap)
    return card


def interfaces_card(cap: int) -> dict[str, Any]:
    card = _base("Worst card: interfaces", "As many interfaces as a card may hold.")
    card["skills"] = [{"id": "echo", "name": "Echo", "description": "d", "tags": [TAG]}]
    interfaces = card["supportedInterfaces"]

    def interface(i: int) -> dict[str, str]:
        binding = ("JSONRPC", "HTTP+JSON", "GRPC")[i % 3]
        return {
            "url": f"https://worst.example/a2a/{i}",
            "protocolBinding": binding,
            "protocolVersion": "1.0",
        }

    _fill(card, interfaces, interface, cap)
    return card


def strings_card(cap: int) -> dict[str, Any]:
    long_text = (ESCAPED * 1000)[:20000]
    card = _base(("Worst " + ESCAPED * 30)[:512], long_text)
    card["provider"] = {"organization": ESCAPED * 25, "url": "https://worst.example/" + "p" * 1900}
    schemas: dict[str, Any] = {}
    card["schemas"] = schemas
    for i in range(300):
        schemas[f"schema{i}"] = {
            "type": "object",
            "description": ESCAPED * 5,
            "properties": {f"f{j}": {"type": "string", "description": ESCAPED} for j in range(8)},
        }
    card["capabilities"]["extensions"] = [
        {
            "uri": f"https://worst.example/ext/{i}",
            "description": ESCAPED * 10,
            "required": False,
            "params": {"p": ESCAPED * 10},
        }
        for i in range(100)
    ]

    def skill(i: int) -> dict[str, Any]:
        return {
            "id": f"long{i}-" + "i" * 100,
            "name": (f"Skill {i} " + ESCAPED * 30)[:512],
            "description": long_text[:5000],
            "tags": [TAG, *[f"tag{j}-{ESCAPED}" for j in range(99)]],
            "examples": [ESCAPED * 5 for _ in range(100)],
            "inputModes": [f"application/json;schema=schema{i % 300}"],
            "outputModes": [f"application/json;schema=schema{(i + 1) % 300}"],
        }

    _fill(card, card["skills"], skill, cap)
    return card


BUILDERS: dict[str, Callable[[int], dict[str, Any]]] = {
    "skills": skills_card,
    "interfaces": interfaces_card,
    "strings": strings_card,
}


def card_bytes(kind: str, cap: int) -> bytes:
    body = json.dumps(BUILDERS[kind](cap), ensure_ascii=False, separators=(",", ":")).encode()
    assert len(body) <= cap, (kind, len(body), cap)
    return body


def tag_query_call() -> dict[str, Any]:
    """An A2A ``message/send`` (v0.3 spelling) of seed 000's ``agentQuery`` for the agents
    tagged :data:`TAG`, 100 at most."""
    query = {"filters": {"tag": [TAG]}, "limit": 100}
    part = {
        "kind": "data",
        "data": query,
        "metadata": {"mimeType": "application/json;schema=agentQuery"},
    }
    message = {"kind": "message", "messageId": "1", "role": "user", "parts": [part]}
    return {"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"message": message}}


def live_report(interfaces: list[dict[str, Any]], *, when: str, rows: int) -> dict[str, Any]:
    """A stored live report with ``rows`` check rows over ``interfaces`` (three a interface),
    every one failing with its exchange excerpts (600 characters each way, as live/exchange
    keeps them)."""
    ids = ("CORE-CARD-001", "CORE-SEND-002", "CORE-CANCEL-003")
    checks = []
    for index in range(rows):
        interface = interfaces[(index // 3) % len(interfaces)] if interfaces else {}
        checks.append(
            {
                "id": ids[index % 3],
                "title": "The endpoint answers a JSON-RPC request with a JSON-RPC response",
                "level": "MUST",
                "outcome": "fail",
                "detail": "HTTP 500 instead of a JSON-RPC answer: " + ESCAPED * 5,
                "interface": interface.get("url"),
                "skill": None,
                "since": when,
                "exchange": {
                    "request": "POST " + ("x" * 600),
                    "status": 500,
                    "response": ESCAPED * 30,
                    "error": None,
                    "elapsed_ms": 12.5,
                },
            }
        )
    return {
        "checked_at": when,
        "outcome": "fail",
        "endpoint": "not-a2a",
        "counts": {"pass": 0, "warn": 0, "fail": rows, "skip": 0},
        "checks": checks,
        "messages": {"day": when[:10], "sent": 0, "enabled": False},
        "failing_since": when,
    }
