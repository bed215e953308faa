"""From per-signature results to the card's status, form, coverage and thumbprints."""

from __future__ import annotations

from typing import Any

from cards.signatures.canonical import coverage
from cards.signatures.payloads import Payloads
from cards.signatures.report import SignatureReport, SignatureResult

# When several signatures verify, report the form that covers the most.
_FORM_PREFERENCE = {"envelope": 0, "raw": 1, "a2a-sdk": 2}


def _label(result: SignatureResult) -> str:
    return "the envelope signature" if result.index is None else f"signature #{result.index}"


def _describe_key(result: SignatureResult) -> str:
    where = "the pinned keys" if result.key_source == "pinned" else result.key_url
    return f"key {result.kid!r} from {where} ({result.key_source})"


def _refuse_ambiguous(results: list[SignatureResult]) -> None:
    for result in results:
        if result.result in ("verified", "unbound-key"):
            result.reason = (
                f"the signature checks out ({result.result}), but the document repeats JSON "
                "keys, so what it signs is ambiguous; it is not accepted"
            )
            result.result = "refused"


def _first_failure(results: list[SignatureResult]) -> str:
    for result in results:
        if result.reason:
            return f"{_label(result)}: {result.reason}"
    return ""


def summarise(
    data: dict[str, Any] | None,
    payloads: Payloads,
    results: list[SignatureResult],
    problem: str,
    duplicate_keys: bool,
) -> SignatureReport:
    report = SignatureReport(signatures=results)
    if duplicate_keys:
        _refuse_ambiguous(results)
    bound = [r for r in results if r.result == "verified"]
    unbound = [r for r in results if r.result == "unbound-key"]
    if bound or unbound:
        winners = bound or unbound
        best = min(winners, key=lambda r: _FORM_PREFERENCE.get(r.form or "", 9))
        report.status = "verified" if bound else "unbound-key"
        report.form = best.form
        report.thumbprints = list(dict.fromkeys(r.thumbprint for r in bound if r.thumbprint))
        keys: frozenset[str] = frozenset()
        built = payloads.built("a2a-sdk") if best.form == "a2a-sdk" else None
        if built is not None:
            keys = built.keys
        report.covered_fields, report.uncovered_fields = coverage(data, best.form, keys)
        if bound:
            report.reason = f"{_label(best)} verifies with {_describe_key(best)}"
        else:
            report.reason = (
                f"{_label(best)} verifies only with a key not bound to the card: {best.reason}"
            )
        return report
    report.covered_fields, report.uncovered_fields = coverage(data, None, frozenset())
    # A key that could not be fetched says nothing about the signature: key-unavailable, never
    # invalid (issue 3). Only a transient failure (5xx, timeout) is worth an early retry.
    unavailable = [r for r in results if r.result == "key-unavailable"]
    if unavailable:
        first = next((r for r in unavailable if r.transient), unavailable[0])
        report.status = "key-unavailable"
        report.reason = f"{_label(first)}: {first.reason}" + (
            "; this may be temporary and is retried on the next crawl" if first.transient else ""
        )
    elif results or problem:
        report.status = "invalid"
        detail = problem or _first_failure(results)
        report.reason = "no signature verifies" + (f" ({detail})" if detail else "")
    else:
        report.status = "unsigned"
        report.reason = "the card has no signatures"
    return report
