"""A CPU budget for schema evaluation, per request or task, shared by every match it makes.

jsonschema-rs bounds one regular-expression match (``REGISTRY_SCHEMA_REGEX_BACKTRACK_LIMIT``), but
a payload of thousands of strings against a backtracking pattern makes thousands of matches in
one call. So every schema evaluation runs inside a :class:`Budget` (CPU seconds of the calling
thread, ``time.thread_time``):

* it is checked before and after each validation (:func:`run`), so a loop over candidate schemas
  or examples stops when it is spent;
* inside one validation, the schema is compiled so that the budget can stop the call part-way
  (:mod:`schemas_app.budgeted_schema`): each match of a pattern that needs the backtracking
  engine (look-around, back-references...) or is heavy on the linear one checks the budget
  first, and so does each ``$ref`` and each subschema applied to members or items; once it is
  spent the call returns quickly and :func:`run` raises :class:`BudgetExhausted`;
* one match cannot be stopped once started, and a look-around over a long string costs seconds
  (issue 35: ``(?=.*x)y`` on 240,000 characters, 41 s). So such a pattern is only run on text up
  to the length :mod:`schemas_app.regex_cost` allows it (``REGISTRY_SCHEMA_REGEX_MAX_INPUT``); a
  longer string or member name is not evaluated, the budget records the :class:`Refusal`, and
  :func:`run` raises :class:`InputTooLong` (a :class:`BudgetExhausted` that says why).

Requests get ``REGISTRY_SCHEMA_BUDGET_SECONDS``; Celery tasks (crawls, imports) get
``REGISTRY_SCHEMA_CRAWL_BUDGET_SECONDS``. ``BudgetExhausted`` is a ``ProblemError`` (422), which the
v1 API, MCP and A2A already answer in their own error shapes; the card checks turn it into the
finding ``schema.budget-exhausted``.
"""

from __future__ import annotations

import contextvars
import math
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

from celery import current_task
from django.conf import settings

from registry import metrics
from registry.errors import ProblemError
from schemas_app import regex_cost

T = TypeVar("T")

_DEFAULT_SECONDS = {
    "REGISTRY_SCHEMA_BUDGET_SECONDS": 0.5,
    "REGISTRY_SCHEMA_CRAWL_BUDGET_SECONDS": 3.0,
}


def budget_seconds(name: str) -> float:
    return float(getattr(settings, name, _DEFAULT_SECONDS[name]))


class BudgetExhausted(ProblemError):
    """The schema evaluation budget of this request or task is spent (a 422 problem)."""

    reason = "cpu"  # registry_schema_budgets_exhausted_total's label

    def __init__(
        self, budget: Budget, detail: str = "", extra: dict[str, Any] | None = None
    ) -> None:
        budget.counted(self.reason)
        detail = detail or (
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
            extra=extra if extra is not None else {"budget_seconds": budget.seconds},
        )

    def finding(self, what: str) -> str:
        """The message of the ``schema.budget-exhausted`` finding on a card's ``what``."""
        return (
            f"validating the card's {what} used the registry's budget of "
            f"{self.extra['budget_seconds']:g} s of CPU for schema evaluation; the checks stopped "
            "here and the rest were not checked (a pattern that needs backtracking, or very large "
            "examples)"
        )


@dataclass(frozen=True)
class Refusal:
    """A text not matched against a pattern: one match on so long a text may cost seconds."""

    pattern: str
    excess: regex_cost.Excess
    kind: str = "string"  # or "member name"

    def sentence(self) -> str:
        shown = self.pattern if len(self.pattern) <= 60 else self.pattern[:57] + "..."
        size, longest, unit = self.excess.size, self.excess.longest, self.excess.unit
        unit = "bytes of UTF-8" if unit == "bytes" else unit
        return (
            f"a {self.kind} of {size:,} {unit} is longer than the {longest:,} {unit} the "
            f"registry matches against the pattern {shown!r} "
            "(one match of it costs more CPU the longer the text, and cannot be stopped once "
            "started), so it was not evaluated"
        )


class InputTooLong(BudgetExhausted):
    """A text too long for a pattern to be matched on within the bound of one match (a 422
    problem of the same type as a spent budget: the budget on a single match is exceeded)."""

    reason = "input-too-long"

    def __init__(self, budget: Budget, refusal: Refusal) -> None:
        self.refusal = refusal
        detail = f"Schema evaluation stopped: {refusal.sentence()}. Send shorter strings."
        excess = refusal.excess
        extra = {"max_input": excess.longest, "input_length": excess.size, "unit": excess.unit}
        super().__init__(budget, detail, extra)

    def finding(self, what: str) -> str:
        return f"this one of the card's {what} was not checked: {self.refusal.sentence()}"


class Budget:
    """CPU seconds of this thread that schema evaluation may still use."""

    def __init__(self, seconds: float, *, clock: Callable[[], float] = time.thread_time) -> None:
        self.seconds = seconds
        self._clock = clock
        self._started = clock()
        self.exhausted = False
        self.ticks = 0
        self.refusal: Refusal | None = None  # a text refused during the running validation
        self.stopped: set[str] = set()  # why it stopped validations (counted once each)

    def tick(self) -> bool:
        """One more ``$ref`` followed; True once the budget is spent or a text was refused (the
        clock is read every 64 ticks: a tick costs well under a microsecond)."""
        self.ticks += 1
        if self.ticks % 64 == 0:
            return self.halted()
        return self.exhausted or self.refusal is not None

    def spent(self) -> float:
        return self._clock() - self._started

    def over(self) -> bool:
        """True once the budget is spent (and stays so)."""
        if not self.exhausted and self.spent() >= self.seconds:
            self.exhausted = True
        return self.exhausted

    def halted(self) -> bool:
        """True once the running validation cannot be trusted: the budget is spent, or a text
        was refused (whose verdict would otherwise stand in for a match that never ran)."""
        return self.refusal is not None or self.over()

    def refuse(self, refusal: Refusal) -> None:
        if self.refusal is None:
            self.refusal = refusal

    def check(self) -> None:
        """Raise what stopped the last validation: a refused text (the budget itself may still
        last), or the budget spent."""
        refusal, self.refusal = self.refusal, None
        if refusal is not None:
            raise InputTooLong(self, refusal)
        if self.over():
            raise BudgetExhausted(self)

    def counted(self, reason: str) -> None:
        """This budget stopped a validation for ``reason``: in the metrics once, however often
        it does again (a spent budget refuses every later validation of its request or task)."""
        if reason not in self.stopped:
            self.stopped.add(reason)
            metrics.SCHEMA_BUDGETS_EXHAUSTED.labels(reason=reason).inc()


_current: contextvars.ContextVar[Budget | None] = contextvars.ContextVar(
    "schema_budget", default=None
)


def current() -> Budget | None:
    return _current.get()


_TASK_ATTRIBUTE = "registry_schema_budget"


def _task_request() -> Any:
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
    """One validation under the open budget: refused when the budget is spent, and its result
    discarded when the budget ran out during it or a text was too long to match (a pattern
    skipped may have changed the outcome). Outside a scope the budget is unlimited, but a text
    too long to match still raises :class:`InputTooLong`."""
    budget = _current.get()
    if budget is None:
        with scope(math.inf):
            return run(call, *args)
    budget.check()
    result = call(*args)
    budget.check()
    return result
