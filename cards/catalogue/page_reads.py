"""What the agent page reads, each read compiled to SQL once (:mod:`registry.compiled`):
building and compiling a queryset costs more Python than running it.

The agent row is one statement: the row without its large columns, the live report without its
rows (``live_head``), one page of the interfaces and one of the live check rows with the length
of each list (:mod:`cards.reads.parts`), and the row's version (:mod:`cards.catalogue.
page_cache`). On PostgreSQL it is compiled once per kind of viewer (anonymous, an owner, staff),
the rule being :func:`cards.reads.gate.agents` as everywhere and the page numbers parameters;
elsewhere the row and each page are read by the ORM. The index rows (default modes, the first
extensions, the first page of skills with their count, the modes naming a schema) are read by
the agent's id, once the gate has let the reader see the agent.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import connection
from django.db.models import Count, IntegerField, QuerySet, Subquery

from cards.catalogue.page_cache import row_version
from cards.catalogue.paging import SKILLS_PER_PAGE
from cards.models import Agent, Extension, Mode, Skill
from cards.reads import gate, parts
from cards.reads.gate import Viewer
from registry.compiled import Compiled, OneRow, Rows

# Columns the page never shows: left unread (a card's interfaces and findings, the stored
# documents and the index's arrays can each be megabytes).
UNREAD = (
    "findings", "search_text", "signature", "interfaces", "summary_doc", "detail_doc",
    "facet_keys", "mode_keys", "tags", "capabilities", "ard_entry",
)  # fmt: skip

_ID = Agent._meta.get_field("id")
_OWNER = Agent._meta.get_field("submitted_by")
_NUMBER = IntegerField()
_plans: dict[tuple[bool, bool], OneRow[Agent]] = {}
# What the page shows of the index (the API's lists have the rest).
DEFAULT_MODES = 100
EXTENSIONS_SHOWN = 10
MODE_NAMES_READ = 200


@dataclass
class Slice:
    """One page of a list of the row: the list's length and the page's items."""

    total: int
    items: list[Any]


@dataclass
class PageRow:
    agent: Agent
    interfaces: Slice
    checks: Slice
    version: str


def _rows(viewer: Viewer, pk: Any) -> QuerySet[Agent]:
    return parts.live_head(gate.agents(viewer).defer(*UNREAD).filter(pk=pk).order_by())


def _plan(viewer: Viewer) -> OneRow[Agent]:
    owner = viewer.user_id is not None and not viewer.staff
    kind = (viewer.staff, owner)
    plan = _plans.get(kind)
    if plan is None:
        staff = viewer.staff

        def build(
            pk: Any, i_first: Any, i_last: Any, c_first: Any, c_last: Any, user: Any = None
        ) -> QuerySet[Agent]:
            i_total, i_items = parts.slice_columns(parts.INTERFACES, i_first, i_last)
            c_total, c_items = parts.slice_columns(parts.LIVE_CHECKS, c_first, c_last)
            return _rows(Viewer(user_id=user, staff=staff), pk).annotate(
                page_version=row_version(),
                interfaces_total=i_total,
                interfaces_items=i_items,
                checks_total=c_total,
                checks_items=c_items,
            )

        number = _NUMBER
        if owner:  # the owner's id is a parameter only where the rule compares it
            plan = OneRow(
                build, pk=_ID, user=_OWNER, i_first=number, i_last=number, c_first=number,
                c_last=number,
            )  # fmt: skip
        else:
            plan = OneRow(
                build, pk=_ID, i_first=number, i_last=number, c_first=number, c_last=number
            )
        _plans[kind] = plan
    return plan


def _compiled(
    viewer: Viewer, pk: Any, interfaces: tuple[int, int], checks: tuple[int, int]
) -> PageRow | None:
    values = {
        "pk": pk,
        "i_first": interfaces[0],
        "i_last": interfaces[0] + interfaces[1] - 1,
        "c_first": checks[0],
        "c_last": checks[0] + checks[1] - 1,
    }
    if viewer.user_id is not None and not viewer.staff:
        values["user"] = viewer.user_id
    agent = _plan(viewer).get(**values)
    if agent is None:
        return None
    found = vars(agent)

    def taken(name: str) -> Slice:
        total, items = found.pop(f"{name}_total"), found.pop(f"{name}_items")
        return Slice(int(total or 0), parts.items_of(items))

    return PageRow(agent, taken("interfaces"), taken("checks"), str(found.pop("page_version")))


def _orm(
    viewer: Viewer, pk: Any, interfaces: tuple[int, int], checks: tuple[int, int]
) -> PageRow | None:
    agent = _rows(viewer, pk).first()
    if agent is None:
        return None
    agents = gate.agents(viewer)
    found = [parts.array_slice(agents, pk, which, *page) or (0, []) for which, page in
             ((parts.INTERFACES, interfaces), (parts.LIVE_CHECKS, checks))]  # fmt: skip
    return PageRow(agent, Slice(*found[0]), Slice(*found[1]), version="")


def page_row(
    viewer: Viewer, pk: Any, *, interfaces: tuple[int, int], checks: tuple[int, int]
) -> PageRow | None:
    """The agent ``pk`` if ``viewer`` may see it, with the page ``(offset, count)`` of its
    interfaces and of its live check rows; None when it may not."""
    if connection.vendor == "postgresql":
        return _compiled(viewer, pk, interfaces, checks)
    return _orm(viewer, pk, interfaces, checks)


# --- the index rows of an agent the gate let through -------------------------------------------

_AGENT = Mode._meta.get_field("agent")  # every index row's agent: a UUID parameter

_DEFAULT_MODES: Rows[Mode] = Rows(
    lambda agent: (
        Mode.objects.filter(agent_id=agent, skill__isnull=True)
        .only("direction", "media_type", "essence", "schema")
        .order_by("direction", "id")[:DEFAULT_MODES]
    ),
    agent=_AGENT,
)
_EXTENSIONS: Rows[Extension] = Rows(
    lambda agent: Extension.objects.filter(agent_id=agent).order_by("position")[:EXTENSIONS_SHOWN],
    agent=_AGENT,
)


def _first_skills(agent: Any) -> QuerySet[Skill]:
    count = (
        Skill.objects.filter(agent_id=agent).order_by().values("agent_id").annotate(n=Count("id"))
    )
    return (
        Skill.objects.filter(agent_id=agent)
        .order_by("position")
        .annotate(skills_total=Subquery(count.values("n")))[:SKILLS_PER_PAGE]
    )


_FIRST_SKILLS: Rows[Skill] = Rows(_first_skills, agent=_AGENT)
_named: Compiled | None = None


def default_modes(pk: Any) -> list[Mode]:
    """The card's default modes (not a skill's), inputs first."""
    return _DEFAULT_MODES.all(agent=pk)


def first_extensions(pk: Any) -> tuple[list[Extension], int]:
    """The first :data:`EXTENSIONS_SHOWN` extensions, and how many the card declares."""
    shown = _EXTENSIONS.all(agent=pk)
    if len(shown) < EXTENSIONS_SHOWN:
        return shown, len(shown)
    return shown, Extension.objects.filter(agent_id=pk).count()


def first_skills(pk: Any) -> tuple[list[Skill], int]:
    """The first page of skills, and how many the card has (one statement)."""
    skills = _FIRST_SKILLS.all(agent=pk)
    total = int(getattr(skills[0], "skills_total", 0) or 0) if skills else 0
    return skills, total


def named_modes(pk: Any) -> list[tuple[str, str]]:
    """The distinct (schema name, direction) of the modes naming a schema, by name."""
    global _named
    if _named is None:
        _named = Compiled(
            lambda agent: (
                Mode.objects.filter(agent_id=agent, schema__isnull=False)
                .exclude(schema="")
                .values_list("schema", "direction")
                .distinct()
                .order_by("schema", "direction")[:MODE_NAMES_READ]
            ),
            agent=_AGENT,
        )
    return [(str(name), str(direction)) for name, direction in _named.all(agent=pk)]
