"""Where the token comes from: ``A2A_REGISTRY_TOKEN``, else the login file.

The login file is ``$XDG_CONFIG_HOME/a2a-registry/credentials.json`` (``~/.config/...`` by
default), mode 0600, holding one token per registry URL with its expiry when known.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

TOKEN_ENV = "A2A_REGISTRY_TOKEN"


def config_dir() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "a2a-registry"


def credentials_file() -> Path:
    return config_dir() / "credentials.json"


def _read() -> dict[str, Any]:
    try:
        data = json.loads(credentials_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _expired(expires_at: Any) -> bool:
    if not isinstance(expires_at, str) or not expires_at:
        return False
    try:
        when = datetime.fromisoformat(expires_at.replace("Z", "+00:00"))
    except ValueError:
        return False
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when <= datetime.now(UTC)


def stored_token(registry: str) -> str | None:
    """The token ``login`` stored for ``registry`` (None if absent or expired)."""
    entry = _read().get("registries", {}).get(registry.rstrip("/"))
    if not isinstance(entry, dict) or _expired(entry.get("expires_at")):
        return None
    token = entry.get("token")
    return token if isinstance(token, str) and token else None


def token_for(registry: str) -> str | None:
    """The environment's token, else the stored one."""
    return os.environ.get(TOKEN_ENV) or stored_token(registry)


def store(registry: str, token: str, expires_at: str | None = None) -> Path:
    """Save the token for ``registry`` in the login file, readable by its owner only."""
    data = _read()
    registries = data.setdefault("registries", {})
    if not isinstance(registries, dict):
        registries = data["registries"] = {}
    registries[registry.rstrip("/")] = {"token": token, "expires_at": expires_at}
    path = credentials_file()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(data, handle, indent=2)
    os.chmod(path, 0o600)
    return path
