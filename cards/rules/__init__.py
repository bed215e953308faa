"""Card rules: a served card (and its v1.0 normal form) -> findings.

Rules read `data`, the JSON as served, so every pointer points into what the agent published.
Each rule is a small function; a rule that trips over an input it did not expect becomes one
`rules.internal-error` finding instead of an exception, because validation must always answer.
The codes are stable and listed in docs/validation-rules.md.

Modules: ``context`` (RuleContext, the findings Report, the Run each rule receives),
``fields`` (member tables), ``objects`` (generic presence and type checks), ``urls`` (URL and
host checks), and the rules by subject: ``card`` (endpoint, top level, provider, capabilities,
signatures), ``interfaces``, ``skills``, ``modes``, ``security``, ``versions`` and ``style``
(deprecated members, snake_case keys, unrendered templates). ``engine`` runs them all
(validate_card).
"""

from __future__ import annotations

from cards.rules.context import MAX_FINDINGS, RuleContext
from cards.rules.engine import validate_card
from cards.rules.fields import CARD_FIELDS

__all__ = ["CARD_FIELDS", "MAX_FINDINGS", "RuleContext", "validate_card"]
