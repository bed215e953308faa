"""Mode rules: every input/output mode, card-wide or per skill, should be a media type.

The spec describes the modes as media types ("Defined as media types", a2a.proto; "supported
input MIME types", v0.3.0) without a MUST, and both TCK branches accept any string. So a mode
that is not a media type is one warning whatever it is: a bare word (`text`, `json`) is
`mode.legacy-word`, anything else (`text/`, `a b`) is `mode.invalid`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from cards.rules.context import Run
from cards.rules.objects import dicts, items
from registry.findings import extend_pointer
from registry.mediatypes import MediaTypeError, is_legacy_mode_word, parse_media_type

# `json`, `markdown`: a word where a media type belongs (the pre-v0.2 style of `text`).
_BARE_WORD = re.compile(r"[A-Za-z][A-Za-z0-9.+-]*")


def _mode_lists(data: dict[str, Any]) -> Iterator[tuple[Any, str]]:
    yield data.get("defaultInputModes"), "/defaultInputModes"
    yield data.get("defaultOutputModes"), "/defaultOutputModes"
    for index, skill in dicts(data.get("skills")):
        yield skill.get("inputModes"), extend_pointer("/skills", index, "inputModes")
        yield skill.get("outputModes"), extend_pointer("/skills", index, "outputModes")


def rule_modes(run: Run) -> None:
    for modes, pointer in _mode_lists(run.data):
        for index, mode in items(modes):
            if not isinstance(mode, str):
                continue  # reported as card.wrong-type
            try:
                parse_media_type(mode)
            except MediaTypeError as exc:
                where = extend_pointer(pointer, index)
                if is_legacy_mode_word(mode) or _BARE_WORD.fullmatch(mode):
                    message = f"{mode!r} is a bare word, not a media type (e.g. 'text/plain')"
                    run.report.warning("mode.legacy-word", where, message)
                else:
                    message = f"{mode!r} is not a media type: {exc}"
                    run.report.warning("mode.invalid", where, message)
