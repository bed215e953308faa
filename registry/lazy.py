"""Per-request objects made on first use (the session, the admin's messages)."""

from __future__ import annotations

from typing import Any

from django.utils.functional import SimpleLazyObject, empty


def never_made(value: Any) -> bool:
    """Whether ``value`` is a lazy object this request never read nor wrote."""
    return isinstance(value, SimpleLazyObject) and value._wrapped is empty
