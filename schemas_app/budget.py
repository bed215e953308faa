"""A CPU budget for schema evaluation, per request or task, shared by every match it makes.

jsonschema-rs bounds one regular-expression match (``REGISTRY_SCHEMA_REGEX_BACKTRACK_LIMIT``), but
a payload of thousands of strings against a backtracking pattern makes thousands of matches in
one call. So every schema evaluation runs inside a :class:`Budget` (CPU seconds of the calling
thread, ``time.thread_time``):

* it is checked before and after each validation (:func:`run`), so a loop over candidate schemas
  or examples stops when it is spent;
* inside one validation, each match of a pattern that needs the backtracking engine (look-around,
  back-references...) goes through :class:`BudgetedPattern`, a custom keyword that checks the
  budget before matching: once it is spent, no further backtracking match runs, the call returns
  quickly and :func:`run` raises :class:`BudgetExhausted`.

Requests get ``REGISTRY_SCHEMA_BUDGET_SECONDS``; Celery tasks (crawls, imports) get
``REGISTRY_SCHEMA_CRAWL_BUDGET_SECONDS``. ``BudgetExhausted`` is a ``ProblemError`` (422), which the
v1 API, MCP and A2A already answer in their own error shapes; the card checks turn it into the
finding ``schema.budget-exhausted``.
"""

from __future__ import annotations

import contextvars
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, TypeVar

import jsonschema_rs
from django.conf import settings

from registry.errors import ProblemError
from schemas_app import keywords as schema_keywords

T = TypeVar("T")

# The custom keyword that takes the place of a backtracking ``pattern`` in compiled validators.
PATTERN_KEYWORD = "x-registry-budgeted-pattern"
# The custom keyword checked before each ``$ref`` is followed (see :func:`budgeted`).
GUARD_KEYWORD = "x-registry-budget-guard"
_REF_KEYS = ("$ref", "$dynamicRef", "$recursiveRef")
_OLD_DRAFT_KEPT = ("$schema", "definitions", "title", "description", "$comment")

_DEFAULT_SECONDS = {
    "REGISTRY_SCHEMA_BUDGET_SECONDS": 0.5,
    "REGISTRY_SCHEMA_CRAWL_BUDGET_SECONDS": 3.0,
}


def budget_seconds(name: str) -> float:
    return float(getattr(settings, name, _DEFAULT_SECONDS[name]))


class BudgetExhausted(ProblemError):
    """The schema evaluation budget of this request or task is spent (a 422 problem)."""

    def __init__(self, budget: Budget) -> None:
        detail = (
            f"Schema evaluation stopped: this request used its budget of {budget.seconds:g} s of "
            "CPU for validating against JSON Schemas (a schema with backtracking patterns or a "
            "very large payload). Send a smaller payload."
        )
        super().__init__(
            status=422,
            slug="schema-budget-exhausted",
            title="Schema evaluation budget exhausted",
            detail=detail,
            errors=[{"pointer": "", "message": detail}],
            extra={"budget_seconds": budget.seconds},
        )


class Budget:
    """CPU seconds of this thread that schema evaluation may still use."""

    def __init__(self, seconds: float, *, clock: Callable[[], float] = time.thread_time) -> None:
        self.seconds = seconds
        self._clock = clock
        self._started = clock()
        self.exhausted = False
        self.ticks = 0

    def tick(self) -> bool:
        """One more ``$ref`` followed; True once the budget is spent (the clock is read every 64
        ticks: a tick costs well under a microsecond)."""
        self.ticks += 1
        if self.ticks % 64 == 0:
            return self.over()
        return self.exhausted

    def spent(self) -> float:
        return self._clock() - self._started

    def over(self) -> bool:
        """True once the budget is spent (and stays so)."""
        if not self.exhausted and self.spent() >= self.seconds:
            self.exhausted = True
        return self.exhausted

    def check(self) -> None:
        if self.over():
            raise BudgetExhausted(self)


_current: contextvars.ContextVar[Budget | None] = contextvars.ContextVar(
    "schema_budget", default=None
)


def current() -> Budget | None:
    return _current.get()


_TASK_ATTRIBUTE = "registry_schema_budget"


def _task_request() -> Any:
    from celery import current_task  # noqa: PLC0415 - only asked when no budget is open

    if current_task and getattr(current_task.request, "id", None):
        return current_task.request
    return None


def default_seconds() -> float:
    """The crawl budget inside a Celery task, the request budget everywhere else."""
    if _task_request() is not None:
        return budget_seconds("REGISTRY_SCHEMA_CRAWL_BUDGET_SECONDS")
    return budget_seconds("REGISTRY_SCHEMA_BUDGET_SECONDS")


def _new_budget() -> Budget:
    """A budget for this request, or the one of the running Celery task (kept on its request,
    so the card checks and the compatibility verdicts of one crawl share it)."""
    request = _task_request()
    if request is None:
        return Budget(budget_seconds("REGISTRY_SCHEMA_BUDGET_SECONDS"))
    kept = getattr(request, _TASK_ATTRIBUTE, None)
    if not isinstance(kept, Budget):
        kept = Budget(budget_seconds("REGISTRY_SCHEMA_CRAWL_BUDGET_SECONDS"))
        setattr(request, _TASK_ATTRIBUTE, kept)
    return kept


@contextmanager
def scope(seconds: float | None = None) -> Iterator[Budget]:
    """The open budget, or a new one (``seconds``, or the request's or the task's budget)."""
    open_budget = _current.get()
    if open_budget is not None:
        yield open_budget
        return
    budget = _new_budget() if seconds is None else Budget(seconds)
    token = _current.set(budget)
    try:
        yield budget
    finally:
        _current.reset(token)


def run(call: Callable[..., T], *args: Any) -> T:
    """One validation under the open budget (if any): refused when the budget is spent, and its
    result discarded when the budget ran out during it (a pattern skipped to save the budget
    may have changed the outcome)."""
    budget = _current.get()
    if budget is None:
        return call(*args)
    budget.check()
    result = call(*args)
    budget.check()
    return result


# --- patterns that need the backtracking engine -----------------------------------------------

# What makes fancy-regex use its backtracking engine: look-around, back-references (numbered or
# named), atomic groups, possessive quantifiers, \G and conditionals. Over-approximating is
# harmless: such a pattern is matched by the same engine, only through the budget check.
_BACKTRACKING = re.compile(r"\(\?<?[=!]|\(\?>|\(\?\(|\\[1-9]|\\[kg]|\\G|[*+?}]\+")


def needs_backtracking(pattern: str) -> bool:
    return bool(_BACKTRACKING.search(pattern))


@lru_cache(maxsize=1024)
def _pattern_validator(pattern: str, backtrack_limit: int) -> Any:
    return jsonschema_rs.Draft202012Validator(
        {"pattern": pattern},
        offline=True,
        pattern_options=jsonschema_rs.FancyRegexOptions(backtrack_limit=backtrack_limit),
    )


class BudgetedPattern:
    """``pattern`` for a backtracking regex, matched only while the budget lasts."""

    backtrack_limit = 100_000

    def __init__(self, parent_schema: dict[str, Any], value: Any, schema_path: list[Any]) -> None:
        self.pattern = str(value)
        self.matcher = _pattern_validator(self.pattern, self.backtrack_limit)

    def validate(self, instance: Any) -> None:
        if not isinstance(instance, str):
            return
        budget = _current.get()
        if budget is not None and budget.over():
            raise ValueError("not matched: the schema evaluation budget is spent")
        try:
            self.matcher.validate(instance)
        except jsonschema_rs.ValidationError as error:
            raise ValueError(error.message) from None


class Guard:
    """Passes while the budget lasts; fails (so the ``$ref`` beside it is not followed) after."""

    def __init__(self, parent_schema: dict[str, Any], value: Any, schema_path: list[Any]) -> None:
        pass

    def validate(self, instance: Any) -> None:
        budget = _current.get()
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
    backtracking_keys: int = 0  # patternProperties keys that need backtracking


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
    """``schema`` as it is compiled: each backtracking ``pattern`` moved to
    :data:`PATTERN_KEYWORD`, each ``$ref`` behind a :class:`Guard`; and how many
    ``patternProperties`` keys need backtracking (those are matched by jsonschema-rs itself:
    :func:`guard_keys` bounds how often). Only schema positions are rewritten (a property named
    ``pattern`` is not)."""
    result = Budgeted(schema)

    def walk(node: Any, child: bool = False) -> Any:
        if not isinstance(node, dict):
            return node
        out: dict[str, Any] = {}
        for key, value in node.items():
            below = key in _DESCENDING
            if key == "patternProperties" and isinstance(value, dict):
                result.backtracking_keys += sum(1 for name in value if needs_backtracking(name))
            if key == "pattern" and isinstance(value, str) and needs_backtracking(value):
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


def object_keys(value: Any, cap: int) -> int:
    """How many member names the objects in ``value`` have together, counted up to ``cap``."""
    count, stack = 0, [value]
    while stack and count < cap:
        item = stack.pop()
        if isinstance(item, dict):
            count += len(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return count


def guard_keys(backtracking_keys: int, instance: Any, max_matches: int) -> None:
    """Refuse (as an exhausted budget) an instance whose property names would be matched
    against backtracking ``patternProperties`` keys more than ``max_matches`` times: those
    matches run inside jsonschema-rs, where the budget cannot stop them one by one."""
    if not backtracking_keys:
        return
    budget = _current.get()
    if budget is None:
        return
    if object_keys(instance, max_matches + 1) * backtracking_keys > max_matches:
        budget.exhausted = True
        raise BudgetExhausted(budget)
