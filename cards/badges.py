"""Embeddable status badges: a flat, shields-style SVG rendered from an agent's state.

Rendering is pure (no database, no request): :func:`badge_state` reads an agent's fields,
:func:`render_badge` turns a label and a state into SVG text. Every piece of text that reaches
the SVG is stripped of characters XML cannot hold and escaped, so a hostile ``?label=`` or
agent name can neither break the document nor inject markup.

Layout follows the shields "flat" style: 20 px high, 5 px padding each side of a text, text
width from a Verdana 11 px advance-width table, rounded up to an odd number of pixels. Text
is drawn at 10x size scaled by 0.1 with ``textLength`` so it fills its box in whatever font
the viewer substitutes for Verdana.
"""

from __future__ import annotations

import math
import unicodedata
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import TYPE_CHECKING
from xml.sax.saxutils import escape, quoteattr

from django.urls import NoReverseMatch, reverse

if TYPE_CHECKING:
    from cards.models import Agent

DEFAULT_LABEL = "A2A"
MAX_LABEL_CHARS = 40
_PADDING = 5
_HEIGHT = 20
_LABEL_COLOUR = "#555"


@dataclass(frozen=True)
class BadgeState:
    key: str
    message: str
    colour: str
    status: int = 200


# key -> how it looks. "unsigned" is blue-grey, not yellow: signatures are optional in A2A, so
# an unsigned but valid card is neutral information, not a warning; its message says "valid"
# first, the fact that counts. A valid card whose live checks passed says that too (the
# "-live" states: :func:`badge_state`), the best true facts of an agent that works.
STATES: dict[str, BadgeState] = {
    "verified": BadgeState("verified", "verified", "#44cc11"),
    "valid": BadgeState("valid", "valid", "#97ca00"),
    "unsigned": BadgeState("unsigned", "valid, unsigned", "#607d8b"),
    "verified-live": BadgeState("verified-live", "verified, live checks passed", "#44cc11"),
    "valid-live": BadgeState("valid-live", "valid, live checks passed", "#97ca00"),
    "invalid": BadgeState("invalid", "invalid", "#e05d44"),
    "bad-signature": BadgeState("bad-signature", "bad signature", "#e05d44"),
    "unreachable": BadgeState("unreachable", "unreachable", "#fe7d37"),
    "pending": BadgeState("pending", "pending", "#9f9f9f"),
    "unknown": BadgeState("unknown", "unknown agent", "#9f9f9f", status=404),
    # ?show=live: the outcome of the live checks (docs/live-checks.md) instead of the card's.
    "live-pass": BadgeState("live-pass", "live: pass", "#44cc11"),
    "live-fail": BadgeState("live-fail", "live: fail", "#e05d44"),
    "live-not-checked": BadgeState("live-not-checked", "live: not checked", "#9f9f9f"),
    # ?show=publisher: whether the owner proved the card's origin (docs/publishers.md); the
    # verified badge names the origin's host (its message is made per agent).
    "publisher": BadgeState("publisher", "verified publisher", "#44cc11"),
    "publisher-not-verified": BadgeState(
        "publisher-not-verified", "publisher not verified", "#9f9f9f"
    ),
}
# What ``?show=`` may ask for; anything else shows the card's state, as a badge must always
# draw something an <img> can show.
SHOW_LIVE = "live"
SHOW_PUBLISHER = "publisher"

# Advance widths of Verdana at 11 px (font units / 2048 * 11), printable ASCII.
_WIDTHS: dict[str, float] = {
    " ": 3.87, "!": 4.43, '"': 5.63, "#": 10.08, "$": 7.0, "%": 11.92, "&": 8.21, "'": 2.97,
    "(": 5.5, ")": 5.5, "*": 7.0, "+": 10.08, ",": 4.0, "-": 5.39, ".": 4.0, "/": 5.5,
    "0": 7.0, "1": 7.0, "2": 7.0, "3": 7.0, "4": 7.0, "5": 7.0, "6": 7.0, "7": 7.0, "8": 7.0,
    "9": 7.0, ":": 5.5, ";": 5.5, "<": 10.08, "=": 10.08, ">": 10.08, "?": 6.0, "@": 11.8,
    "A": 7.52, "B": 7.55, "C": 7.68, "D": 8.47, "E": 6.95, "F": 6.33, "G": 8.52, "H": 8.27,
    "I": 4.63, "J": 4.97, "K": 7.64, "L": 6.15, "M": 9.29, "N": 8.23, "O": 8.66, "P": 6.63,
    "Q": 8.66, "R": 7.64, "S": 7.52, "T": 6.74, "U": 8.16, "V": 7.52, "W": 10.87, "X": 7.55,
    "Y": 6.74, "Z": 7.55, "[": 5.5, "\\": 5.5, "]": 5.5, "^": 10.08, "_": 7.0, "`": 7.0,
    "a": 6.6, "b": 6.85, "c": 5.73, "d": 6.85, "e": 6.55, "f": 3.87, "g": 6.85, "h": 6.96,
    "i": 3.02, "j": 3.74, "k": 6.51, "l": 3.02, "m": 10.7, "n": 6.96, "o": 6.68, "p": 6.85,
    "q": 6.85, "r": 4.69, "s": 5.73, "t": 4.33, "u": 6.96, "v": 6.51, "w": 8.93, "x": 6.51,
    "y": 6.51, "z": 5.89, "{": 6.98, "|": 5.5, "}": 6.98, "~": 10.08,
}  # fmt: skip
_FALLBACK_WIDTH = 7.5  # a letter we have no figure for: about an average capital
_WIDE_WIDTH = 11.0  # East Asian wide and full-width characters take a whole em


def _char_width(char: str) -> float:
    if char in _WIDTHS:
        return _WIDTHS[char]
    if unicodedata.combining(char) or unicodedata.category(char) in ("Mn", "Me", "Cf"):
        return 0.0
    if unicodedata.east_asian_width(char) in ("W", "F"):
        return _WIDE_WIDTH
    base = unicodedata.normalize("NFD", char)[0]  # "é" is as wide as "e"
    return _WIDTHS.get(base, _FALLBACK_WIDTH)


def text_width(text: str) -> int:
    """Width in pixels of ``text`` in Verdana 11 px, rounded up to an odd number (as shields
    does, so the text centre falls on a pixel boundary)."""
    width = math.ceil(sum(_char_width(char) for char in text))
    return width if width % 2 else width + 1


def _xml_char(char: str) -> bool:
    # The XML 1.0 Char production: no C0 controls but tab/newline/CR, no surrogates, no
    # U+FFFE/U+FFFF. Anything else would make the SVG malformed even when escaped.
    code = ord(char)
    return (
        code in (0x9, 0xA, 0xD)
        or 0x20 <= code <= 0xD7FF
        or 0xE000 <= code <= 0xFFFD
        or 0x10000 <= code <= 0x10FFFF
    )


def clean_text(text: str, *, limit: int = MAX_LABEL_CHARS) -> str:
    """``text`` on one line, without characters XML cannot carry or C1 controls, capped."""
    kept = []
    for char in text:
        if not _xml_char(char) or unicodedata.category(char) == "Cc":
            char = " " if char in "\t\n\r" else ""
        kept.append(char)
    collapsed = " ".join("".join(kept).split())
    return collapsed[:limit].strip()


def label_from_query(raw: str | None) -> str:
    """The ``?label=`` value as the badge shows it; the default when absent or blank."""
    label = clean_text(raw or "")
    return label or DEFAULT_LABEL


def badge_state(agent: Agent | None) -> BadgeState:
    """The badge of an agent (None: unknown or not visible to anonymous readers).

    Order matters: a card that cannot be fetched any more is shown as unreachable whatever
    its last content said; then errors beat signatures; then the signature decides, and a
    valid card whose last live checks passed says so ("valid, live checks passed").
    """
    if agent is None:
        return STATES["unknown"]
    if agent.health in ("unreachable", "gone"):
        return STATES["unreachable"]
    if agent.latest_snapshot_id is None or agent.valid is None:
        return STATES["pending"]
    if not agent.valid:
        return STATES["invalid"]
    if agent.signature_status == "invalid":
        return STATES["bad-signature"]
    live = agent.live_outcome == "pass"
    if agent.signature_status == "verified":
        return STATES["verified-live" if live else "verified"]
    if live:  # what the endpoint did says more than a missing signature
        return STATES["valid-live"]
    if agent.signature_status == "unsigned":
        return STATES["unsigned"]
    # Signed, but not to a key bound to the agent (unbound-key), the key could not be fetched
    # (key-unavailable), or not checked yet: the card is valid and nothing more is claimed.
    return STATES["valid"]


def live_badge_state(agent: Agent | None) -> BadgeState:
    """The live checks' badge: pass, fail, or not checked (never checked, or nothing could be:
    no interface the registry can reach, or a card that requires credentials)."""
    if agent is None:
        return STATES["unknown"]
    if agent.live_outcome in ("pass", "fail"):
        return STATES[f"live-{agent.live_outcome}"]
    return STATES["live-not-checked"]


def publisher_badge_state(agent: Agent | None) -> BadgeState:
    """ "verified publisher: <host>" where the owner proved the card's origin, else "publisher
    not verified"."""
    if agent is None:
        return STATES["unknown"]
    origin = agent.publisher_origin
    if not origin:
        return STATES["publisher-not-verified"]
    name = clean_text(origin.split("://", 1)[-1], limit=MAX_LABEL_CHARS)
    return replace(STATES["publisher"], message=f"verified publisher: {name}")


def shown_state(agent: Agent | None, show: str | None) -> BadgeState:
    """The badge ``?show=`` asks for: ``live`` the live checks, ``publisher`` the publisher,
    anything else the card."""
    if show == SHOW_LIVE:
        return live_badge_state(agent)
    if show == SHOW_PUBLISHER:
        return publisher_badge_state(agent)
    return badge_state(agent)


def _text_colours(background: str) -> tuple[str, str]:
    """(text, shadow) colours readable on ``background`` (#rgb or #rrggbb)."""
    digits = background.lstrip("#")
    if len(digits) == 3:
        digits = "".join(d * 2 for d in digits)
    red, green, blue = (int(digits[i : i + 2], 16) for i in (0, 2, 4))
    brightness = (red * 299 + green * 587 + blue * 114) / 255000
    return ("#fff", "#010101") if brightness <= 0.69 else ("#333", "#ccc")


def _text(x_centre: float, width: int, text: str, colour: str, shadow: str) -> str:
    # Drawn at 10x and scaled down, as shields does, for sub-pixel placement.
    x, length, body = round(x_centre * 10), width * 10, escape(text)
    return (
        f'<text aria-hidden="true" x="{x}" y="150" fill="{shadow}" fill-opacity=".3" '
        f'transform="scale(.1)" textLength="{length}">{body}</text>'
        f'<text x="{x}" y="140" fill="{colour}" transform="scale(.1)" '
        f'textLength="{length}">{body}</text>'
    )


@lru_cache(maxsize=512)
def render_badge(label: str, state_key: str | BadgeState) -> str:
    """The SVG of one badge. ``label`` must already be cleaned (:func:`label_from_query`)."""
    state = state_key if isinstance(state_key, BadgeState) else STATES[state_key]
    label = clean_text(label) or DEFAULT_LABEL
    label_text, message_text = text_width(label), text_width(state.message)
    left, right = label_text + 2 * _PADDING, message_text + 2 * _PADDING
    total = left + right
    title = f"{label}: {state.message}"
    label_fg, label_shadow = _text_colours(_LABEL_COLOUR)
    message_fg, message_shadow = _text_colours(state.colour)
    return "".join(
        [
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{total}" height="{_HEIGHT}" '
            f'role="img" aria-label={quoteattr(title)}>',
            f"<title>{escape(title)}</title>",
            '<linearGradient id="shine" x2="0" y2="100%">'
            '<stop offset="0" stop-color="#bbb" stop-opacity=".1"/>'
            '<stop offset="1" stop-opacity=".1"/></linearGradient>',
            f'<clipPath id="round"><rect width="{total}" height="{_HEIGHT}" rx="3" fill="#fff"/>'
            "</clipPath>",
            '<g clip-path="url(#round)">',
            f'<rect width="{left}" height="{_HEIGHT}" fill="{_LABEL_COLOUR}"/>',
            f'<rect x="{left}" width="{right}" height="{_HEIGHT}" fill="{state.colour}"/>',
            f'<rect width="{total}" height="{_HEIGHT}" fill="url(#shine)"/>',
            "</g>",
            '<g text-anchor="middle" font-family="Verdana,Geneva,DejaVu Sans,sans-serif" '
            'text-rendering="geometricPrecision" font-size="110">',
            _text(left / 2, label_text, label, label_fg, label_shadow),
            _text(left + right / 2, message_text, state.message, message_fg, message_shadow),
            "</g></svg>",
        ]
    )


# --- embedding --------------------------------------------------------------------------------


def badge_url(agent: Agent, base_url: str) -> str:
    return f"{base_url.rstrip('/')}/badges/{agent.pk}.svg"


def _markdown_text(text: str) -> str:
    # Backslash-escape what could end the alt text or start other inline markup.
    return "".join(f"\\{c}" if c in "\\[]()*_`<>!#|~&" else c for c in text)


def _markdown_url(url: str) -> str:
    return url.replace("(", "%28").replace(")", "%29").replace(" ", "%20")


def _agent_page_path(agent: Agent) -> str:
    try:
        return reverse("catalogue-agent", args=[agent.pk])
    except NoReverseMatch:  # no catalogue in this deployment: link to the API instead
        return f"/api/v1/agents/{agent.pk}"


def embed_snippets(agent: Agent, base_url: str, *, link_url: str | None = None) -> dict[str, str]:
    """Ready-to-paste snippets showing the agent's badge, linked to ``link_url`` (by default
    the agent's catalogue page). Keys: ``markdown``, ``html``, ``rst``. The agent's name is
    escaped for each syntax, so a hostile name cannot inject markup into a README."""
    base = base_url.rstrip("/")
    image = badge_url(agent, base)
    link = link_url or f"{base}{_agent_page_path(agent)}"
    name = clean_text(agent.name or "", limit=200)
    alt = f"A2A status of {name}" if name else "A2A status"
    html_alt, html_image, html_link = quoteattr(alt), quoteattr(image), quoteattr(link)
    return {
        "markdown": f"[![{_markdown_text(alt)}]({_markdown_url(image)})]({_markdown_url(link)})",
        "html": f"<a href={html_link}><img src={html_image} alt={html_alt}></a>",
        "rst": "\n".join(
            [
                f".. image:: {image}",
                f"   :alt: {alt}",  # a directive option: plain text, one line
                f"   :target: {link}",
            ]
        ),
    }
