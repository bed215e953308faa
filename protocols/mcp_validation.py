"""The SDK's per-call validation of tool results, with each tool's schema compiled once."""

from __future__ import annotations

from typing import Any

import jsonschema  # type: ignore[import-untyped]  # the SDK's own dependency
import mcp.server.lowlevel.server as _lowlevel


class CompiledSchemas:
    """Stands in for the ``jsonschema`` module inside the SDK's low-level server, which calls
    ``jsonschema.validate(instance, schema)`` on every tool result: that checks the schema
    against its metaschema and builds a validator each call. Here each tool's schema is
    compiled once (same draft, same errors)."""

    ValidationError = jsonschema.ValidationError

    def __init__(self) -> None:
        self._compiled: dict[int, tuple[Any, Any]] = {}

    def validate(self, instance: Any, schema: dict[str, Any]) -> None:
        held = self._compiled.get(id(schema))
        if held is None or held[0] is not schema:
            validator_class = jsonschema.validators.validator_for(schema)
            validator_class.check_schema(schema)
            held = self._compiled[id(schema)] = (schema, validator_class(schema))
        error = jsonschema.exceptions.best_match(held[1].iter_errors(instance))
        if error is not None:
            raise error


def install() -> None:
    """Put :class:`CompiledSchemas` in place of ``jsonschema`` inside the SDK's low-level server."""
    _lowlevel.jsonschema = CompiledSchemas()
