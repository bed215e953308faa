"""Mode rules: every input/output mode, card-wide or per skill, must be a media type."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from cards.rules.context import Run
from cards.rules.objects import dicts, items
from registry.findings import extend_pointer
from registry.mediatypes import MediaTypeError, is_legacy_mode_word, parse_media_type


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
                if is_legacy_mode_word(mode):
                    message = f"{mode!r} is a legacy mode word, not a media type"
                    run.report.warning("mode.legacy-word", where, message)
                else:
                    run.report.error("mode.invalid", where, f"{mode!r} is not a media type: {exc}")
