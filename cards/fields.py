"""A list of strings stored as ``text[]`` on PostgreSQL and as JSON text on SQLite.

PostgreSQL gets an array with a GIN index so ``tags @> ARRAY[...]`` is an index lookup; SQLite
(the no-configuration mode) keeps the same Python value and searches through the tag rows.
"""

from __future__ import annotations

import json
from typing import Any

from django.db import models


class TextArrayField(models.Field):  # type: ignore[type-arg,unused-ignore]
    description = "A list of strings"

    def db_type(self, connection: Any) -> str:
        return "text[]" if connection.vendor == "postgresql" else "text"

    def get_db_prep_value(self, value: Any, connection: Any, prepared: bool = False) -> Any:
        if value is None:
            return None
        items = [str(item) for item in value]
        return items if connection.vendor == "postgresql" else json.dumps(items)

    def from_db_value(self, value: Any, expression: Any, connection: Any) -> list[str]:
        if value is None:
            return []
        if isinstance(value, str):
            return list(json.loads(value))
        return list(value)

    def to_python(self, value: Any) -> list[str]:
        if isinstance(value, str):
            return list(json.loads(value))
        return list(value or [])
