"""``/robots.txt``: crawlers are welcome on the catalogue's pages, not on the doors for programs.

The catalogue (the home page and each agent's page) is what a search engine should index. The
REST API, ARD, MCP and A2A answer programs, and each search there is work for the registry (a
query embedded, agents ranked); the admin is for curators. The home page's query strings are
left out too: facet and page links combine without end, and each is a search.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_safe

from cards.catalogue.views import fixed_file

ROBOTS_TXT = """\
# The catalogue's pages (/ and /agents/<id>) are for people and search engines.
# The API, the protocol doors (ARD, MCP, A2A), the admin and the accounts' own pages (sign-in,
# tokens, origins) are for programs, curators and publishers:
# every search there is work for the registry, and their answers are not pages to index.
# Searches on the home page (/?q=..., facet and page links) combine without end: each is a
# search too, and every agent they find has its own page (no catalogue page needs a query).
User-agent: *
Allow: /$
Allow: /agents/
Disallow: /*?
Disallow: /api/
Disallow: /admin/
Disallow: /ard/
Disallow: /mcp
Disallow: /a2a
Disallow: /my-agents
Disallow: /accounts/
Disallow: /account/
"""


@require_safe
def robots_txt(request: HttpRequest) -> HttpResponse:
    return fixed_file(ROBOTS_TXT, "text/plain; charset=utf-8")
