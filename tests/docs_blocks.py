"""The fenced code blocks of README.md and docs/*.md, and what tests/test_docs_examples.py does
with each: run it against a live registry, or leave it with the reason its Markdown gives.

Kept apart from the test so the convention is read in one place: a ``sh``/``bash``/``shell`` or
``python`` block that names the registry's address is run; any other block must say why not on
the line before its fence, ``<!-- not-run: why -->``; a block that does neither is an error.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# The registry's address as the docs write it: `make run`'s, and the issuer in Python examples.
DOCUMENTED_URL = "http://127.0.0.1:8000"
EXAMPLE_ISSUER = "https://registry.example.com"
# An agent's id as the Python examples write it; the shell examples use $ID.
AGENT_PLACEHOLDER = '"3f1c..."'

SHELL = frozenset({"sh", "bash", "shell"})
PYTHON = frozenset({"python", "py", "python3"})

_FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
_NOT_RUN = re.compile(r"^\s*<!--\s*not-run:(?P<reason>.*?)-->\s*$")


@dataclass(frozen=True)
class Block:
    """One fenced block: where it is, its language and text, and the not-run marker before it
    (``None`` without one; an empty string is a marker without a reason, which is an error)."""

    path: str
    line: int
    language: str
    text: str
    not_run: str | None

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"

    @property
    def kind(self) -> str:
        """``not-run``, ``sh``, ``python``, or ``unclassified`` (neither run nor marked)."""
        if self.not_run is not None:
            return "not-run"
        if self.language in SHELL and DOCUMENTED_URL in self.text:
            return "sh"
        if self.language in PYTHON and (DOCUMENTED_URL in self.text or EXAMPLE_ISSUER in self.text):
            return "python"
        return "unclassified"

    @property
    def uses_mcp(self) -> bool:
        """Whether the example imports the MCP SDK (it then runs under mcp 1.x and 2.x)."""
        return re.search(r"^\s*(from|import)\s+mcp\b", self.text, re.MULTILINE) is not None


def markdown_files() -> list[Path]:
    """README.md and every docs/*.md, new files included."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def blocks_of(path: Path) -> list[Block]:
    """The fenced blocks of one Markdown file (CommonMark fences of backticks or tildes; a
    block inside a list item may be indented, and its lines lose that indentation)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    index = 0
    while index < len(lines):
        opening = _FENCE.match(lines[index])
        if opening is None:
            index += 1
            continue
        fence, indent = opening["fence"], len(opening["indent"])
        end = index + 1
        while end < len(lines) and not _closes(lines[end], fence):
            end += 1
        body = [_dedent(line, indent) for line in lines[index + 1 : end]]
        found.append(
            Block(
                path=str(path.relative_to(ROOT)),
                line=index + 1,
                language=(opening["info"].split() or [""])[0].lower(),
                text="\n".join(body) + "\n",
                not_run=_marker_before(lines, index),
            )
        )
        index = end + 1
    return found


def _dedent(line: str, indent: int) -> str:
    """``line`` without the fence's indentation (a line indented less loses what it has)."""
    width = len(line) - len(line.lstrip())
    return line[min(indent, width) :]


def _closes(line: str, fence: str) -> bool:
    stripped = line.strip()
    return stripped.startswith(fence) and set(stripped) == {fence[0]}


def _marker_before(lines: list[str], index: int) -> str | None:
    """The reason of a ``<!-- not-run: ... -->`` on the last non-blank line before the fence."""
    for previous in reversed(lines[:index]):
        if previous.strip():
            marker = _NOT_RUN.match(previous)
            return marker["reason"].strip() if marker else None
    return None


def all_blocks() -> list[Block]:
    return [block for path in markdown_files() for block in blocks_of(path)]
