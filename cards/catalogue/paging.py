"""Pages within an agent's page: the first skills, interfaces and live checks, and links to the
next and previous ones (``?skills_page=2``, ``?interfaces_page=``, ``?checks_page=``).

An agent page costs what it shows: each long list is read a page at a time (docs/catalogue.md,
"Large cards"). A page number that is not a positive integer, or is past the last page, shows
the last page there is (the first when the list is empty).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from django.http import HttpRequest

SKILLS_PER_PAGE = 20
INTERFACES_PER_PAGE = 20
CHECKS_PER_PAGE = 25
MAX_PAGE_DIGITS = 9


@dataclass
class Part:
    """One page of a list on the agent page."""

    param: str
    number: int
    per_page: int
    total: int
    items: list[Any]
    previous_url: str | None = None
    next_url: str | None = None

    @property
    def offset(self) -> int:
        return (self.number - 1) * self.per_page

    @property
    def first_shown(self) -> int:
        return self.offset + 1 if self.items else 0

    @property
    def last_shown(self) -> int:
        return self.offset + len(self.items)

    @property
    def paged(self) -> bool:
        return self.total > self.per_page


def requested(request: HttpRequest, param: str) -> int:
    """The page number asked for (1 when absent or not a positive integer)."""
    text = request.GET.get(param, "")
    if not text.isdigit() or len(text) > MAX_PAGE_DIGITS:
        return 1
    return max(1, int(text))


def clamp(number: int, total: int, per_page: int) -> int:
    last = max(1, -(-total // per_page))
    return min(number, last)


def _url(request: HttpRequest, param: str, number: int, fragment: str) -> str:
    params = [(k, v) for k, values in request.GET.lists() if k != param for v in values]
    if number > 1:
        params.append((param, str(number)))
    query = urlencode(params)
    return f"{request.path}{'?' + query if query else ''}#{fragment}"


def part(
    request: HttpRequest, param: str, *, number: int, per_page: int, total: int, items: list[Any],
    fragment: str,
) -> Part:  # fmt: skip
    found = Part(param=param, number=number, per_page=per_page, total=total, items=items)
    if number > 1:
        found.previous_url = _url(request, param, number - 1, fragment)
    if found.last_shown < total:
        found.next_url = _url(request, param, number + 1, fragment)
    return found
