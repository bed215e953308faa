"""A request rate such as ``600/minute``, parsed (no Django here: settings use it)."""

from __future__ import annotations

from dataclasses import dataclass

_PERIODS = {"second": 1, "minute": 60, "hour": 3600, "day": 86400}


@dataclass(frozen=True)
class Rate:
    requests: int
    seconds: int

    @classmethod
    def parse(cls, text: str) -> Rate | None:
        """``"600/minute"`` (also ``s``, ``m``, ``h``, ``d``); empty or ``off`` for no limit."""
        text = text.strip()
        if not text or text.lower() == "off":
            return None
        count, _, period = text.partition("/")
        word = period.strip().lower()
        seconds = next((v for k, v in _PERIODS.items() if k.startswith(word) and word), None)
        if not count.strip().isdigit() or seconds is None:
            raise ValueError(f"not a rate: {text!r} (expected like 600/minute)")
        return cls(int(count), seconds)
