"""A schema as compiled under the budget (:mod:`schemas_app.budget`): what lets the budget stop
a single jsonschema-rs call part-way, and what bounds the matches it cannot stop.

* A ``pattern`` that needs the backtracking engine or is heavy (:mod:`schemas_app.regex_cost`)
  becomes :class:`BudgetedPattern`, a custom keyword that checks the budget before each match
  and refuses a text too long for one match to stay cheap;
* each ``$ref``, and each subschema applied to members or items, carries a :class:`Guard` that
  fails once the budget is spent;
* ``patternProperties`` keys are matched by jsonschema-rs itself: :func:`guard_keys` refuses,
  before the call, member names it could not afford to match.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import jsonschema_rs

from schemas_app import keywords as schema_keywords
from schemas_app import regex_cost
from schemas_app.budget import BudgetExhausted, InputTooLong, Refusal, current

# The custom keyword that takes the place of a backtracking ``pattern`` in compiled validators.
PATTERN_KEYWORD = "x-registry-budgeted-pattern"
# The custom keyword checked before each ``$ref`` is followed (see :func:`budgeted`).
GUARD_KEYWORD = "x-registry-budget-guard"
_REF_KEYS = ("$ref", "$dynamicRef", "$recursiveRef")
_OLD_DRAFT_KEPT = ("$schema", "definitions", "title", "description", "$comment")


@lru_cache(maxsize=1024)
def _pattern_validator(pattern: str, backtrack_limit: int) -> Any:
    return jsonschema_rs.Draft202012Validator(
        {"pattern": pattern},
        offline=True,
        pattern_options=jsonschema_rs.FancyRegexOptions(backtrack_limit=backtrack_limit),
    )


class BudgetedPattern:
    """``pattern`` for a backtracking or heavy regex, matched only while the budget lasts and on
    texts short enough for one match to stay cheap (:func:`regex_cost.max_input`)."""

    backtrack_limit = 10_000

    def __init__(self, parent_schema: dict[str, Any], value: Any, schema_path: list[Any]) -> None:
        self.pattern = str(value)
        self.matcher = _pattern_validator(self.pattern, self.backtrack_limit)
        # Texts of up to this many characters are within the cap whatever they hold (a character
        # is at most 4 bytes of UTF-8): most texts are, and are matched without measuring them.
        longest = regex_cost.max_input(self.pattern)
        self.within = math.inf if longest is None else longest // 4

    def validate(self, instance: Any) -> None:
        if not isinstance(instance, str):
            return
        budget = current()
        if budget is not None and budget.halted():
            raise ValueError("not matched: the schema evaluation budget is spent")
        if len(instance) > self.within:
            excess = regex_cost.excess(self.pattern, instance)
            if excess is not None:
                if budget is not None:
                    budget.refuse(Refusal(self.pattern, excess))
                raise ValueError(f"not matched: longer than {excess.longest} {excess.unit}")
        if self.matcher.is_valid(instance):
            return
        try:
            self.matcher.validate(instance)
        except jsonschema_rs.ValidationError as error:
            raise ValueError(error.message) from None


class Guard:
    """Passes while the budget lasts; fails (so the ``$ref`` beside it is not followed) after."""

    def __init__(self, parent_schema: dict[str, Any], value: Any, schema_path: list[Any]) -> None:
        pass

    def validate(self, instance: Any) -> None:
        budget = current()
        if budget is not None and budget.tick():
            raise ValueError("not evaluated: the schema evaluation budget is spent")


def keywords(backtrack_limit: int) -> dict[str, Any]:
    """The custom keywords for :func:`schemas_app.validation.compile_schema`."""
    keyword = type("BudgetedPattern", (BudgetedPattern,), {"backtrack_limit": backtrack_limit})
    return {PATTERN_KEYWORD: keyword, GUARD_KEYWORD: Guard}


# Keywords whose value is a schema, a list of schemas, or a map of schemas (every draft), as
# schemas_app.keywords lists them, plus ``items`` in both forms and draft 4-7 ``dependencies``.
_SCHEMA_KEYS = (*schema_keywords.SCHEMA_KEYS, "items")
_SCHEMA_LIST_KEYS = (*schema_keywords.SCHEMA_LIST_KEYS, "items")
# Keywords that apply their subschemas to the members or items of the value (not to the value).
_DESCENDING = frozenset(
    (
        "properties",
        "patternProperties",
        "additionalProperties",
        "unevaluatedProperties",
        "propertyNames",
        "items",
        "prefixItems",
        "additionalItems",
        "unevaluatedItems",
        "contains",
    )
)
_SCHEMA_MAP_KEYS = (*schema_keywords.SCHEMA_MAP_KEYS, "dependencies")


@dataclass
class Budgeted:
    """A schema as compiled under the budget (:func:`budgeted`)."""

    schema: Any
    changed: bool = False
    refs: int = 0  # $refs guarded
    # patternProperties keys that need backtracking or are heavy (regex_cost.limited)
    limited_keys: list[str] = field(default_factory=list)


def _guard_ref(node: dict[str, Any], old_draft: bool) -> dict[str, Any]:
    """``node`` with its ``$ref`` evaluated behind a guard: ``allOf`` runs its branches in order
    and stops at the first failure, so once the budget is spent the guard fails first and the
    reference is not followed (a chain of ``anyOf`` and ``$ref`` can otherwise evaluate 2^n
    subschemas for one value). ``allOf`` keeps its existing branches at their indices.

    Drafts 4 to 7 ignore the siblings of ``$ref``: they are dropped, except ``definitions``
    (which pointers address) and annotations."""
    ref_key = next(k for k in _REF_KEYS if isinstance(node.get(k), str))
    guarded = [{GUARD_KEYWORD: True}, {ref_key: node[ref_key]}]
    if old_draft:
        out = {k: v for k, v in node.items() if k in _OLD_DRAFT_KEPT}
        out["allOf"] = guarded
        return out
    out = {k: v for k, v in node.items() if k != ref_key}
    existing = out.get("allOf")
    out["allOf"] = [*existing, {"allOf": guarded}] if isinstance(existing, list) else guarded
    return out


def budgeted(schema: Any, *, old_draft: bool = False) -> Budgeted:
    """``schema`` as it is compiled: each backtracking or heavy ``pattern`` moved to
    :data:`PATTERN_KEYWORD`, each ``$ref`` behind a :class:`Guard`; and the ``patternProperties``
    keys that are backtracking or heavy (those are matched by jsonschema-rs itself:
    :func:`guard_keys` bounds how often and on what). Only schema positions are rewritten (a
    property named ``pattern`` is not)."""
    result = Budgeted(schema)

    def walk(node: Any, child: bool = False) -> Any:
        if not isinstance(node, dict):
            return node
        out: dict[str, Any] = {}
        for key, value in node.items():
            below = key in _DESCENDING
            if key == "patternProperties" and isinstance(value, dict):
                result.limited_keys.extend(name for name in value if regex_cost.limited(name))
            if key == "pattern" and isinstance(value, str) and regex_cost.limited(value):
                out[PATTERN_KEYWORD] = value
                result.changed = True
            elif key in _SCHEMA_LIST_KEYS and isinstance(value, list):
                out[key] = [walk(item, below) for item in value]
            elif key in _SCHEMA_MAP_KEYS and isinstance(value, dict):
                out[key] = {name: walk(item, below) for name, item in value.items()}
            elif key in _SCHEMA_KEYS:
                out[key] = walk(value, below)
            else:
                out[key] = value
        if any(isinstance(out.get(k), str) for k in _REF_KEYS):
            result.refs += 1
            out = _guard_ref(out, old_draft)
            result.changed = True
        if child:
            # Applied to each member or item: a spent budget fails the next one, and the
            # keyword above stops there (is_valid and validate stop at the first failure).
            out[GUARD_KEYWORD] = True
            result.changed = True
        return out

    rewritten = walk(schema)
    if result.changed:
        result.schema = rewritten
    return result


def member_names(value: Any) -> Iterator[str]:
    """The member names of the objects in ``value``, at any depth."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            yield from item
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def guard_keys(keys: list[str], instance: Any, max_matches: int) -> None:
    """Refuse an instance whose member names jsonschema-rs would match against the limited
    ``patternProperties`` keys ``keys`` at a cost nothing could stop once the call has started:
    a name longer than a key allows (:class:`InputTooLong`), more than ``max_matches`` matches
    against backtracking keys, or matches whose estimated worst cost together exceeds what is
    left of the budget (:class:`BudgetExhausted`)."""
    budget = current()
    if not keys or budget is None:
        return
    # A name this short is within every key's cap (4 bytes of UTF-8 a character at most).
    short = min((n for n in map(regex_cost.max_input, keys) if n is not None), default=math.inf) / 4
    backtracking = sum(1 for key in keys if regex_cost.needs_backtracking(key))
    cost_ns = regex_cost.names_cost(keys)
    left_ns = (budget.seconds - budget.spent()) * 1e9
    matches, spent_ns = 0, 0.0
    for name in member_names(instance):
        if len(name) > short:
            for key in keys:
                if (excess := regex_cost.excess(key, name)) is not None:
                    raise InputTooLong(budget, Refusal(key, excess, "member name"))
        matches += backtracking
        spent_ns += cost_ns(name)
        if matches > max_matches or spent_ns > left_ns:
            budget.exhausted = True
            raise BudgetExhausted(budget)
