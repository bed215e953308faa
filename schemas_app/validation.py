"""Building validators safely, checking schemas against their metaschemas, reporting errors.

Every validator is built by :func:`compile_schema`: jsonschema-rs with ``offline=True`` (no
``$ref`` or ``$schema`` is ever fetched: over the network or from ``file://``), a registry holding
only the official metaschemas (so ``{"$ref": "http://json-schema.org/draft-07/schema#"}`` works
offline), and regular expressions on fancy-regex with a backtracking budget. fancy-regex hands
every pattern without look-around or back-references to the linear-time ``regex`` crate, so
``^(a+)+$`` cannot blow up; the rest get at most ``REGISTRY_SCHEMA_REGEX_BACKTRACK_LIMIT`` steps
per match, after which the match fails instead of running on. A backtracking or heavy ``pattern``
is compiled as a custom keyword that checks the request's schema budget before each match and
refuses a text too long for one match to stay cheap (:mod:`schemas_app.budgeted_schema`,
:mod:`schemas_app.regex_cost`), and every validation runs through :func:`schemas_app.budget.run`.

Compiled validators are cached by content hash in a bounded LRU (they are not picklable, so the
cache is per process).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import jsonschema_rs
import jsonschema_specifications

from registry.findings import json_pointer
from schemas_app import budget, budgeted_schema
from schemas_app.conf import limit

# Effective drafts, by the names the registry reports.
DRAFT4, DRAFT6, DRAFT7, DRAFT2019, DRAFT2020 = (
    "draft-04",
    "draft-06",
    "draft-07",
    "2019-09",
    "2020-12",
)
DEFAULT_DRAFT = DRAFT2020

METASCHEMA_URI = {
    DRAFT4: "http://json-schema.org/draft-04/schema#",
    DRAFT6: "http://json-schema.org/draft-06/schema#",
    DRAFT7: "http://json-schema.org/draft-07/schema#",
    DRAFT2019: "https://json-schema.org/draft/2019-09/schema",
    DRAFT2020: "https://json-schema.org/draft/2020-12/schema",
}

_VALIDATOR_CLASS: dict[str, Any] = {
    DRAFT4: jsonschema_rs.Draft4Validator,
    DRAFT6: jsonschema_rs.Draft6Validator,
    DRAFT7: jsonschema_rs.Draft7Validator,
    DRAFT2019: jsonschema_rs.Draft201909Validator,
    DRAFT2020: jsonschema_rs.Draft202012Validator,
}


def _dialect_key(uri: str) -> str:
    """``$schema`` spellings seen in the wild: http or https, with or without the empty fragment."""
    text = uri.strip()
    if text.endswith("#"):
        text = text[:-1]
    if text.startswith("https://json-schema.org/draft-0"):
        text = "http://" + text[len("https://") :]
    if text.startswith("http://json-schema.org/draft/"):
        text = "https://" + text[len("http://") :]
    return text


_DIALECTS = {_dialect_key(uri): draft for draft, uri in METASCHEMA_URI.items()}


def draft_of(dialect: Any) -> str | None:
    """The draft a ``$schema`` value names, or None when the registry does not know it."""
    if not isinstance(dialect, str):
        return None
    return _DIALECTS.get(_dialect_key(dialect))


@lru_cache(maxsize=1)
def meta_registry() -> jsonschema_rs.Registry:
    """The official metaschemas (drafts 3 to 2020-12 with their vocabularies), nothing else."""
    known = jsonschema_specifications.REGISTRY
    return jsonschema_rs.Registry([(uri, known[uri].contents) for uri in known])


def is_metaschema_uri(uri: str) -> bool:
    """A ``$ref`` to an official metaschema resolves offline (it is in :func:`meta_registry`)."""
    known = jsonschema_specifications.REGISTRY
    bare = uri[:-1] if uri.endswith("#") else uri
    return bare in known


@lru_cache(maxsize=8)
def metaschema_validator(draft: str) -> Any:
    known = jsonschema_specifications.REGISTRY
    uri = METASCHEMA_URI[draft].rstrip("#")
    return _VALIDATOR_CLASS[draft](
        known[uri].contents, offline=True, registry=meta_registry(), validate_formats=False
    )


def pattern_options() -> Any:
    return jsonschema_rs.FancyRegexOptions(
        backtrack_limit=limit("REGISTRY_SCHEMA_REGEX_BACKTRACK_LIMIT")
    )


def compile_schema(schema: Any, draft: str) -> Any:
    """A validator for ``schema`` under ``draft``. Raises jsonschema_rs errors when it cannot.

    ``schema`` must already carry a ``$schema`` the registry knows (see
    :func:`schemas_app.analysis.for_validation`), so that nothing tries to look a dialect up.
    """
    plan = budgeted_schema.budgeted(schema, old_draft=draft in (DRAFT4, DRAFT6, DRAFT7))
    keywords = (
        budgeted_schema.keywords(limit("REGISTRY_SCHEMA_REGEX_BACKTRACK_LIMIT"))
        if plan.changed
        else None
    )
    inner = _VALIDATOR_CLASS[draft](
        plan.schema,
        offline=True,
        registry=meta_registry(),
        pattern_options=pattern_options(),
        keywords=keywords,
    )
    return Compiled(inner, node_count(schema, 1_000_000), plan.limited_keys, plan.refs)


class Compiled:
    """A compiled validator, the size of its schema (JSON values), which bounds what listing
    its errors may cost (:func:`error_items`), and which of its ``patternProperties`` keys
    need the backtracking engine or are heavy (:func:`schemas_app.budgeted_schema.guard_keys`)."""

    __slots__ = ("inner", "limited_keys", "refs", "size")

    def __init__(
        self, inner: Any, size: int, limited_keys: list[str] | None = None, refs: int = 0
    ) -> None:
        self.inner = inner
        self.size = size
        self.limited_keys = limited_keys or []
        self.refs = refs

    def _guard(self, instance: Any) -> None:
        budgeted_schema.guard_keys(
            self.limited_keys, instance, limit("REGISTRY_SCHEMA_MAX_BACKTRACKING_KEY_MATCHES")
        )

    def is_valid(self, instance: Any) -> bool:
        self._guard(instance)
        return bool(self.inner.is_valid(instance))

    def validate(self, instance: Any) -> None:
        self._guard(instance)
        self.inner.validate(instance)

    def iter_errors(self, instance: Any) -> Any:
        self._guard(instance)
        return self.inner.iter_errors(instance)


@dataclass(frozen=True)
class ErrorItem:
    pointer: str  # RFC 6901 pointer into the validated instance
    message: str
    keyword: str  # the failing keyword, when known
    schema_pointer: str

    def as_dict(self) -> dict[str, str]:
        return {
            "pointer": self.pointer,
            "message": self.message,
            "keyword": self.keyword,
            "schema_pointer": self.schema_pointer,
        }


def _message(error: Any) -> str:
    text = str(getattr(error, "message", "") or error)
    # Values of a hostile payload can be huge: messages quote them.
    return text if len(text) <= 500 else text[:497] + "..."


def _item(error: Any) -> ErrorItem:
    schema_path = [
        "pattern" if part == budgeted_schema.PATTERN_KEYWORD else part
        for part in list(getattr(error, "schema_path", []) or [])
    ]
    return ErrorItem(
        pointer=json_pointer(*getattr(error, "instance_path", [])),
        message=_message(error),
        keyword=str(schema_path[-1]) if schema_path else "",
        schema_pointer=json_pointer(*schema_path),
    )


def node_count(value: Any, cap: int) -> int:
    """How many JSON values ``value`` holds (itself included), counted up to ``cap``."""
    count, stack = 0, [value]
    while stack and count < cap:
        item = stack.pop()
        count += 1
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return count


def error_items(validator: Any, instance: Any, *, max_errors: int | None = None) -> list[ErrorItem]:
    """The validation errors of ``instance``, at most ``max_errors`` of them.

    jsonschema-rs collects every error before yielding the first, and an error under ``anyOf``
    carries one per branch, so listing errors can cost far more than validating. A valid
    instance is answered by ``is_valid`` alone; when the instance times the schema is large
    (``REGISTRY_SCHEMA_ERROR_DETAIL_COST``), when the schema has ``$ref`` (listing follows every
    reference, which no guard can cut short), or when one error is asked for, only the first
    error is reported (``validate`` stops at it, and at a spent budget).
    """
    cap = max_errors if max_errors is not None else limit("REGISTRY_SCHEMA_MAX_ERRORS")
    if budget.run(validator.is_valid, instance):
        return []
    detail_cost = limit("REGISTRY_SCHEMA_ERROR_DETAIL_COST")
    schema_size = max(1, int(getattr(validator, "size", 1)))
    listable = cap > 1 and not getattr(validator, "refs", 0)
    if listable and node_count(instance, detail_cost + 1) * schema_size <= detail_cost:
        items: list[ErrorItem] = []
        for error in budget.run(lambda: list(validator.iter_errors(instance))):
            items.append(_item(error))
            if len(items) >= cap:
                break
        return items

    def first() -> list[ErrorItem]:
        try:
            validator.validate(instance)
        except jsonschema_rs.ValidationError as error:
            return [_item(error)]
        return []

    return budget.run(first)


def meta_errors(schema: Any, draft: str, *, max_errors: int = 20) -> list[ErrorItem]:
    """Where ``schema`` breaks its metaschema (pointers into the schema). Bounded by the schema's
    size cap rather than by the budget: an analysis is cached and stored, so it is never cut."""
    items: list[ErrorItem] = []
    for error in metaschema_validator(draft).iter_errors(schema):
        items.append(_item(error))
        if len(items) >= max_errors:
            break
    return items


# --- the compiled-validator cache ------------------------------------------------------------


class ValidatorCache:
    """A bounded, thread-safe LRU of compiled validators keyed by content hash.

    A failed build is cached too (as None), so a schema that cannot compile costs one attempt.
    """

    def __init__(self, size: Callable[[], int]) -> None:
        self._size = size
        self._items: OrderedDict[str, Any] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get(self, key: str, build: Callable[[], Any]) -> Any:
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                self.hits += 1
                return self._items[key]
        self.misses += 1
        try:
            value = build()
        except Exception:  # noqa: BLE001 - jsonschema-rs raises several types; None = unusable
            value = None
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > max(1, self._size()):
                self._items.popitem(last=False)
        return value

    def lookup(self, keys: Iterable[str]) -> dict[str, Any]:
        """The cached entries among ``keys`` (a failed build is cached as None)."""
        with self._lock:
            found = {key: self._items[key] for key in keys if key in self._items}
            for key in found:
                self._items.move_to_end(key)
            self.hits += len(found)
            return found

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self.hits = self.misses = 0

    def __len__(self) -> int:
        return len(self._items)


validators = ValidatorCache(lambda: limit("REGISTRY_SCHEMA_VALIDATOR_CACHE"))
