"""The one visibility gate: which agents (and which of their rows) a reader may see.

Every public read starts here. The rule (docs/api.md, "Visibility"):

- deleted agents are never shown;
- anonymous readers and other accounts see approved and featured agents that have a card (a
  document was fetched and stored at least once): an agent never fetched, or whose every fetch
  failed (the README's ``https://agent.example.com``), has nothing a searcher can use, so it
  stays out of every public list and page until its first card (issue 39);
- a signed-in owner also sees their own agents in any moderation state, with or without a card;
- staff see every agent that is not deleted;
- agents whose card has been gone (404/410) for a week are left out of searches unless the
  reader asks for ``health=gone``; they stay reachable by id.

Index rows (skills, tags, modes, extensions, schema uses, snapshots) are read only through
:func:`agents` so a hidden agent's strings never reach a response.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from django.db.models import BooleanField, ExpressionWrapper, Q, QuerySet

from cards.models import Agent
from registry.compiled import Compiled
from registry.errors import ProblemError


@dataclass(frozen=True)
class Viewer:
    """Who is reading: enough to apply the rule without holding on to the request."""

    user_id: int | None = None
    staff: bool = False

    @classmethod
    def of(cls, user: Any) -> Viewer:
        if user is None or not getattr(user, "is_authenticated", False):
            return ANONYMOUS
        return cls(user_id=user.pk, staff=bool(getattr(user, "is_staff", False)))

    @property
    def anonymous(self) -> bool:
        return self.user_id is None

    def manages(self, agent: Agent) -> bool:
        """The owner and staff may manage an agent (re-crawl, delete, see moderation reasons)."""
        if self.user_id is None:
            return False
        return self.staff or (
            agent.submitted_by_id is not None and agent.submitted_by_id == self.user_id
        )


ANONYMOUS = Viewer()

# What everyone may see: a public moderation state and a card (a stored snapshot).
LISTED = Q(moderation__in=Agent.PUBLIC_STATES, latest_snapshot__isnull=False)


def condition(viewer: Viewer = ANONYMOUS) -> Q:
    """The rule itself, as a condition on agent rows."""
    allowed = Q(deleted_at__isnull=True)
    if not viewer.staff:
        public = LISTED
        if viewer.user_id is not None:
            public |= Q(submitted_by_id=viewer.user_id)
        allowed &= public
    return allowed


def agents(viewer: Viewer = ANONYMOUS, *, include_gone: bool = True) -> QuerySet[Agent]:
    """The agents ``viewer`` may see."""
    rows = Agent.objects.filter(condition(viewer))
    if not include_gone:
        rows = rows.exclude(health=Agent.Health.GONE)
    return rows


def once_seen(viewer: Viewer = ANONYMOUS) -> Q | None:
    """Agents the viewer could see at some time (None: every agent, for staff): agents once
    public (``ever_public``), and for a signed-in reader their own agents."""
    if viewer.staff:
        return None
    seen = Q(ever_public=True)
    if viewer.user_id is not None:
        seen |= Q(submitted_by_id=viewer.user_id)
    return seen


def changes(viewer: Viewer, since: Any) -> QuerySet[Agent]:
    """Every agent changed at or after ``since`` that the viewer could once see, annotated
    ``visible`` (for mirrors: an agent the viewer may no longer see is shown as a tombstone).
    An agent the viewer never could see (pending, hidden or rejected before it was ever public,
    another account's) is left out entirely: not even its id or identifier reaches the feed."""
    rows = Agent.objects.filter(updated_at__gte=since)
    seen = once_seen(viewer)
    if seen is not None:
        rows = rows.filter(condition(viewer) | seen)
    return rows.annotate(visible=ExpressionWrapper(condition(viewer), output_field=BooleanField()))


def agent(viewer: Viewer, pk: Any, *, queryset: QuerySet[Agent] | None = None) -> Agent:
    """One agent the viewer may see, or a 404 problem (the same answer as for a missing one)."""
    rows = agents(viewer) if queryset is None else queryset & agents(viewer)
    found = rows.filter(pk=pk).first()
    if found is None:
        raise not_found()
    return found


def not_found() -> ProblemError:
    return ProblemError(
        status=404, slug="not-found", title="Not found", detail="No agent with this id."
    )


# --- compiled reads for the hottest paths ----------------------------------------------------

_compiled: dict[tuple[Any, ...], Compiled] = {}
_ID = Agent._meta.get_field("id")
_OWNER = Agent._meta.get_field("submitted_by")


def one_row(viewer: Viewer, pk: Any, *fields: str, **annotations: Any) -> tuple[Any, ...] | None:
    """``agents(viewer).filter(pk=pk).values_list(*fields)`` as one row, with the SQL compiled
    once per kind of viewer (registry/compiled.py): the rule stays :func:`agents`, its
    compilation leaves the request.
    """
    try:
        pk = pk if isinstance(pk, uuid.UUID) else uuid.UUID(str(pk))
    except ValueError:
        return None
    signed_in = viewer.user_id is not None
    owner = signed_in and not viewer.staff
    kind = (fields, tuple(sorted(annotations)), viewer.staff, signed_in)
    compiled = _compiled.get(kind)
    if compiled is None:

        def build(pk: Any, user: Any = None) -> QuerySet[Any]:
            # One row at most: no ORDER BY (the list's order put a sort node over the
            # primary-key look-up and cost PostgreSQL about 0.05 ms a request).
            query = agents(Viewer(user_id=user, staff=viewer.staff)).filter(pk=pk).order_by()
            if annotations:
                query = query.annotate(**annotations)
            return query.values_list(*fields)

        # The owner's id is a parameter only where the rule compares it (a signed-in reader
        # who is not staff); staff see every agent whoever owns it.
        if owner:
            compiled = Compiled(build, pk=_ID, user=_OWNER)
        else:
            compiled = Compiled(build, pk=_ID)
        _compiled[kind] = compiled
    return compiled.one(pk=pk, user=viewer.user_id) if owner else compiled.one(pk=pk)
