"""Claiming, proving, re-checking and removing origins: every change audited (issue 44 §3).

* :func:`claim` makes (or finds) the account's row for an origin, with its own challenge.
* :func:`verify` runs one method now. Success makes the row verified (a row of another account
  that held the origin verified is superseded) and hands it to ``ownership.origin_verified``;
  a failure is audited with what was found and what was expected, the state left as it was.
* :func:`recheck` runs again the method that proved a verified row (for ``jwks``: the signing
  key is still published). ``REGISTRY_ORIGIN_RECHECK_FAILURES`` failures in a row, transient
  ones included, make the proof lapse and ``ownership.origin_lost`` is told.
* :func:`remove` deletes the account's row (its events stay, with the origin's text).

The network is never used inside a transaction: a method looks first, then the row is locked
and changed only if it is still what was checked.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from cards.url_form import InvalidURL
from publishers import ownership
from publishers.models import Origin, OriginEvent
from publishers.origin_form import normal_origin
from publishers.proofs import Outcome, dns_txt, failed, http_file, jwks_key
from registry.http import FetchError, FetchPolicy, check_url

METHODS = tuple(Origin.Method.values)
Action = OriginEvent.Action
State = Origin.State
# How long the sweep's claim keeps a due origin out of the next sweeps (its re-check queued).
RECHECK_LEASE = timedelta(minutes=10)
TRANSIENT_NOTE = " (a transient failure; counted like any other)"


class OriginRefused(ValueError):
    """An origin that cannot be claimed; ``str()`` says why."""


@dataclass
class VerifyResult:
    origin: Origin
    verified: bool
    method: str
    error: str = ""
    transient: bool = False

    def as_dict(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "verified": self.verified,
            "state": self.origin.state,
            "method": self.method,
        }
        if self.error:
            body["error"] = self.error
            body["transient"] = self.transient
        return body


def audit(
    origin: Origin | None,
    action: str,
    *,
    origin_text: str = "",
    account_id: int | None = None,
    method: str = "",
    detail: dict[str, Any] | None = None,
) -> OriginEvent:
    return OriginEvent.objects.create(
        origin=origin,
        origin_text=origin_text or (origin.origin if origin is not None else ""),
        account_id=account_id if account_id is not None else getattr(origin, "account_id", None),
        action=action,
        method=method,
        detail=detail or {},
    )


def recheck_interval() -> timedelta:
    return timedelta(hours=float(settings.REGISTRY_ORIGIN_RECHECK_HOURS))


# --- Claiming -------------------------------------------------------------------------------


def checked_origin(text: Any) -> str:
    """``text`` as an origin in normal form the registry may fetch; OriginRefused otherwise."""
    try:
        origin = normal_origin(text)
    except InvalidURL as exc:
        raise OriginRefused(str(exc)) from None
    try:
        check_url(origin + "/", FetchPolicy.from_settings())
    except FetchError as err:
        raise OriginRefused(f"the registry cannot reach {origin}: {err.reason}") from None
    return origin


def claimed(account: Any, origin_text: Any) -> tuple[Origin, bool]:
    """(the account's row for the origin, whether it was made now)."""
    origin = checked_origin(origin_text)
    found = Origin.objects.filter(account=account, origin=origin).first()
    if found is not None:
        return found, False
    limit = settings.REGISTRY_ORIGINS_PER_ACCOUNT
    if Origin.objects.filter(account=account).count() >= limit:
        raise OriginRefused(f"an account may claim at most {limit} origins; remove one first")
    try:
        with transaction.atomic():
            row = Origin.objects.create(account=account, origin=origin)
            audit(row, Action.CLAIMED)
    except IntegrityError:  # the same account, at the same moment
        return Origin.objects.get(account=account, origin=origin), False
    return row, True


def claim(account: Any, origin_text: Any) -> Origin:
    """The account's row for the origin (made, with a new challenge, when it has none)."""
    return claimed(account, origin_text)[0]


def instructions(origin: Origin) -> dict[str, Any]:
    """The exact values to publish for each method (dns: None for an IP-literal host)."""
    return {
        "http": http_file.instructions(origin),
        "dns": dns_txt.instructions(origin),
        "jwks": jwks_key.instructions(origin),
    }


# --- Proving --------------------------------------------------------------------------------


def look(origin: Origin, method: str, **params: Any) -> Outcome:
    """Run one method now, without changing anything."""
    if method == Origin.Method.HTTP:
        return http_file.check(origin)
    if method == Origin.Method.DNS:
        return dns_txt.check(origin)
    if method == Origin.Method.JWKS:
        return jwks_key.check(origin, params.get("jws"))
    return failed(f"unknown method {str(method)[:20]!r}; use one of {', '.join(METHODS)}")


def verify(origin: Origin, method: str, **params: Any) -> VerifyResult:
    """Prove ``origin`` by ``method`` now (``jws`` for the jwks method)."""
    outcome = look(origin, method, **params)
    now = timezone.now()
    with transaction.atomic():
        rows = list(Origin.objects.select_for_update().filter(origin=origin.origin).order_by("pk"))
        row = next((r for r in rows if r.pk == origin.pk), None)
        if row is None:
            return VerifyResult(origin, False, method, "the claim was removed meanwhile")
        if not outcome.ok:
            if row.state != State.VERIFIED:  # a verified row is the re-checks' business
                row.last_error, row.checked_at = outcome.reason, now
                row.save(update_fields=["last_error", "checked_at"])
            failure = {"error": outcome.reason, "transient": outcome.transient}
            audit(row, Action.FAILED, method=method, detail=failure)
            return VerifyResult(row, False, method, outcome.reason, outcome.transient)
        previous = next((r for r in rows if r.state == State.VERIFIED and r.pk != row.pk), None)
        if previous is not None:
            previous.state, previous.next_check_at = State.SUPERSEDED, None
            previous.save(update_fields=["state", "next_check_at"])
            by = {"by_account": row.account_id}
            audit(previous, Action.SUPERSEDED, method=previous.method, detail=by)
        became = row.state != State.VERIFIED
        row.state, row.method, row.key_id = State.VERIFIED, method, outcome.key_id
        row.verified_at = row.checked_at = now
        row.next_check_at = now + recheck_interval()
        row.failures, row.last_error = 0, ""
        row.save()
        proof: dict[str, Any] = {"key_id": outcome.key_id} if outcome.key_id else {}
        if previous is not None:
            proof["superseded_account"] = previous.account_id
        audit(row, Action.VERIFIED, method=method, detail=proof)
        if became:
            ownership.origin_verified(row)
    return VerifyResult(row, True, method)


# --- Re-checking ----------------------------------------------------------------------------


def look_again(origin: Origin) -> Outcome:
    """The method that proved ``origin``, again (jwks: its key is still published)."""
    if origin.method == Origin.Method.JWKS:
        if not origin.key_id:
            return failed("the proof names no key to look for")
        return jwks_key.recheck(origin)
    return look(origin, origin.method)


def recheck(origin: Origin) -> Outcome | None:
    """Re-check a verified origin; None when it is no longer verified (nothing done)."""
    if origin.state != State.VERIFIED:
        return None
    outcome = look_again(origin)
    now = timezone.now()
    with transaction.atomic():
        row = Origin.objects.select_for_update().filter(pk=origin.pk).first()
        if row is None or row.state != State.VERIFIED or row.method != origin.method:
            return None  # removed, superseded or proven again meanwhile
        row.checked_at, row.next_check_at = now, now + recheck_interval()
        if outcome.ok:
            row.failures, row.last_error = 0, ""
            row.save(update_fields=["checked_at", "next_check_at", "failures", "last_error"])
            audit(row, Action.RECHECKED, method=row.method)
            return outcome
        row.failures += 1
        row.last_error = outcome.reason + (TRANSIENT_NOTE if outcome.transient else "")
        limit = settings.REGISTRY_ORIGIN_RECHECK_FAILURES
        failure = {
            "error": outcome.reason,
            "transient": outcome.transient,
            "recheck": True,
            "failures": row.failures,
            "limit": limit,
        }
        audit(row, Action.FAILED, method=row.method, detail=failure)
        lapses = row.failures >= limit
        if lapses:
            row.state, row.next_check_at = State.LAPSED, None
        row.save(update_fields=["checked_at", "next_check_at", "failures", "last_error", "state"])
        if lapses:
            audit(row, Action.LAPSED, method=row.method, detail={"failures": row.failures})
            ownership.origin_lost(row.origin)
    return outcome


def claim_due(limit: int) -> list[int]:
    """Ids of verified origins due for a re-check, at most ``limit``, oldest due first; each
    is held out of the next sweeps for RECHECK_LEASE (its re-check moves it on)."""
    now = timezone.now()
    with transaction.atomic():
        due = list(
            Origin.objects.select_for_update(skip_locked=True)
            .filter(state=State.VERIFIED, next_check_at__lte=now)
            .order_by("next_check_at", "pk")
            .values_list("pk", flat=True)[:limit]
        )
        Origin.objects.filter(pk__in=due).update(next_check_at=now + RECHECK_LEASE)
    return due


# --- Removing -------------------------------------------------------------------------------


def remove(origin: Origin) -> None:
    """Delete the account's claim; a verified one is lost for the origin."""
    with transaction.atomic():
        row = Origin.objects.select_for_update().filter(pk=origin.pk).first()
        if row is None:
            return
        was_verified = row.state == State.VERIFIED
        audit(row, Action.REMOVED, method=row.method, detail={"state": row.state})
        text = row.origin
        row.delete()
        if was_verified:
            ownership.origin_lost(text)
