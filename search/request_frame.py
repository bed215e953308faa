"""The words around a need that ask for an agent, not for anything the agent does.

People and orchestrators wrap a need in a request: "Find an agent that tells my bot when a
cyclone is coming", "can you bargain the seller down…", "a bot that repeats back whatever I
type". The frame ("find an agent that", "can you", "a bot that") is the same whatever is
asked, and the model embeds it with the rest: it pulls the need's vector towards every card
that calls itself an agent or a bot, away from the one that serves the need. The lexical side
already leaves such words out (``search.lexical._GENERIC``); :func:`need_of` takes the frame off the
text the model reads.

Only a frame at the start is taken, once, and only when at least two words remain: "show me
what sneakers this store carries" keeps its words (no agent noun follows "show me"), and a
need that is nothing but a frame is embedded as it was written.
"""

from __future__ import annotations

import re

# What the request asks for, rather than what it needs done: a provider named by a noun ("an
# agent", "bots") or by a pronoun ("something", "anyone").
_NOUN = r"(?:agents?|bots?|tools?|services?|assistants?|ai|apis?)"
_PRONOUN = r"(?:something|someone|anything|anyone)"
_RELATIVE = r"(?:that|which|who)"
_PURPOSE = r"(?:to|for|able to)"
_ARTICLE = r"(?:an?|some|any) "
_ASKING = (
    r"(?:(?:please )?(?:find|get|show|give|recommend|suggest) (?:me )?"
    r"|is there |are there |(?:i|we) (?:need|want) "
    r"|(?:i'm|i am|we're|we are) looking for |looking for )"
)
# The provider and what links it to the need. A bare noun followed by "to" or "for" is the
# need's own topic ("agent to agent payments", "tools for data cleaning"), not a request: it
# counts only after an article or a request ("find agents for …", "a bot to …").
_PROVIDER = (
    rf"(?:{_ASKING}(?:{_ARTICLE})?(?:{_NOUN}|{_PRONOUN}) (?:{_RELATIVE}|{_PURPOSE})"
    rf"|{_ARTICLE}{_NOUN} (?:{_RELATIVE}|{_PURPOSE})"
    rf"|{_NOUN} {_RELATIVE}"
    rf"|{_PRONOUN} (?:{_RELATIVE}|{_PURPOSE}))"
    r"(?: (?:can|could|will|would))? "
)
# An optional greeting, then either a request addressed to the agent ("can you", "help me")
# or one naming a provider ("find me an agent that", "is there a bot to", "a tool which can").
_FRAME = re.compile(
    r"^(?:(?:please|hey|hi|hello|ok|okay)\b[\s,!]*)?"
    r"(?:"
    r"(?:can|could|would|will) you (?:please )?"
    r"|i(?:'d| would) like (?:you )?to "
    r"|i (?:need|want) (?:you )?to "
    r"|help me (?:to )?"
    r"|" + _PROVIDER + r")",
    re.IGNORECASE,
)


def need_of(text: str) -> str:
    """``text`` without a leading request frame (the text itself when nothing, or fewer than
    two words, would remain)."""
    stripped = _FRAME.sub("", text.strip(), count=1).strip()
    return stripped if len(stripped.split()) >= 2 else text
