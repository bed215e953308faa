"""Limits of the schema machinery, overridable in Django settings (all have safe defaults).

They bound the work one hostile card or request can cause: a schema is at most
``REGISTRY_SCHEMA_MAX_BYTES`` in its canonical form, a card has at most
``REGISTRY_SCHEMA_MAX_PER_CARD`` schemas, and a regular expression with backtracking features
(look-around, back-references) gets at most ``REGISTRY_SCHEMA_REGEX_BACKTRACK_LIMIT`` steps per
match; every other pattern runs on a linear-time engine. One match is also bounded by the length
of the text it is run on (``REGISTRY_SCHEMA_REGEX_MAX_INPUT``: :mod:`schemas_app.regex_cost`).
The CPU a request or task may spend on
schema evaluation is bounded separately (``REGISTRY_SCHEMA_BUDGET_SECONDS``,
``REGISTRY_SCHEMA_CRAWL_BUDGET_SECONDS``: :mod:`schemas_app.budget`).
"""

from __future__ import annotations

from django.conf import settings

_DEFAULTS = {
    "REGISTRY_SCHEMA_MAX_BYTES": 64 * 1024,
    "REGISTRY_SCHEMA_MAX_PER_CARD": 100,
    # Steps of fancy-regex's backtracking engine per match (about 0.6 ms): a look-around rescans
    # the text at each step, so this also bounds a look-around nested in a repetition.
    "REGISTRY_SCHEMA_REGEX_BACKTRACK_LIMIT": 10_000,
    # The longest text the lightest look-around pattern ((?=.*x)y) is matched on; heavier
    # patterns get fewer characters, so that one match stays within about 17 ms of CPU.
    "REGISTRY_SCHEMA_REGEX_MAX_INPUT": 256,
    "REGISTRY_SCHEMA_VALIDATOR_CACHE": 20_000,
    "REGISTRY_SCHEMA_PAYLOAD_MAX_BYTES": 512 * 1024,
    "REGISTRY_SCHEMA_MAX_ERRORS": 50,
    "REGISTRY_SCHEMA_EXAMPLES_PER_SKILL": 50,
    # Listing every error costs about (values in the instance) x (values in the schema); above
    # this, only the first error is reported.
    "REGISTRY_SCHEMA_ERROR_DETAIL_COST": 50_000,
    # At most this many property names of a payload are matched against backtracking
    # patternProperties keys (each such match may cost up to the backtrack limit).
    "REGISTRY_SCHEMA_MAX_BACKTRACKING_KEY_MATCHES": 200,
    # Bodies of the check endpoints (match, check-message, validate-payload) nest at most this
    # deep (arrays and objects); deeper is a 400.
    "REGISTRY_SCHEMA_MAX_DEPTH": 128,
}


def limit(name: str) -> int:
    """The setting ``name`` if the project sets it, otherwise the default above."""
    return int(getattr(settings, name, _DEFAULTS[name]))
