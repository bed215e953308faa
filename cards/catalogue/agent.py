"""An agent's catalogue page: its card, health, live checks, skills, schemas and badge.

The page costs what it shows, whatever the card holds (issue 43; docs/catalogue.md, "Large
cards"): the agent row is read without its large columns (findings, the stored documents, the
interfaces and the live report's rows stay in the database), then one page of skills, of
interfaces and of live check rows (``?skills_page=``, ``?interfaces_page=``, ``?checks_page=``),
the first extensions and schemas. Long texts of skills are cut; the API and the card JSON have
them whole. A skill's "Try it" form is a page of its own (tryit/), built when a reader opens it.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import NoReverseMatch, reverse
from django.views.decorators.http import require_safe

from cards import hooks
from cards.badges import embed_snippets
from cards.catalogue.common import _secure, safe_link
from cards.catalogue.live import live_context
from cards.catalogue.no_card import of_agent
from cards.catalogue.page_cache import (
    keep_page,
    kept_page,
    page_cacheable,
    page_key,
    page_version_of,
)
from cards.catalogue.page_reads import (
    PageRow,
    Slice,
    default_modes,
    first_extensions,
    first_skills,
    page_row,
)
from cards.catalogue.paging import (
    CHECKS_PER_PAGE,
    INTERFACES_PER_PAGE,
    SKILLS_PER_PAGE,
    Part,
    clamp,
    part,
    requested,
)
from cards.catalogue.schema_rows import schema_rows
from cards.models import Agent, Mode, Skill
from cards.reads import parts
from cards.reads.gate import Viewer
from cards.rendering.bounds import clip

# What a skill shows on the page (the API's skill list has the rest).
SKILL_TEXT = 1000
SKILL_TAGS = 10
SKILL_EXAMPLES = 3
SKILL_EXAMPLE_TEXT = 300
SKILL_MODES = 10


def _optional_url(name: str, *args: Any) -> str | None:
    try:
        return reverse(name, args=args)
    except NoReverseMatch:
        return None


@dataclass
class ShownSkill:
    """A skill as the page shows it: cut texts, its first tags, examples and modes."""

    skill: Skill
    skill_id: str
    name: str
    description: str
    tags: list[str]
    more_tags: int
    examples: list[str]
    input_modes: list[str]
    output_modes: list[str]
    try_url: str | None = None

    @classmethod
    def of(cls, skill: Skill) -> ShownSkill:
        tags = [tag for tag in skill.tags or [] if isinstance(tag, str)]
        return cls(
            skill=skill,
            skill_id=skill.skill_id,
            name=skill.name,
            description=clip(skill.description, SKILL_TEXT),
            tags=[clip(tag, 256) for tag in tags[:SKILL_TAGS]],
            more_tags=max(0, len(tags) - SKILL_TAGS),
            examples=[clip(e, SKILL_EXAMPLE_TEXT) for e in (skill.examples or [])[:SKILL_EXAMPLES]],
            input_modes=[clip(m, 512) for m in (skill.input_modes or [])[:SKILL_MODES]],
            output_modes=[clip(m, 512) for m in (skill.output_modes or [])[:SKILL_MODES]],
        )


def _skills(request: HttpRequest, agent: Agent) -> Part:
    per = SKILLS_PER_PAGE
    asked = requested(request, "skills_page")
    if asked == 1:  # the first page and the count in one statement
        rows, total = first_skills(agent.pk)
        number = 1
    else:
        total = Skill.objects.filter(agent=agent).count()
        number = clamp(asked, total, per)
        offset = (number - 1) * per
        rows = list(Skill.objects.filter(agent=agent).order_by("position")[offset : offset + per])
    items = [ShownSkill.of(skill) for skill in rows]
    return part(
        request, "skills_page", number=number, per_page=per, total=total, items=items,
        fragment="skills",
    )  # fmt: skip


def _shown(asked: int, found: Slice, per: int) -> int:
    """The page of a list to show: the one asked for, or the last one when that is past it."""
    return clamp(asked, found.total, per) if not found.items and asked > 1 else asked


def _listed(
    request: HttpRequest, viewer: Viewer, pk: uuid.UUID
) -> tuple[PageRow, Part, Part] | None:
    """The agent row with the page of its interfaces and of its live check rows the request
    asks for, read together (None: the viewer may not see the agent)."""
    i_per, c_per = INTERFACES_PER_PAGE, CHECKS_PER_PAGE

    def read(i: int, c: int) -> PageRow | None:
        interfaces, checks = ((i - 1) * i_per, i_per), ((c - 1) * c_per, c_per)
        return page_row(viewer, pk, interfaces=interfaces, checks=checks)

    asked = (requested(request, "interfaces_page"), requested(request, "checks_page"))
    row = read(*asked)
    if row is None:
        return None
    i, c = _shown(asked[0], row.interfaces, i_per), _shown(asked[1], row.checks, c_per)
    if (i, c) != asked:  # past the last page of a list: read its last page
        row = read(i, c)
        if row is None:
            return None
    interfaces = part(
        request, "interfaces_page", number=i, per_page=i_per, total=row.interfaces.total,
        items=row.interfaces.items, fragment="interfaces",
    )  # fmt: skip
    checks = part(
        request, "checks_page", number=c, per_page=c_per, total=row.checks.total,
        items=row.checks.items, fragment="live-checks",
    )  # fmt: skip
    return row, interfaces, checks


def _not_found(request: HttpRequest, pk: uuid.UUID) -> HttpResponse:
    return _secure(render(request, "catalogue/not_found.html", {"pk": pk}, status=404))


@require_safe
def agent_page(request: HttpRequest, pk: uuid.UUID) -> HttpResponse:
    viewer = Viewer.of(request.user)
    keep = False  # whether the page goes to the cache (page_cache)
    if page_cacheable(request, viewer):
        version = page_version_of(pk)
        if version is None:
            return _not_found(request, pk)
        kept = kept_page(page_key(request, pk, version))
        if kept is not None:
            return _secure(HttpResponse(kept.body), scripts=kept.scripts)
        keep = True
    listed = _listed(request, viewer, pk)
    if listed is None:
        return _not_found(request, pk)
    row, interfaces, checks = listed
    agent = row.agent
    if agent.latest_snapshot_id is None:
        return _no_card_page(request, agent)

    defaults = default_modes(agent.pk)
    extensions, extensions_total = first_extensions(agent.pk)
    skills = _skills(request, agent)
    base_url = request.build_absolute_uri("/")
    page_url = request.build_absolute_uri(reverse("catalogue-agent", args=[agent.pk]))
    snippets = embed_snippets(agent, base_url, link_url=page_url)
    # Sections other apps add (tryit/: a "Try it" link for each skill of this page that has a
    # structured input), each with its own template.
    setattr(agent, "page_skills", [shown.skill for shown in skills.items])  # noqa: B010
    sections = [
        section
        for hook in hooks.agent_page_sections
        if (section := hook(request, agent)) is not None
    ]
    for section in sections:
        links = section.get("skill_links") or {}
        for shown in skills.items:
            shown.try_url = shown.try_url or links.get(shown.skill.pk)
    live = live_context(agent, request.user, report=parts.report_head(agent), checks=checks.items)
    context = {
        "agent": agent,
        "public": agent.moderation in Agent.PUBLIC_STATES,
        "provider_link": safe_link(agent.provider_url),
        "documentation_link": safe_link(agent.documentation_url),
        "input_modes": [m for m in defaults if m.direction == Mode.Direction.INPUT],
        "output_modes": [m for m in defaults if m.direction == Mode.Direction.OUTPUT],
        "schemas": schema_rows(agent),
        "skills": skills,
        "interfaces": interfaces,
        "checks": checks,
        "extensions": extensions,
        "extensions_more": extensions_total - len(extensions),
        "snippets": [
            ("Markdown", snippets["markdown"]),
            ("HTML", snippets["html"]),
            ("reStructuredText", snippets["rst"]),
        ],
        "badge_url": f"/badges/{agent.pk}.svg",
        "card_url": reverse("agent-card", args=[agent.pk]),
        "api_url": reverse("agent-detail", args=[agent.pk]),
        "skills_api_url": reverse("agent-skills", args=[agent.pk]),
        "interfaces_api_url": reverse("agent-interfaces", args=[agent.pk]),
        "checks_api_url": reverse("agent-live-checks", args=[agent.pk]),
        "history_url": reverse("agent-history", args=[agent.pk]),
        "attestation_url": _optional_url("agent-attestation", agent.pk),
        "live": live,
        "sections": sections,
    }
    scripts = any(section.get("scripts") for section in sections)
    response = render(request, "catalogue/agent.html", context)
    if keep:
        # Kept under the version of the row it was rendered from (the version read first may
        # be older: then nobody asks for it again).
        name = page_key(request, pk, row.version)
        keep_page(name, response.content, scripts=scripts)
    return _secure(response, scripts=scripts)


def _no_card_page(request: HttpRequest, agent: Agent) -> HttpResponse:
    """The page of an agent without a card (its owner's or staff's only: cards.reads.gate):
    one sentence with the reason and the next try; nothing that only a card can fill (badge,
    states, health, skills, schemas) and no link that cannot answer (card JSON, attestation)."""
    context = {
        "agent": agent,
        "public": agent.moderation in Agent.PUBLIC_STATES,
        "no_card": of_agent(agent),
        "manager": Viewer.of(request.user).manages(agent),
        "api_url": reverse("agent-detail", args=[agent.pk]),
        "recrawl_url": _optional_url("agent-recrawl", agent.pk),
    }
    return _secure(render(request, "catalogue/agent_no_card.html", context))
