"""Real A2A agents on loopback for the live-conformance tests.

    with sdk_agent() as agent:                  # a2a-sdk's own server, v1.0 card
        agent.card_url, agent.base_url, agent.received, agent.requests
    with sdk_agent(version="0.3") as agent:     # the same server, a v0.3-shaped card
    with handmade_agent() as agent:             # hand-made and conformant (a control)
    with broken_agent("bad_output") as agent:   # hand-made, breaks one rule (BROKEN_KINDS)

Every agent publishes the card of cards.py (skills ``compare``, with modes
``application/json;schema=fightComparison`` -> ``fightVerdict``, and ``echo``; seed 000's
``schemas`` map; seed 002's progress extension) at ``/.well-known/agent-card.json``, with a
JSONRPC interface at ``/a2a/jsonrpc`` and an HTTP+JSON one at ``/a2a/rest``. Every request an
agent gets is in ``agent.requests``, the whole body included, before it is answered.

``refused_interface`` declares its interfaces on 127.0.0.2, where a conformant agent counts
what reaches it (``agent.trap``). The registry refuses that address only if loopback is
allowed narrowly: set ``REGISTRY_FETCH_ALLOWED_NETWORKS = CARD_HOST_ONLY`` (127.0.0.1/32) in
such a test, not the whole of 127.0.0.0/8. ``interface_origin="http://10.0.0.1:9"`` points
the card at an address that is refused anyway, with no trap.
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx
from starlette.types import ASGIApp

from tests.live.broken import BROKEN
from tests.live.cards import CARD_PATH, JSONRPC_PATH, REST_PATH
from tests.live.handmade import HandAgent
from tests.live.sdk_agent import Version, sdk_app
from tests.live.serving import RequestLog, SeenRequest, serving

BROKEN_KINDS = tuple(BROKEN)
CARD_HOST_ONLY = [ipaddress.ip_network("127.0.0.1/32")]
TRAP_HOST = "127.0.0.2"

_SEND_METHODS = {"SendMessage", "SendStreamingMessage", "message/send", "message/stream"}


def is_send(seen: SeenRequest) -> bool:
    """Whether a request hands the agent a message, in any binding or version: a JSON-RPC
    send method, or a REST send whose body holds a message (a body that is not JSON, as a
    probe sends, carries none)."""
    try:
        body = json.loads(bytes(seen.body))
    except ValueError:
        return False
    if not isinstance(body, dict):
        return False
    if seen.path.endswith(("/message:send", "/message:stream")):
        return isinstance(body.get("message"), dict)
    return body.get("method") in _SEND_METHODS


@dataclass
class LiveAgent:
    """A running agent. ``received``: the messages its skills were given (v1.0 ProtoJSON);
    ``log``: every request it got; ``trap``: what reached refused_interface's interfaces."""

    kind: str
    base_url: str
    card: dict[str, Any]
    received: list[dict[str, Any]]
    log: RequestLog
    trap: RequestLog | None = None
    options: dict[str, Any] = field(default_factory=dict)

    @property
    def card_url(self) -> str:
        return self.base_url + CARD_PATH

    @property
    def jsonrpc_url(self) -> str:
        return self.base_url + JSONRPC_PATH

    @property
    def rest_url(self) -> str:
        return self.base_url + REST_PATH

    @property
    def requests(self) -> list[SeenRequest]:
        return self.log.entries

    def hits(self, *, method: str | None = None, path: str | None = None) -> int:
        return self.log.count(method=method, path=path)

    @property
    def sends(self) -> int:
        """Messages it was sent (is_send), whether or not it accepted or even read them."""
        return sum(1 for seen in list(self.requests) if is_send(seen))


def _card(log: RequestLog, base_url: str) -> dict[str, Any]:
    """The card as served, read without leaving a request in the agent's log."""
    response = httpx.get(base_url + CARD_PATH, timeout=10)
    response.raise_for_status()
    log.entries.clear()
    return dict(response.json())


@contextmanager
def sdk_agent(version: Version = "1.0", **options: Any) -> Iterator[LiveAgent]:
    """a2a-sdk 1.3.0's own server with our executor; the card's interfaces say ``version``
    (the server answers v1.0 and, through its compatibility layer, v0.3 on both). Options go
    to sdk_app (``interfaces``) and card_v1 (``text_mode``, ``echo_modes``)."""
    log, received = RequestLog(), list[dict[str, Any]]()

    def app_for(origin: str) -> ASGIApp:
        return log.middleware(sdk_app(origin, version=version, received=received, **options))

    with serving(app_for) as origin:
        yield LiveAgent(f"sdk-{version}", origin, _card(log, origin), received, log)


def _hand_made(agent_class: type[HandAgent], **options: Any) -> Iterator[LiveAgent]:
    log, received = RequestLog(), list[dict[str, Any]]()

    def app_for(origin: str) -> ASGIApp:
        return log.middleware(agent_class(origin, received, **options).app())

    with ExitStack() as stack:
        trap = None
        if agent_class.kind == "refused_interface" and "interface_origin" not in options:
            trap = trapped = RequestLog()

            def trap_for(origin: str) -> ASGIApp:
                # A conformant agent: a request that leaked through would even be answered.
                return trapped.middleware(HandAgent(origin, []).app())

            options["interface_origin"] = stack.enter_context(serving(trap_for, host=TRAP_HOST))
        origin = stack.enter_context(serving(app_for))
        yield LiveAgent(
            agent_class.kind, origin, _card(log, origin), received, log, trap, dict(options)
        )


@contextmanager
def handmade_agent(**options: Any) -> Iterator[LiveAgent]:
    """The hand-made agent that breaks nothing: what each broken agent departs from
    (``card_headers``: headers its card is served with)."""
    yield from _hand_made(HandAgent, **options)


@contextmanager
def broken_agent(kind: str, **options: Any) -> Iterator[LiveAgent]:
    """The hand-made agent breaking one rule (``kind`` in BROKEN_KINDS; options in broken.py)."""
    if kind not in BROKEN:
        raise ValueError(f"no broken agent {kind!r}; there are {', '.join(BROKEN_KINDS)}")
    yield from _hand_made(BROKEN[kind], **options)
