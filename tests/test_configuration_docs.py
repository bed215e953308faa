"""Every setting in one reference (issue 46 §5): each environment variable the code reads through
registry/env.py's helpers is a row of docs/configuration.md."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HELPERS = "str|int|float|bool|optional|list|networks|ports"
READ = re.compile(rf"\benv_(?:{HELPERS})\(\s*\"([A-Z][A-Z0-9_]+)\"")
APPS = ("registry", "cards", "schemas_app", "protocols", "live", "tryit", "publishers")


def read_variables() -> set[str]:
    names: set[str] = set()
    for app in APPS:
        for path in (ROOT / app).rglob("*.py"):
            if "migrations" not in path.parts:
                names.update(READ.findall(path.read_text()))
    return names


def test_every_variable_the_code_reads_is_documented() -> None:
    names = read_variables()
    assert len(names) > 80, sorted(names)  # the pattern still finds them
    reference = (ROOT / "docs" / "configuration.md").read_text()
    missing = sorted(name for name in names if f"`{name}`" not in reference)
    assert missing == [], f"add these to docs/configuration.md: {missing}"
