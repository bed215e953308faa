"""Imports inside functions in the project's code: `python scripts/lazy_imports.py` lists them.

A lazy import is kept only where a cycle or start-up cost requires it, and says why in a
one-line ``# lazy: <reason>`` comment: on the import's own line, or on the comment line right
above it (one comment may stand for a run of imports). Tests, bench and migrations are left out.
The exit status is 1 when an import says nothing; tests/test_architecture.py runs the check.
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
APPS = ("registry", "cards", "search", "schemas_app", "protocols", "live", "tryit", "publishers")
REASON = "# lazy:"


@dataclass(frozen=True)
class LazyImport:
    path: str  # relative to the project's root
    line: int
    text: str
    reasoned: bool


def _in_function(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    parent = parents.get(node)
    while parent is not None:
        if isinstance(parent, ast.FunctionDef | ast.AsyncFunctionDef):
            return True
        parent = parents.get(parent)
    return False


def _says_why(lines: list[str], node: ast.Import | ast.ImportFrom) -> bool:
    own = lines[node.lineno - 1 : node.end_lineno]
    if any(REASON in line.lower() for line in own):
        return True
    above = node.lineno - 2
    while above >= 0:
        text = lines[above].strip()
        if text.startswith("#"):
            return REASON in text.lower()
        if not text.startswith(("import ", "from ")):
            return False
        above -= 1  # an import of the same run: the comment above it stands for both
    return False


def lazy_imports_in(path: Path) -> list[LazyImport]:
    text = path.read_text()
    lines = text.splitlines()
    tree = ast.parse(text, str(path))
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom) and _in_function(node, parents):
            found.append(
                LazyImport(
                    path=str(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path),
                    line=node.lineno,
                    text=lines[node.lineno - 1].strip(),
                    reasoned=_says_why(lines, node),
                )
            )
    return sorted(found, key=lambda lazy: lazy.line)


def lazy_imports() -> list[LazyImport]:
    found: list[LazyImport] = []
    for app in APPS:
        for path in sorted((ROOT / app).rglob("*.py")):
            if "migrations" not in path.parts:
                found.extend(lazy_imports_in(path))
    return found


def main() -> int:
    found = lazy_imports()
    silent = [lazy for lazy in found if not lazy.reasoned]
    for lazy in silent:
        print(f"{lazy.path}:{lazy.line}: {lazy.text}")
    print(f"{len(found)} lazy imports, {len(silent)} without a `# lazy: <reason>` comment")
    return 1 if silent else 0


if __name__ == "__main__":
    sys.exit(main())
