"""Media types (RFC 9110 section 8.3.1) as they appear in card input/output modes.

Modes are compared and indexed by their canonical form, so `application/json; schema=X`,
`application/json;schema="X"` and `Application/JSON;schema=X` are the same mode
(`application/json;schema=X`, the form seed 000 uses for named schemas).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

# RFC 9110 section 5.6.2: tchar.
TOKEN_CHARS = frozenset(
    "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
)
_OWS = " \t"

# Bare words older cards use instead of media types: v0.1 defaulted the modes to ["text"],
# and the seed 004 schema reference lists text, file, image, audio, video and data.
LEGACY_MODE_WORDS = frozenset({"text", "file", "data", "image", "audio", "video"})

# Parameters whose values are case-insensitive by definition (RFC 9110 section 8.3.2).
_CASE_INSENSITIVE_VALUES = frozenset({"charset"})


class MediaTypeError(ValueError):
    """The text is not a media type."""


@dataclass(frozen=True)
class MediaType:
    type: str
    subtype: str
    params: tuple[tuple[str, str], ...]

    @property
    def essence(self) -> str:
        return f"{self.type}/{self.subtype}"

    @property
    def canonical(self) -> str:
        rendered = "".join(f";{name}={_render_value(value)}" for name, value in self.params)
        return self.essence + rendered

    @property
    def schema(self) -> str | None:
        return self.param("schema")

    def param(self, name: str) -> str | None:
        wanted = name.lower()
        for key, value in self.params:
            if key == wanted:
                return value
        return None

    def __str__(self) -> str:
        return self.canonical


def is_legacy_mode_word(text: str) -> bool:
    return text.strip().lower() in LEGACY_MODE_WORDS


def _is_token(text: str) -> bool:
    return bool(text) and all(char in TOKEN_CHARS for char in text)


def _render_value(value: str) -> str:
    if _is_token(value):
        return value
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'


def _is_qdtext(char: str) -> bool:
    # HTAB / SP / %x21 / %x23-5B / %x5D-7E / obs-text; obs-text is read as any non-ASCII
    # character because we parse decoded text, not octets.
    code = ord(char)
    return (
        char in "\t "
        or code == 0x21
        or 0x23 <= code <= 0x5B
        or 0x5D <= code <= 0x7E
        or code >= 0x80
    )


def _is_quotable(char: str) -> bool:
    # quoted-pair = "\" ( HTAB / SP / VCHAR / obs-text )
    code = ord(char)
    return char in "\t " or 0x21 <= code <= 0x7E or code >= 0x80


class _Reader:
    """Cursor over the text; every method either consumes what it expects or raises."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def at_end(self) -> bool:
        return self.pos >= len(self.text)

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def skip_ows(self) -> None:
        while self.peek() and self.peek() in _OWS:
            self.pos += 1

    def token(self, what: str) -> str:
        start = self.pos
        while self.peek() and self.peek() in TOKEN_CHARS:
            self.pos += 1
        if self.pos == start:
            raise MediaTypeError(f"expected {what} at position {start} in {self.text!r}")
        return self.text[start : self.pos]

    def quoted_string(self) -> str:
        self.pos += 1  # the opening DQUOTE
        chars: list[str] = []
        while True:
            char = self.peek()
            if not char:
                raise MediaTypeError(f"unterminated quoted string in {self.text!r}")
            self.pos += 1
            if char == '"':
                return "".join(chars)
            if char == "\\":
                escaped = self.peek()
                if not escaped or not _is_quotable(escaped):
                    raise MediaTypeError(f"bad escape in quoted string in {self.text!r}")
                self.pos += 1
                chars.append(escaped)
            elif _is_qdtext(char):
                chars.append(char)
            else:
                raise MediaTypeError(f"character {char!r} not allowed in quoted string")

    def expect(self, char: str) -> None:
        if self.peek() != char:
            found = repr(self.peek()) if self.peek() else "end of text"
            raise MediaTypeError(f"expected {char!r} at position {self.pos}, found {found}")
        self.pos += 1


def _parse_params(reader: _Reader) -> tuple[tuple[str, str], ...]:
    params: dict[str, str] = {}
    while True:
        reader.skip_ows()
        if reader.at_end():
            break
        reader.expect(";")
        reader.skip_ows()
        if reader.at_end() or reader.peek() == ";":
            continue  # RFC 9110 allows empty parameters ("text/plain;;charset=utf-8")
        name = reader.token("parameter name").lower()
        # Whitespace around "=" is not in RFC 9110, but cards contain it and it is unambiguous.
        reader.skip_ows()
        reader.expect("=")
        reader.skip_ows()
        value = reader.quoted_string() if reader.peek() == '"' else reader.token("parameter value")
        if name in _CASE_INSENSITIVE_VALUES:
            value = value.lower()
        if name in params:
            # Two values for one name have no agreed meaning; refusing is safer than guessing.
            raise MediaTypeError(f"parameter {name!r} given twice")
        params[name] = value
    return tuple(sorted(params.items()))


def parse_media_type(text: str) -> MediaType:
    """Parse one media type; raise MediaTypeError for anything else, including bare words.

    Cards repeat a handful of media types (each skill's modes, the defaults, every crawl), so
    results are memoised: a MediaType is immutable and errors are raised again from the memo."""
    if not isinstance(text, str):
        raise MediaTypeError(f"a media type must be a string, not {type(text).__name__}")
    outcome = _parsed(text) if len(text) <= _MEMO_MAX_LENGTH else _parse_outcome(text)
    if isinstance(outcome, MediaTypeError):
        raise MediaTypeError(str(outcome))
    return outcome


def schema_json_type(text: Any) -> MediaType | None:
    """``text`` parsed when it is ``application/json`` naming a schema (``;schema=X``), else
    None: what a message part's media type must be for its data to be checked or routed."""
    if not isinstance(text, str):
        return None
    try:
        media = parse_media_type(text)
    except MediaTypeError:
        return None
    return media if media.essence == "application/json" and media.schema is not None else None


_MEMO_MAX_LENGTH = 512


def _parse_outcome(text: str) -> MediaType | MediaTypeError:
    try:
        return _parse_media_type(text)
    except MediaTypeError as exc:
        return exc


_parsed = lru_cache(maxsize=8192)(_parse_outcome)


def _parse_media_type(text: str) -> MediaType:
    reader = _Reader(text.strip(_OWS))
    if reader.at_end():
        raise MediaTypeError("empty media type")
    if is_legacy_mode_word(reader.text):
        raise MediaTypeError(f"{reader.text!r} is a legacy mode word, not a media type")
    if "/" not in reader.text:
        raise MediaTypeError(f"{reader.text!r} has no '/'; a media type is type/subtype")
    type_ = reader.token("type").lower()
    reader.expect("/")
    subtype = reader.token("subtype").lower()
    params = _parse_params(reader)
    return MediaType(type=type_, subtype=subtype, params=params)


def schema_modes(modes: Iterable[object] | None) -> list[tuple[str, str]]:
    """(canonical media type, schema name) of each ``application/json;schema=X`` among
    ``modes`` (seed 000); what does not parse is skipped."""
    out = []
    for mode in modes or []:
        try:
            parsed = parse_media_type(str(mode))
        except MediaTypeError:
            continue
        if parsed.essence == "application/json" and parsed.schema:
            out.append((parsed.canonical, parsed.schema))
    return out
