"""The detached payloads of one card, built lazily: a2a-sdk form first, raw form on demand.

Most signed cards verify over the a2a-sdk form, so the raw form is only built when a
signature did not verify over the first one (or when a reason has to name every form).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from cards.signatures.canonical import (
    Canonical,
    CanonicalError,
    content_digest,
    raw_form,
    sdk_form,
)

_BUILDERS: tuple[tuple[str, Callable[[dict[str, Any], bytes | None], Canonical]], ...] = (
    ("a2a-sdk", sdk_form),
    ("raw", raw_form),
)


class Payloads:
    def __init__(self, data: dict[str, Any] | None) -> None:
        self.data = data
        self._forms: list[Canonical] = []
        self._pending = 0  # index into _BUILDERS of the next form to build
        self.errors: list[str] = []  # why a form could not be built
        self.identical = False  # the raw form is the same bytes as the a2a-sdk form
        self._digest: bytes | None = None  # the memo key, computed with the first form

    def _build_next(self) -> bool:
        """Build the next form not built yet; False when none is left."""
        if self.data is None or self._pending >= len(_BUILDERS):
            return False
        name, build = _BUILDERS[self._pending]
        self._pending += 1
        if self._digest is None:
            self._digest = content_digest(self.data)
        try:
            form = build(self.data, self._digest)
        except CanonicalError as exc:
            self.errors.append(f"{name} form: {exc}")
            return True
        if all(f.payload != form.payload for f in self._forms):
            self._forms.append(form)
        else:
            self.identical = True
        return True

    def __iter__(self) -> Iterator[Canonical]:
        """Each form in turn, built only when the caller asks for the next one."""
        position = 0
        while True:
            if position < len(self._forms):
                yield self._forms[position]
                position += 1
            elif not self._build_next():
                return

    def all(self) -> list[Canonical]:
        while self._build_next():
            pass
        return self._forms

    def built(self, name: str) -> Canonical | None:
        return next((f for f in self._forms if f.form == name), None)

    def describe(self) -> str:
        """'the a2a-sdk form and the raw form (...)', for reasons."""
        names = [f"the {f.form} form" for f in self.all()]
        if self.identical and names:
            names[0] += " (the raw form is the same bytes)"
        text = " and ".join(names) if names else "no payload"
        if self.errors:
            text += f" ({'; '.join(self.errors)})"
        return text
