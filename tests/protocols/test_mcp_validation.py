"""The SDK's per-call schema validation, each schema compiled once (protocols/mcp_validation)."""

from __future__ import annotations

import jsonschema  # type: ignore[import-untyped]
import mcp.server.lowlevel.server as lowlevel
import pytest

from protocols import mcp_server, mcp_validation


def test_the_sdk_validates_through_the_compiled_schemas() -> None:
    assert isinstance(lowlevel.jsonschema, mcp_validation.CompiledSchemas)
    assert mcp_server.server._mcp_server.version


def test_compiled_validation_keeps_the_errors() -> None:
    shim = mcp_validation.CompiledSchemas()
    schema = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}
    shim.validate({"a": "x"}, schema)
    with pytest.raises(shim.ValidationError) as caught:
        shim.validate({"a": 1}, schema)
    assert "is not of type 'string'" in caught.value.message
    with pytest.raises(jsonschema.ValidationError):
        shim.validate({}, schema)
    with pytest.raises(jsonschema.SchemaError):
        shim.validate({}, {"type": 5})
    assert len(shim._compiled) == 1
