"""schemathesis hooks for tests/test_contract.py (loaded through SCHEMATHESIS_HOOKS).

The attestation's default answer is a compact JWS (``application/jwt``), text, not JSON.
Cursors: see schemathesis.toml.
"""

from __future__ import annotations

from typing import Any

import schemathesis


@schemathesis.deserializer("application/jwt")
def jwt_text(context: Any, response: Any) -> Any:
    return response.content.decode("ascii")
