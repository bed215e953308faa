"""What one match of a schema's regular expression may cost, and so the longest text it is run on.

The schema budget (:mod:`schemas_app.budget`) is checked between matches; nothing can stop a
match once jsonschema-rs has started it. So one match must be cheap by construction. Its worst
cost is estimated from the pattern alone (its *weight*, :func:`weight`) and the length of the
text, and a match whose estimate is above the allowance of one match is not run: the text is
reported as not evaluated (a spent budget), never as matching or not.

Two shapes, fitted on a catalogue of hostile patterns (``bench/regex_budget.py --catalogue``,
worst of ASCII and 2- to 4-byte texts, on this 2-core machine):

* on fancy-regex's backtracking engine (look-around, back-references: :func:`needs_backtracking`)
  every start position is tried and a look-around may rescan the rest of the text with its
  automaton at each step, so one match grows as ``characters**3 * weight`` (0.25 ns a unit at
  most), on top of the steps the backtrack limit allows (60 ns each);
* on the linear engine (every other pattern) the lazy DFA gives up on a pattern whose DFA grows
  too large and the regex crate simulates the NFA over the text's UTF-8 bytes instead:
  ``bytes * weight`` (40 ns a unit at most). Patterns of weight up to :data:`LIGHT` never got
  there: at most 30 ms on 2.5 MB, the largest body a server takes, so they are not limited.

The allowance of one match is the estimate for the lightest look-around pattern, ``(?=.*x)y``
(weight 4), on ``REGISTRY_SCHEMA_REGEX_MAX_INPUT`` characters (256: 17 ms). A heavier pattern
gets a shorter text: ``(?<=a.{64}b.*)y`` weighs 70, so 98 characters; ``a.{20}x`` (22) 19,065
bytes. The worst single match of the catalogue at these caps: 30 ms.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from schemas_app.conf import limit

# What makes fancy-regex use its backtracking engine: look-around, back-references (numbered or
# named), atomic groups, possessive quantifiers, \G and conditionals. Over-approximating is
# harmless: such a pattern is matched by the same engine, only under a tighter length cap.
_BACKTRACKING = re.compile(r"\(\?<?[=!]|\(\?>|\(\?\(|\\[1-9]|\\[kg]|\\G|[*+?}]\+")
_COUNTED = re.compile(r"\{(\d*)(,?)(\d*)\}")
_CLASS_ESCAPES = frozenset("wWdDsS")

BACKTRACKING_NS = 0.25  # per n**3 * weight
LINEAR_NS = 40.0  # per byte * weight
STEP_NS = 60.0  # per step of the backtrack limit (the VM alone)
LIGHTEST = 4  # the weight of (?=.*x)y
LIGHT = 12  # linear patterns up to this weight are never limited


def needs_backtracking(pattern: str) -> bool:
    return bool(_BACKTRACKING.search(pattern))


def _class_end(pattern: str, start: int) -> int:
    """The index after the character class opened at ``start`` (nested classes included)."""
    i, depth = start + 1, 1
    if pattern.startswith("^", i):
        i += 1
    if pattern.startswith("]", i):
        i += 1
    while i < len(pattern) and depth:
        if pattern[i] == "\\":
            i += 2
            continue
        depth += {"[": 1, "]": -1}.get(pattern[i], 0)
        i += 1
    return i


@lru_cache(maxsize=4096)
def weight(pattern: str) -> int:
    """The size of the pattern's automaton, estimated from its text: an atom weighs 1 (a class or
    a class escape 2, a Unicode property 4), a group the sum of its branches, and a counted
    repetition multiplies what it repeats (``.{512}`` weighs 512). Group syntax (``?:``, ``?=``,
    a name) counts as atoms: a few units too many, never too few."""
    stack: list[list[int]] = [[]]
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            escaped = pattern[i + 1 : i + 2]
            if escaped in ("p", "P") and pattern.startswith("{", i + 2):
                end = pattern.find("}", i)
                stack[-1].append(4)
                i = end + 1 if end != -1 else len(pattern)
                continue
            stack[-1].append(2 if escaped in _CLASS_ESCAPES else 1)
            i += 2
        elif char == "[":
            stack[-1].append(2)
            i = _class_end(pattern, i)
        elif char == "(":
            stack.append([])
            i += 1
        elif char == ")" and len(stack) > 1:
            group = stack.pop()
            stack[-1].append(max(1, sum(group)))
            i += 1
        elif char == "{" and stack[-1] and (counted := _COUNTED.match(pattern, i)):
            low, comma, high = counted.groups()
            if low or high:
                times = int(high) if high else int(low or 0) + (1 if comma else 0)
                stack[-1][-1] *= max(1, times)
                i = counted.end()
            else:
                stack[-1].append(1)
                i += 1
        elif char in "*+?|^$":
            i += 1
        else:
            stack[-1].append(1)
            i += 1
    while len(stack) > 1:  # an unclosed group (the pattern would not compile anyway)
        group = stack.pop()
        stack[-1].append(sum(group))
    return max(1, sum(stack[0]))


def allowance_ns() -> float:
    """The estimated worst cost one match may have: the lightest look-around pattern on
    ``REGISTRY_SCHEMA_REGEX_MAX_INPUT`` characters."""
    return BACKTRACKING_NS * limit("REGISTRY_SCHEMA_REGEX_MAX_INPUT") ** 3 * LIGHTEST


def utf8_size(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


@dataclass(frozen=True)
class Excess:
    """A text longer than a pattern is matched on."""

    size: int
    longest: int
    unit: str  # "characters" (backtracking engine) or "bytes" (of UTF-8, the linear engine)


def max_input(pattern: str) -> int | None:
    """The longest text ``pattern`` is matched on (characters on the backtracking engine, UTF-8
    bytes on the linear one, which reads bytes), or None when any length is cheap enough."""
    size = weight(pattern)
    if needs_backtracking(pattern):
        cubed = allowance_ns() / (BACKTRACKING_NS * size)
        longest = round(cubed ** (1 / 3))
        return longest - 1 if longest**3 > cubed else longest
    if size <= LIGHT:
        return None
    return int(allowance_ns() // (LINEAR_NS * size))


def excess(pattern: str, text: str) -> Excess | None:
    """How ``text`` is too long for ``pattern``, or None when it may be matched."""
    longest = max_input(pattern)
    if longest is None or len(text) * 4 <= longest:  # a character is at most 4 bytes of UTF-8
        return None
    if needs_backtracking(pattern):
        return Excess(len(text), longest, "characters") if len(text) > longest else None
    size = utf8_size(text)
    return Excess(size, longest, "bytes") if size > longest else None


def limited(pattern: str) -> bool:
    """Whether some text is too long for ``pattern`` (it must go through the budget's keyword)."""
    return needs_backtracking(pattern) or weight(pattern) > LIGHT


def names_cost(patterns: list[str]) -> Callable[[str], float]:
    """The estimated worst CPU (ns) of matching one text against each of ``patterns``, with the
    sums over the patterns taken once."""
    backtracking = [p for p in patterns if needs_backtracking(p)]
    cubic = BACKTRACKING_NS * sum(weight(p) for p in backtracking)
    steps = STEP_NS * limit("REGISTRY_SCHEMA_REGEX_BACKTRACK_LIMIT") * len(backtracking)
    linear = LINEAR_NS * sum(
        weight(p) for p in patterns if p not in backtracking and weight(p) > LIGHT
    )

    def cost(text: str) -> float:
        return cubic * len(text) ** 3 + (linear * utf8_size(text) if linear else 0.0) + steps

    return cost
