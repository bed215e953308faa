"""The three ways an account proves an origin (docs/publishers.md, "Proof of an origin").

Each method is a module with ``instructions(origin)`` (the exact values to publish) and
``check(origin, ...)`` (look now). A check never raises for what it finds: it answers an
:class:`Outcome` whose ``reason`` says what was found and what was expected, and whether the
failure may pass by itself (a timeout, a 5xx, the registry's own politeness gate).

* ``http``: the challenge as the body of ``{origin}/.well-known/a2a-registry-challenge/{id}``;
* ``dns``: a TXT record ``a2a-registry-verification=<challenge>`` at ``_a2a-registry.<host>``;
* ``jwks``: a compact JWS over ``{"origin", "challenge"}`` by a key of the origin's JWKS.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Outcome:
    """What one proof attempt found."""

    ok: bool
    reason: str = ""  # when not ok: what was found and what was expected
    transient: bool = False  # a timeout, a 5xx, a busy destination: may pass by itself
    key_id: str = ""  # jwks: the kid that signed


def passed(*, key_id: str = "") -> Outcome:
    return Outcome(True, key_id=key_id)


def failed(reason: str, *, transient: bool = False) -> Outcome:
    return Outcome(False, reason, transient=transient)
