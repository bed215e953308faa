"""The anonymous agent page, kept rendered for each version of the agent's row (issue 49).

An anonymous reader's page of an agent is the same for every anonymous reader: it depends on
the agent's row, the rows written with its card (skills, modes, extensions, schema uses, the
snapshot), the registry's code and the site's address. Its bytes are kept in Django's cache
(Redis when set) under a key that holds:

- the agent's id and the version of its row: PostgreSQL's ``xmin`` (the transaction that
  wrote it) and ``ctid`` (where it is; two writes in one transaction share an ``xmin``, not a
  ``ctid``). Every write of the row makes a new version, whatever writes it (``save()``,
  ``QuerySet.update()``, a moderation, a live run, a crawl's state, a new owner or publisher),
  and the rows written with a card are written in the transaction that saves the agent. A read
  looks the page up under the version the gate lets it see, and a rendered page is kept under
  the version read with the row it was rendered from (cards.catalogue.page_reads). So a change
  is never served from the cache: the next read sees a new version and renders the page;
- a digest of the page's code and templates (:func:`code_version`), so a release never serves a
  page another release rendered;
- the scheme and host the page was asked on, as a digest (its snippets name the site's
  address).

Only a page asked for with no query string is kept (``?skills_page=2`` and the like are
rendered each time: their links repeat the query, which a client chooses), and only for
anonymous readers: the owner's and staff's pages, and every signed-in reader's header, are
rendered for them. The gate still decides each request: the version is read through
:func:`cards.reads.gate.one_row`, so a hidden or deleted agent is a 404 before the cache is
looked at. Entries live ``REGISTRY_AGENT_PAGE_CACHE_SECONDS`` (0: nothing is kept), which also
bounds what a change outside the agent's transaction can leave behind (``manage.py
reindex_schemas`` rewrites schema uses without writing the agent). A cache that does not answer
is a miss: the page is rendered as without it.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db import connection
from django.db.models.expressions import RawSQL
from django.http import HttpRequest

from cards.models import Agent
from cards.reads import gate
from cards.reads.gate import Viewer

logger = logging.getLogger(__name__)

KEY_PREFIX = "catalogue:agent-page:v1"
# Where the page's code and templates are: their digest is part of every key.
_PROJECT = Path(__file__).resolve().parents[2]
CODE_PATHS = (
    "cards/catalogue",
    "cards/templates/catalogue",
    "cards/badges.py",
    "cards/rendering/bounds.py",
    "cards/reads/gate.py",
    "cards/reads/parts.py",
    "schemas_app/hooks.py",
    "registry/mediatypes.py",
    "tryit",
)
_SUFFIXES = (".py", ".html")

_code_version: str | None = None


def code_version() -> str:
    """A digest of the files the page is made from (read once a process)."""
    global _code_version
    if _code_version is None:
        digest = hashlib.sha256()
        for name in CODE_PATHS:
            path = _PROJECT / name
            files = sorted(path.rglob("*")) if path.is_dir() else [path]
            for file in files:
                if file.suffix in _SUFFIXES and file.is_file():
                    digest.update(str(file.relative_to(_PROJECT)).encode() + b"\0")
                    digest.update(file.read_bytes() + b"\0")
        _code_version = digest.hexdigest()[:16]
    return _code_version


@functools.cache
def row_version() -> RawSQL:
    """The version of the agent row a query reads: its ``xmin`` and ``ctid``."""
    table = connection.ops.quote_name(Agent._meta.db_table)
    return RawSQL(f"{table}.xmin::text || '/' || {table}.ctid::text", [])


def seconds() -> int:
    return int(getattr(settings, "REGISTRY_AGENT_PAGE_CACHE_SECONDS", 0))


def page_cacheable(request: HttpRequest, viewer: Viewer) -> bool:
    """Whether this request's page may come from (and go to) the cache."""
    return (
        viewer.anonymous
        and not request.META.get("QUERY_STRING")
        and seconds() > 0
        and connection.vendor == "postgresql"
    )


def page_key(request: HttpRequest, pk: Any, version: str) -> str:
    # The site's address as a digest: a key of bounded length whatever the Host header.
    origin = hashlib.sha256(f"{request.scheme}://{request.get_host()}".encode()).hexdigest()
    return f"{KEY_PREFIX}:{code_version()}:{pk}:{version}:{origin[:16]}"


@dataclass(frozen=True)
class Kept:
    """A page as kept: its body and whether its policy lets the registry's scripts run."""

    body: bytes
    scripts: bool


def page_version_of(pk: Any) -> str | None:
    """The row version of the agent ``pk`` if an anonymous reader may see it (the gate's
    rule), else None."""
    row = gate.one_row(gate.ANONYMOUS, pk, "page_version", page_version=row_version())
    return None if row is None else str(row[0])


def kept_page(name: str) -> Kept | None:
    try:
        value = cache.get(name)
    except Exception:  # a cache that does not answer: render the page
        logger.warning("agent page cache: not read", exc_info=True)
        return None
    if not isinstance(value, bytes) or not value:
        return None
    return Kept(body=zlib.decompress(value[1:]), scripts=value[:1] == b"s")


def keep_page(name: str, body: bytes, *, scripts: bool) -> None:
    value = (b"s" if scripts else b"-") + zlib.compress(body, 1)  # level 1: the fastest
    try:
        cache.set(name, value, seconds())
    except Exception:
        logger.warning("agent page cache: not written", exc_info=True)
