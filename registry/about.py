"""The registry's own name and version, as pyproject.toml states them (the one place to bump).

Protocols that ask a server who it is (MCP's ``serverInfo``) are told about the registry, not
about the library that speaks the protocol for it. The file is read once, at import; the image
carries it (the Dockerfile copies the whole tree).
"""

from __future__ import annotations

import tomllib
from pathlib import Path

_PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"


def _project() -> dict[str, str]:
    with _PYPROJECT.open("rb") as file:
        project = tomllib.load(file)["project"]
    return {"name": str(project["name"]), "version": str(project["version"])}


_ABOUT = _project()
REGISTRY_NAME = _ABOUT["name"]
REGISTRY_VERSION = _ABOUT["version"]
