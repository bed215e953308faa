"""``verify_document``: check every signature of a served card and decide its status.

For each signature (the ``signatures[]`` entries, and the JWS envelope when the document was
one): decode and police the protected header, then look the ``kid`` up in the sources bound
to the card (pinned keys; the same-origin ``jku`` or else ``{origin}/.well-known/jwks.json``)
and verify over the a2a-sdk form, then the raw form (envelope: the attached payload). Only
when no bound key verifies is a foreign ``jku`` fetched, to tell ``unbound-key`` from
``invalid``. Card status: verified > unbound-key > key-unavailable (transient) > invalid.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from cards.signatures.binding import classify_jku, origin_of
from cards.signatures.canonical import Canonical
from cards.signatures.entries import Entry, check_all, document_entries
from cards.signatures.jose import Header, decode_signature, header_problem, parse_protected
from cards.signatures.jwks import JwksLookup, JwksSource
from cards.signatures.keys import JwksError, KeySet, PublicKey, parse_jwks
from cards.signatures.payloads import Payloads
from cards.signatures.report import KeySource, SignatureReport, SignatureResult
from cards.signatures.summary import summarise

logger = logging.getLogger(__name__)

# A card is attacker-controlled and each distinct jku is a fetch: bound them per document.
MAX_JWKS_URLS = 4
# Outcomes of one key source for one signature, strongest first when nothing verified.
_ORDER = ("unavailable-transient", "failed", "refused", "unavailable", "missing")
# The keys curators pinned for an agent (a JWKS document), or a function that reads them.
PinnedJwks = dict[str, Any] | Callable[[], dict[str, Any] | None] | None


@dataclass
class _Attempt:
    source: KeySource
    url: str | None
    outcome: str  # "verified" or one of _ORDER
    reason: str = ""
    key: PublicKey | None = None
    form: Canonical | None = None


class _Verifier:
    def __init__(
        self,
        data: Any,
        envelope: dict[str, Any] | None,
        card_url: str,
        pinned_jwks: PinnedJwks,
        source: JwksSource,
    ) -> None:
        self.data = data if isinstance(data, dict) else None
        self.envelope = envelope
        self.origin = origin_of(card_url)
        self.source = source
        self.lookups: dict[str, JwksLookup] = {}
        self.refetched: set[str] = set()  # at most one refetch per URL and document
        self._pinned_jwks = pinned_jwks
        self._pinned: JwksLookup | None = None
        self._pinned_read = False
        self.payloads = Payloads(self.data)

    @property
    def pinned(self) -> JwksLookup | None:
        """The keys curators pinned, read on first use: only a signature needs them."""
        if not self._pinned_read:
            self._pinned_read = True
            given = self._pinned_jwks
            jwks = given() if callable(given) else given
            if jwks is not None:
                try:
                    self._pinned = JwksLookup("", keyset=parse_jwks(jwks))
                except JwksError as exc:
                    self._pinned = JwksLookup("", error=f"the pinned JWKS is unusable: {exc}")
        return self._pinned

    # --- payloads ---------------------------------------------------------------------------

    def _verify_forms(
        self, entry: Entry, key: PublicKey, alg: str, protected: str, sig: bytes
    ) -> Canonical | None:
        forms = [entry.payload] if entry.payload is not None else self.payloads
        for form in forms:
            if key.verify(alg, f"{protected}.{form.encoded}".encode("ascii"), sig):
                return form
        return None

    # --- keys -------------------------------------------------------------------------------

    def _lookup(self, source: KeySource, url: str | None) -> JwksLookup:
        if source == "pinned":
            assert self.pinned is not None
            return self.pinned
        assert url is not None
        if url not in self.lookups:
            if len(self.lookups) >= MAX_JWKS_URLS:
                reason = f"not fetched: the card names more than {MAX_JWKS_URLS} key URLs"
                return JwksLookup(url, error=f"the JWKS at {url} was {reason}")
            self.lookups[url] = self.source.get(url)
        return self.lookups[url]

    def _try_keyset(
        self, keyset: KeySet, att: _Attempt, entry: Entry, header: Header, sig: bytes
    ) -> _Attempt:
        kid, alg = header.kid or "", header.alg or ""
        where = "the pinned keys" if att.source == "pinned" else att.url
        candidates = keyset.find(kid)
        if not candidates:
            rejected = keyset.rejections_for(kid)
            if rejected:
                return _Attempt(att.source, att.url, "refused", f"{rejected[0]} ({where})")
            reason = f"no key with kid {kid[:80]!r} in {where} ({keyset.summary()})"
            return _Attempt(att.source, att.url, "missing", reason)
        best: _Attempt | None = None
        for key in candidates:
            refusal = key.refusal_for(alg)
            if refusal:
                best = best or _Attempt(att.source, att.url, "refused", f"{refusal} ({where})", key)
                continue
            if len(sig) != key.size:
                made = f"{alg} with {key.describe()} makes {key.size}"
                reason = f"the signature is {len(sig)} bytes; {made}"
                failed = _Attempt(att.source, att.url, "failed", reason, key)
            elif form := self._verify_forms(entry, key, alg, entry.value["protected"], sig):
                return _Attempt(att.source, att.url, "verified", "", key, form)
            else:
                tried = "the attached payload" if entry.payload else self.payloads.describe()
                reason = f"the signature does not match key {kid[:80]!r} from {where} over {tried}"
                failed = _Attempt(att.source, att.url, "failed", reason, key)
            if best is None or best.outcome == "refused":
                best = failed
        assert best is not None
        return best

    def attempt(
        self, source: KeySource, url: str | None, entry: Entry, header: Header, sig: bytes
    ) -> _Attempt:
        lookup = self._lookup(source, url)
        base = _Attempt(source, url, "missing")
        if lookup.keyset is None:
            outcome = "unavailable-transient" if lookup.transient else "unavailable"
            return _Attempt(source, url, outcome, lookup.error)
        att = self._try_keyset(lookup.keyset, base, entry, header, sig)
        refetchable = url is not None and url not in self.refetched
        if att.outcome in ("missing", "failed") and lookup.cached and refetchable:
            # Maybe the keys were rotated since the set was cached: look once more. A failed
            # refetch leaves the cached answer standing.
            assert url is not None
            self.refetched.add(url)
            again = self.source.refetch(url, header.kid or "")
            if again is not None and again.keyset is not None:
                self.lookups[url] = again
                return self._try_keyset(again.keyset, base, entry, header, sig)
        return att

    # --- one signature ----------------------------------------------------------------------

    def check(self, entry: Entry) -> SignatureResult:
        result = SignatureResult(index=entry.index, form=None)
        value = entry.value
        if not isinstance(value, dict):
            result.reason = "the signature entry is not a JSON object"
            return result
        header, problem = parse_protected(value.get("protected"))
        if header is None:
            result.reason = problem
            return result
        result.kid, result.alg = header.kid, header.alg
        header_issue = header_problem(header)
        if header_issue is not None:
            result.result, result.reason = header_issue  # type: ignore[assignment]
            unprotected = value.get("header")
            if (
                "kid" not in header.members
                and isinstance(unprotected, dict)
                and "kid" in unprotected
            ):
                result.reason += " (a kid in the unprotected header is not signed and is ignored)"
            return result
        sig, problem = decode_signature(value.get("signature"))
        if sig is None:
            result.reason = problem
            return result
        if entry.payload is None and next(iter(self.payloads), None) is None:
            result.reason = "the card has no canonical payload: " + "; ".join(self.payloads.errors)
            return result
        return self._resolve(result, entry, header, sig)

    def _resolve(
        self, result: SignatureResult, entry: Entry, header: Header, sig: bytes
    ) -> SignatureResult:
        notes: list[str] = []
        bound: list[tuple[KeySource, str | None]] = []
        foreign: str | None = None
        if self.pinned is not None:
            bound.append(("pinned", None))
        kind = None
        if header.jku is not None:
            kind, note = classify_jku(header.jku, self.origin, self.source.allow_http)
            if kind == "bound":
                bound.append(("jku", header.jku))
            else:
                notes.append(note)
                foreign = header.jku if kind == "foreign" else None
        if kind != "bound" and self.origin is not None:
            bound.append(("well-known", self.origin.well_known_jwks))
        if not bound:
            result.result = "key-unavailable"
            result.reason = "the card URL has no http(s) origin, so no key is bound to it"
            return result
        attempts: list[_Attempt] = []
        for source, url in bound:
            att = self.attempt(source, url, entry, header, sig)
            if att.outcome == "verified":
                return _fill(result, att, "verified", "")
            attempts.append(att)
        if foreign is not None:
            att = self.attempt("foreign-jku", foreign, entry, header, sig)
            if att.outcome == "verified":
                reason = (
                    f"it verifies only with a key from {foreign[:200]}, which is not on the "
                    f"card's origin; " + "; ".join(a.reason for a in attempts)
                )
                return _fill(result, att, "unbound-key", reason)
            attempts.append(att)
        attempts.sort(key=lambda a: (_ORDER.index(a.outcome), a.source == "foreign-jku"))
        top = attempts[0]
        outcome = {
            "unavailable-transient": "key-unavailable",
            "unavailable": "key-unavailable",
            "failed": "invalid",
            "refused": "refused",
            "missing": "invalid",
        }[top.outcome]
        reasons = list(dict.fromkeys([a.reason for a in attempts] + notes))
        _fill(result, top, outcome, "; ".join(reasons))
        result.transient = top.outcome == "unavailable-transient"
        return result


def _fill(result: SignatureResult, att: _Attempt, outcome: str, reason: str) -> SignatureResult:
    result.result = outcome  # type: ignore[assignment]
    result.reason = reason
    result.key_source = att.source
    result.key_url = att.url
    if att.key is not None:
        result.thumbprint = att.key.thumbprint
    if att.form is not None:
        result.form = att.form.form  # type: ignore[assignment]
    return result


def verify_document(
    data: Any,
    envelope: dict[str, Any] | None = None,
    card_url: str = "",
    pinned_jwks: PinnedJwks = None,
    jwks_source: JwksSource | None = None,
    *,
    findings: Iterable[Any] | None = None,
) -> SignatureReport:
    """Verify the signatures of a served card. Never raises.

    ``pinned_jwks``: the keys curators pinned for the agent, or a function that reads them
    (called only when the card has a signature to check).

    ``findings`` (optional, the parse findings): a document with duplicate JSON keys is
    ambiguous, so none of its signatures is accepted.
    """
    source = jwks_source if jwks_source is not None else JwksSource.from_settings()
    try:
        verifier = _Verifier(data, envelope, card_url, pinned_jwks, source)
        entries, problem = document_entries(verifier.data, envelope)
        results = check_all(verifier.check, entries)
        duplicate_keys = any(
            getattr(f, "code", None) == "json.duplicate-key" for f in findings or ()
        )
        return summarise(verifier.data, verifier.payloads, results, problem, duplicate_keys)
    except Exception as exc:  # noqa: BLE001 - a crawl must record, not crash
        logger.exception("signature verification failed on %s", card_url)
        return SignatureReport(status="invalid", reason=f"the signature check failed: {exc!r}")
