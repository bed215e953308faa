"""What the docs name, and what the registry has, for tests/test_docs_names.py.

The docs (README.md, docs/*.md) name query parameters (``?tag=a&tag=b``, a URL with a query, a
row of a table headed ``parameter``) and fields (a row of a table headed ``field`` in the API's
docs, a dotted path in backticks such as ``live.checks_total``). The registry has them in its
two OpenAPI documents (v1 at /api/schema, drf-spectacular's generator; ARD's at
/ard/openapi.json, protocols/ard/openapi.py) and, for the doors those do not describe, in the
code that reads them (the catalogue's, the badges', A2A's).
"""

from __future__ import annotations

import importlib
import importlib.util
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# The registry's address as the docs write it (tests/docs_blocks.py), and the issuer of examples.
HOSTS = ("http://127.0.0.1:8000", "https://registry.example.com", "http://localhost:8000")
APPS = (
    "registry",
    "cards",
    "search",
    "schemas_app",
    "protocols",
    "live",
    "tryit",
    "publishers",
    "bench",
)


@dataclass(frozen=True)
class Named:
    """One name the docs use: where, the name, and for a query parameter the path it is on
    (``None`` for a bare ``?name=``, or a table's row)."""

    where: str
    name: str
    path: str | None = None


# --- the docs --------------------------------------------------------------------------------

_URL = re.compile(
    r"(?P<path>(?:" + "|".join(re.escape(h) for h in HOSTS) + r")?/[\w\-./{}:%~$@*]*)?"
    r"\?(?P<query>[A-Za-z_][\w\-.]*(?:=[^\s`'\"<>)\]|&]*)?(?:&[A-Za-z_][\w\-.]*(?:=[^\s`'\"<>)\]|&]*)?)*)"
)
_INLINE = re.compile(r"`([^`\n]+)`")
_DOTTED = re.compile(r"[a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*)+")
_FILE_LIKE = re.compile(
    r"\.(md|py|json|txt|toml|ya?ml|html|js|css|svg|png|sh|cfg|ini|sqlite3|pem|npy|log|"
    r"safetensors|onnx|proto|com|org|net|example|io|dev|test|local|invalid|internal|lock|gz|"
    r"whl)$"
)


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    yield from enumerate(path.read_text().splitlines(), start=1)


def query_parameters() -> list[Named]:
    """Every ``?name=`` in the docs: in a URL (with its path when it has one), prose or code."""
    found = []
    for path in DOCS:
        for number, line in _lines(path):
            found += parameters_in(line, f"{path.relative_to(ROOT)}:{number}")
    return found


def parameters_in(line: str, where: str) -> list[Named]:
    """The ``?name=`` of one line of Markdown."""
    found = []
    for match in _URL.finditer(line):
        url_path = match["path"]
        if url_path is not None:
            for host in HOSTS:
                url_path = url_path.removeprefix(host)
            if not url_path.startswith("/") or url_path.startswith("//"):
                continue  # not a path of the registry's (``//host/...``: another host)
        start = match.start()
        if url_path is None and start > 0 and line[start - 1] not in "`( ":
            continue  # a "?" inside other text (a URL of another host, a sentence)
        for name in re.findall(r"(?:^|&)([A-Za-z_][\w\-.]*)", match["query"]):
            found.append(Named(where, name, url_path))
    return found


def _tables(path: Path, heading: str) -> Iterator[tuple[int, list[str]]]:
    """The rows of each table whose first header cell is ``heading``: (line, cells)."""
    inside = False
    for number, line in _lines(path):
        if not line.startswith("|"):
            inside = False
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if not inside:
            inside = cells[0].lower() == heading
            continue
        if set(cells[0]) <= set("-: "):
            continue
        yield number, cells


def table_names(heading: str, files: tuple[str, ...]) -> list[Named]:
    """The backticked names in the first column of the tables headed ``heading`` in ``files``."""
    found = []
    for path in DOCS:
        if path.name not in files:
            continue
        for number, cells in _tables(path, heading):
            for name in _INLINE.findall(cells[0]):
                found.append(Named(f"{path.relative_to(ROOT)}:{number}", name))
    return found


def dotted_names() -> list[Named]:
    """Every ``a.b`` (lower-case identifiers joined by dots) in backticks, but file names and
    host names."""
    found = []
    for path in DOCS:
        for number, line in _lines(path):
            for text in _INLINE.findall(line):
                if _DOTTED.fullmatch(text) and not _FILE_LIKE.search(text):
                    found.append(Named(f"{path.relative_to(ROOT)}:{number}", text))
    return found


# --- what the registry has -------------------------------------------------------------------


@cache
def v1_document() -> dict[str, Any]:
    from drf_spectacular.generators import SchemaGenerator

    return dict(SchemaGenerator().get_schema(request=None, public=True))


@cache
def ard_document() -> dict[str, Any]:
    from protocols.ard.openapi import document

    return document("http://127.0.0.1:8000")


def _operations(document: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for template, item in document["paths"].items():
        for method, operation in item.items():
            if method in ("get", "post", "put", "patch", "delete", "head"):
                yield template, operation


def _matches(template: str, path: str) -> bool:
    pattern = re.sub(r"\\\{[^}]*\\\}", "[^/]+", re.escape(template.rstrip("/")))
    return re.fullmatch(pattern, path.rstrip("/") or "/") is not None


def operation_parameters(document: dict[str, Any], path: str | None) -> set[str] | None:
    """The query parameters of the operations at ``path`` (every operation's for None); None
    when no operation is at ``path``."""
    names: set[str] = set()
    matched = False
    for template, operation in _operations(document):
        if path is not None and not _matches(template, path):
            continue
        matched = True
        for parameter in operation.get("parameters", []):
            if parameter.get("in") == "query":
                names.add(parameter["name"])
    return names if matched or path is None else None


# Doors the OpenAPI documents do not describe, with the modules (a glob) whose code reads each
# name (a test checks that one still spells it): the agent page's pagers, Try it's page, the
# badges, A2A.
READ_BY: dict[str, tuple[tuple[str, ...], str]] = {
    "agent page": (("skills_page", "interfaces_page", "checks_page"), "cards/catalogue/agent.py"),
    "try page": (("skill", "example"), "tryit/views.py"),
    "badge": (("label", "show"), "cards/badge_views.py"),
    "a2a": (("A2A-Version",), "protocols/a2a*.py"),
}


def door_parameters(path: str) -> set[str] | None:
    """The query parameters the door at ``path`` reads (None: no door there)."""
    from cards.catalogue.search import CATALOGUE_PARAMETERS

    path = path.split("#")[0]
    exact = "..." not in path  # ``/api/v1/...?q=``: some operation of the door
    if path.startswith("/api/v1"):
        return operation_parameters(v1_document(), path if exact else None)
    if path.startswith("/ard"):
        return operation_parameters(ard_document(), path if exact else None)
    if path.startswith("/badges/"):
        return set(READ_BY["badge"][0])
    if re.fullmatch(r"/agents/[^/]+/try", path):
        return set(READ_BY["try page"][0])
    if path.startswith("/agents/"):
        return set(READ_BY["agent page"][0])
    if path in ("/", "/my-agents") or path.startswith("/*"):
        return set(CATALOGUE_PARAMETERS)
    if path.startswith("/a2a"):
        return set(READ_BY["a2a"][0])
    return None


def every_parameter() -> set[str]:
    names = set(operation_parameters(v1_document(), None) or ())
    names |= operation_parameters(ard_document(), None) or set()
    for path in ("/", "/agents/x", "/agents/x/try", "/badges/x.svg", "/a2a"):
        names |= door_parameters(path) or set()
    return names


def _resolve(document: dict[str, Any], schema: Any) -> dict[str, Any]:
    while isinstance(schema, dict) and "$ref" in schema:
        schema = document["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    return schema if isinstance(schema, dict) else {}


def _members(document: dict[str, Any], schema: Any) -> dict[str, Any] | None:
    """The named members of ``schema`` (through $ref, allOf/anyOf/oneOf and array items), or
    None when it does not say (a free-form object: nothing to check against)."""
    schema = _resolve(document, schema)
    if schema.get("type") == "array" or "items" in schema:
        return _members(document, schema.get("items", {}))
    members: dict[str, Any] = {}
    said = False
    for key in ("allOf", "anyOf", "oneOf"):
        for part in schema.get(key, []):
            inner = _members(document, part)
            if inner is None:
                return None
            members.update(inner)
            said = True
    if "properties" in schema:
        members.update(schema["properties"])
        said = True
    free = schema.get("additionalProperties") not in (None, False)
    return members if said and not free else None


def _schemas(document: dict[str, Any]) -> Iterator[Any]:
    """Every schema in the document, nested ones included."""
    stack: list[Any] = [document]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if "properties" in node or "$ref" in node or "allOf" in node:
                yield node
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


@cache
def field_names() -> set[str]:
    """Every member name in both documents."""
    names: set[str] = set()
    for document in (v1_document(), ard_document()):
        for schema in _schemas(document):
            names |= set(_resolve(document, schema).get("properties", {}))
    return names


def field_path_exists(dotted: str) -> bool:
    """``a.b.c``: some schema has a member ``a`` whose schema has ``b``, and so on (a member
    whose schema names no members of its own ends the check: ``signature.anything``)."""
    first, *rest = dotted.split(".")
    for document in (v1_document(), ard_document()):
        for schema in _schemas(document):
            members = _members(document, schema) or {}
            if first in members and _walk(document, members[first], rest):
                return True
    return False


def _walk(document: dict[str, Any], schema: Any, rest: list[str]) -> bool:
    if not rest:
        return True
    members = _members(document, schema)
    if members is None:
        return True
    return rest[0] in members and _walk(document, members[rest[0]], rest[1:])


# --- names that are the code's, not fields -----------------------------------------------------


@cache
def _module_basenames() -> dict[str, list[str]]:
    """``semantic`` -> ``["search.semantic"]``: the project's modules by last name."""
    out: dict[str, list[str]] = {}
    for app in APPS:
        for path in (ROOT / app).rglob("*.py"):
            if "migrations" in path.parts:
                continue
            parts = path.relative_to(ROOT).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out.setdefault(parts[-1], []).append(".".join(parts))
    return out


def _attribute_path(module: str, rest: list[str]) -> bool:
    try:
        node: Any = importlib.import_module(module)
    except Exception:
        return False
    for name in rest:
        if not hasattr(node, name):
            return False
        node = getattr(node, name)
    return True


@cache
def _literals() -> frozenset[str]:
    """Every dotted string literal of the project's code: finding codes, task, logger and
    setting names (``"schema.undeclared"``, ``"cards.crawl_agent"``)."""
    names: set[str] = set()
    literal = re.compile(r"""["']([a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*)+)["']""")
    for app in APPS:
        for path in (ROOT / app).rglob("*.py"):
            names.update(literal.findall(path.read_text()))
    return frozenset(names)


@cache
def _tables_of_models() -> frozenset[str]:
    from django.apps import apps

    return frozenset(model._meta.db_table for model in apps.get_models())


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def is_code(dotted: str) -> bool:
    """A name of the code, not of a document: a module or an attribute of one, the project's
    or an installed package's, by its full path or by a project module's last name
    (``semantic.rank``); a string the code spells (a finding code, a task's name); a
    database column (``cards_agent.tag_list``)."""
    if dotted in _literals():
        return True
    parts = dotted.split(".")
    if parts[0] in _tables_of_models():
        return True
    for cut in range(len(parts), 0, -1):
        module = ".".join(parts[:cut])
        if _importable(module):
            return _attribute_path(module, parts[cut:])
    for module in _module_basenames().get(parts[0], []):
        if _attribute_path(module, parts[1:]):
            return True
    return False
