"""Compatibility of two versions of a JSON Schema (reference json-schemas.md section 4).

The core is :func:`backward_diff(old, new)`: can a reader using ``new`` read every instance
``old`` accepted? It walks both schemas in parallel and emits typed differences, named after
Confluent Schema Registry's ``Difference.Type``; a difference outside the compatible set breaks
compatibility. Two policies: STRICT (Confluent's default allow-list) and LENIENT (STRICT plus
the nine types Confluent's LENIENT policy relaxes, mostly about open content models).

Direction, as the registry applies it to an agent's named schema:

* input schema: breaking if the new one rejects payloads the old accepted:
  ``backward_diff(old, new)``;
* output schema: breaking if the new one allows outputs the old did not:
  ``backward_diff(new, old)``;
* used both ways: both.

Where this departs from Confluent (reference section 4.5 asks to decide and document):

* a property made required *with a default* breaks (Confluent: compatible). Validators do not
  insert defaults, so a payload without the member is rejected (Apicurio agrees);
* ``required`` gaining a name breaks even when the name has no ``properties`` entry (Confluent
  only looks at declared properties: the gap the reference found in its own corpus);
* ``format`` is diffed when the dialect asserts it (drafts 4, 6, 7, where jsonschema-rs checks
  formats): added or changed breaks, removed is compatible. In 2019-09/2020-12 it is an
  annotation and ignored, as Confluent always does;
* ``if``/``then``/``else`` are diffed (Confluent does not): adding a conditional breaks, removing
  it is compatible, a changed ``if`` breaks unless both versions accept each other, and ``then``/
  ``else`` are compared like any subschema;
* ``patternProperties`` keys are compared by coverage (a new pattern must accept what the
  additionalProperties it takes names from accepted, and vice versa);
* ``multipleOf`` is compared with exact rational arithmetic, not integer truncation;
* singleton combinators (``{"allOf": [X]}`` with nothing else) are read as ``X``.

Work is bounded: at most ``MAX_STEPS`` schema pairs are compared; beyond that the verdict is
``unknown``. Pattern matching of property names uses the same linear-time regex engine as
validation.
"""

from __future__ import annotations

from schemas_app.compat.diff import backward_diff, is_backward_compatible
from schemas_app.compat.kinds import COMPATIBLE_LENIENT, COMPATIBLE_STRICT, MAX_STEPS, POLICIES
from schemas_app.compat.nodes import BudgetExceeded, Difference
from schemas_app.compat.verdict import Verdict, classify

__all__ = [
    "COMPATIBLE_LENIENT",
    "COMPATIBLE_STRICT",
    "MAX_STEPS",
    "POLICIES",
    "BudgetExceeded",
    "Difference",
    "Verdict",
    "backward_diff",
    "classify",
    "is_backward_compatible",
]
