"""The public catalogue: server-rendered search and agent pages (plain templates, no JavaScript).

Everything starts from :func:`cards.reads.gate.agents`, so agents that are pending,
hidden, rejected or deleted never reach the public. Card text is untrusted: the templates rely on
autoescaping and never mark it safe, links from cards are only rendered for http(s) URLs, and
every page is sent with a Content-Security-Policy that allows no script at all, except an agent
page with a section that brings the registry's own static scripts (the "Try it" forms of tryit/):
scripts from the registry's origin only, nothing inline.
"""

from cards.catalogue.agent import agent_page
from cards.catalogue.common import FACET_CACHE_KEY, PAGE_SIZE, safe_link
from cards.catalogue.mine import my_agents
from cards.catalogue.not_found import no_such_agent_page, page_not_found
from cards.catalogue.refusals import csrf_failure, rate_limited_page
from cards.catalogue.robots import robots_txt
from cards.catalogue.search import facets, parse_search
from cards.catalogue.views import favicon, home

__all__ = [
    "FACET_CACHE_KEY",
    "PAGE_SIZE",
    "agent_page",
    "csrf_failure",
    "facets",
    "favicon",
    "home",
    "my_agents",
    "no_such_agent_page",
    "page_not_found",
    "parse_search",
    "rate_limited_page",
    "robots_txt",
    "safe_link",
]
