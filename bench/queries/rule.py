"""The strict rule of the needs sets (docs/search.md, "Quality"), checked mechanically.

A need may share at most one content word with any card that serves it: its words and the
card's (name, description, and every skill's name, description, tags and examples) are
lower-cased, split on anything that is not a letter or digit, stop words dropped, and reduced
by a small suffix-stripping stemmer (Porter's steps 1 and 2, simplified); the shared stems are
counted. Stemming is deliberately generous (``translate`` and ``translation`` meet), so the
rule errs on the strict side.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

STOP = frozenset(
    """a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing done don down during each few
    for from further get gets got had has have having he her here hers herself him himself his
    how i if in into is it its itself just let me more most my myself no nor not now of off on
    once only or other our ours ourselves out over own same she should so some such than that
    the their theirs them themselves then there these they this those through to too under
    until up very was we were what when where which while who whom why will with would you
    your yours yourself yourselves i'm i'll i'd it's there's what's s t ll d re ve m""".split()
)
_WORD = re.compile(r"[a-z0-9]+")
_VOWEL = re.compile(r"[aeiouy]")


def _measure_ok(stem: str) -> bool:
    return len(stem) >= 3 and bool(_VOWEL.search(stem))


_SUFFIXES = (
    "ational",
    "ization",
    "fulness",
    "iveness",
    "ousness",
    "ations",
    "ation",
    "ments",
    "ment",
    "ness",
    "ings",
    "ing",
    "ies",
    "ied",
    "ers",
    "er",
    "ors",
    "or",
    "ive",
    "ous",
    "ful",
    "able",
    "ible",
    "ally",
    "al",
    "ly",
    "ed",
    "es",
    "s",
    "e",
)


def stem(word: str) -> str:
    """A Porter-lite stem: strips one common suffix (longest first) while a stem of three
    letters with a vowel remains, then a doubled final consonant (``planned`` -> ``plan``)."""
    word = word.lower()
    if len(word) <= 3:
        return word
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and _measure_ok(word[: -len(suffix)]):
            word = word[: -len(suffix)]
            if suffix in ("ies", "ied"):
                word += "i"
            elif suffix.startswith("ation"):  # translation, translates: translat
                word += "at"
            break
    if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "aeiouls":
        word = word[:-1]
    return word


def stems(text: str) -> set[str]:
    return {stem(w) for w in _WORD.findall(text.lower()) if w not in STOP and len(w) > 1}


def _texts(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _texts(item)


def card_text(card: dict[str, Any]) -> str:
    """Name, description, and each skill's name, description, tags and examples."""
    parts: list[str] = []
    for key in ("name", "description"):
        parts.extend(_texts(card.get(key)))
    for skill in card.get("skills") or []:
        if isinstance(skill, dict):
            for key in ("name", "description", "tags", "examples"):
                parts.extend(_texts(skill.get(key)))
    return "\n".join(parts)


def shared(need: str, card: dict[str, Any]) -> set[str]:
    """The stems ``need`` shares with ``card``."""
    return stems(need) & stems(card_text(card))
