"""Reach a skill's "Try it" page as a reader does: from the agent's page, by its link."""

from __future__ import annotations

import html
import re
from typing import Any
from urllib.parse import parse_qs, urlsplit

TRY_LINK = re.compile(r'<a class="try-link small" href="([^"]*)">Try it</a>')


def try_links(page: str) -> dict[str, str]:
    """The "Try it" links of an agent page, by skill id."""
    links = [html.unescape(found) for found in TRY_LINK.findall(page)]
    return {parse_qs(urlsplit(link).query)["skill"][0]: link for link in links}


def try_page(client: Any, agent: Any, skill: str | None = None) -> Any:
    """The response of the "Try it" page of ``skill`` (the first linked one by default),
    followed from the agent's page."""
    page = client.get(f"/agents/{agent.pk}")
    assert page.status_code == 200
    links = try_links(page.content.decode())
    assert links, "the agent page links no Try it page"
    url = links[skill] if skill is not None else next(iter(links.values()))
    response = client.get(url)
    assert response.status_code == 200, response.content[:300]
    return response
