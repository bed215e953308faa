"""Every query parameter and field the docs name exists (issue 47): docs/catalogue.md listed
`after` and `before`, which the server refuses, and named a `messages.sent` the API does not
have. The names come from README.md and docs/*.md, the registry's from its OpenAPI documents
and the code of the doors those do not describe (tests/doc_names.py)."""

from __future__ import annotations

import re

import pytest

from tests import doc_names
from tests.doc_names import Named

# Measurement reports quote other registries' APIs and name the code they timed (loop, cache,
# compiler objects): they are not a description of this registry's API.
REPORTS = re.compile(r"docs/benchmarks[\w-]*\.md:")

# Names the docs use on purpose that no door reads, each with why. Kept short: a test below
# fails on an entry nothing uses any more.
PARAMETER_EXCEPTIONS = {
    "tga": "docs/api.md: a misspelt `tag`, shown being refused (400 naming it)",
    "v": "docs/badges-and-attestations.md: any new query makes a new URL for a cache; the "
    "badge ignores it",
    "moderation__exact": "docs/security.md: the admin's changelist filter (Django's own)",
    "created_at__gte": "docs/security.md: the admin's changelist filter (Django's own)",
    "o": "docs/security.md: the admin's changelist order (Django's own)",
    "p": "docs/security.md: the admin's changelist page (Django's own)",
}
FIELD_EXCEPTIONS = {
    "data": "docs/orchestrators.md: the `data` member of a JSON-RPC error and of an MCP result "
    "(A2A's and MCP's shapes, not the REST API's)",
    "a.b.c.d": "docs/fetch-policy.md: the four parts of an IPv4 address",
    "py.warnings": "docs/operations.md: the logger Python's warnings go to",
    "schemas.bomb": "docs/schemas.md: a schema's name in an example",
    "admin.site": "docs/security.md: Django's admin site object",
}


def _excepted_field(name: str) -> bool:
    return name in FIELD_EXCEPTIONS or name.split(".")[0] in FIELD_EXCEPTIONS


def parameter_problems(named: list[Named]) -> list[str]:
    problems = []
    for item in named:
        if REPORTS.match(item.where) or item.name in PARAMETER_EXCEPTIONS:
            continue
        if item.path is None:
            if item.name not in doc_names.every_parameter():
                problems.append(f"{item.where}: `?{item.name}=` is a parameter of no door")
            continue
        allowed = doc_names.door_parameters(item.path)
        if allowed is None:
            problems.append(f"{item.where}: no door at {item.path} (`?{item.name}=`)")
        elif item.name not in allowed:
            problems.append(
                f"{item.where}: {item.path} takes no `{item.name}` (it takes: "
                f"{', '.join(sorted(allowed)) or 'none'})"
            )
    return problems


def field_problems(named: list[Named]) -> list[str]:
    problems = []
    for item in named:
        if REPORTS.match(item.where) or _excepted_field(item.name) or doc_names.is_code(item.name):
            continue
        if not doc_names.field_path_exists(item.name):
            problems.append(f"{item.where}: `{item.name}` is a field of no document the API serves")
    return problems


# --- the docs --------------------------------------------------------------------------------


def test_every_query_parameter_in_a_url_exists_at_its_door() -> None:
    named = doc_names.query_parameters()
    assert len(named) > 80, len(named)  # the docs' URLs are found
    assert parameter_problems(named) == []


def test_every_parameter_in_a_parameter_table_exists() -> None:
    """Tables headed `parameter`: the catalogue's search form (docs/catalogue.md) and
    `GET /api/v1/agents` (docs/api.md)."""
    catalogue = doc_names.table_names("parameter", ("catalogue.md",))
    api = doc_names.table_names("parameter", ("api.md",))
    assert {"q", "cursor"} <= {n.name for n in catalogue} and len(api) > 10
    problems = parameter_problems([Named(n.where, n.name, "/") for n in catalogue])
    problems += parameter_problems([Named(n.where, n.name, "/api/v1/agents") for n in api])
    assert problems == []


def test_every_field_in_a_field_table_of_the_apis_docs_exists() -> None:
    """Tables headed `field` in docs/api.md ("One shape per field") and docs/search.md (what a
    ranked result says); docs/operations.md's are log lines' fields, not the API's."""
    named = doc_names.table_names("field", ("api.md", "search.md"))
    assert {"moderation", "score", "matched_skill"} <= {n.name for n in named}
    missing = [
        f"{n.where}: `{n.name}`"
        for n in named
        if n.name not in doc_names.field_names() and not doc_names.field_path_exists(n.name)
    ]
    assert missing == []


def test_every_dotted_field_path_exists() -> None:
    named = doc_names.dotted_names()
    assert {"live.checks_total", "health.endpoint"} <= {n.name for n in named}
    assert field_problems(named) == []


# --- the check itself ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("`/?after=abc`", "/ takes no `after`"),
        ("GET `/api/v1/agents?tga=x&before=1`", "/api/v1/agents takes no `before`"),
        ("http://127.0.0.1:8000/nope?x=1", "no door at /nope"),
        ("`/ard/agents?pageSize=5&cursor=x`", "/ard/agents takes no `cursor`"),
    ],
)
def test_the_check_finds_a_parameter_no_door_takes(line: str, problem: str) -> None:
    """What docs/catalogue.md said before issue 47, and its likes, are found."""
    problems = parameter_problems(doc_names.parameters_in(line, "sample:1"))
    assert any(problem in found for found in problems), problems


def test_the_check_finds_a_field_the_api_does_not_have() -> None:
    problems = field_problems(
        [Named("sample:1", "messages.sent"), Named("sample:2", "live.checks_total")]
    )
    assert problems == ["sample:1: `messages.sent` is a field of no document the API serves"]


def test_the_doors_read_the_names_listed_for_them() -> None:
    """tests/doc_names.READ_BY lists the parameters of the pages the OpenAPI documents do not
    describe; each is still read by its module."""
    for names, modules in doc_names.READ_BY.values():
        text = "".join(path.read_text() for path in doc_names.ROOT.glob(modules))
        for name in names:
            assert f'"{name}"' in text, f"{modules} no longer reads ?{name}="


def test_every_exception_is_still_needed() -> None:
    parameters = {n.name for n in doc_names.query_parameters()}
    fields = {n.name for n in doc_names.dotted_names()}
    assert set(PARAMETER_EXCEPTIONS) <= parameters, set(PARAMETER_EXCEPTIONS) - parameters
    unused = [name for name in FIELD_EXCEPTIONS if not any(
        f == name or f.split(".")[0] == name for f in fields
    )]  # fmt: skip
    assert unused == []
