"""Tokens an account makes for itself: issue, list, revoke, and find the one a request carries.

A token is ``a2ar_`` followed by 43 characters of ``secrets.token_urlsafe(32)`` (256 random
bits). It is shown once, when it is made; the database keeps only its SHA-256 digest (hex) and
its first :data:`SHOWN` characters (``prefix``), so the owner can tell their tokens apart and a
leaked database gives no usable token. The recognisable start lets secret scanners find a
token pasted where it should not be, and lets the API tell it from an operator's key
(``manage.py issue_token``), which stays as it is.

Finding a token is one indexed lookup by digest: the value compared in the database is a hash
of the presented secret, so the time the lookup takes says nothing about any stored token; the
digest is then compared again with :func:`hmac.compare_digest`. ``last_used_at`` is written at
most once a minute per token (:data:`LAST_USED_EVERY`), not on every request.

Scopes (docs/publishers.md, "2. Tokens"): ``read`` reads only; ``agent`` may change one agent
and read everything else; ``publish`` may do whatever its account may. The rules a request is
held to are in :func:`scope_refusal`; publishers/auth.py applies them to every API request.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db.models import Q, QuerySet
from django.utils import timezone

from cards import moderation
from cards.models import Agent
from publishers.models import PublisherToken

PREFIX = "a2ar_"
SHOWN = 12  # characters of the token kept in clear: "a2ar_" and 7 random ones
LAST_USED_EVERY = timedelta(minutes=1)
MAX_ACTIVE = 100  # live tokens (neither revoked nor expired) per account
MAX_DAYS = 3650  # the longest expiry one can ask for in days
NAME_MAX = 100
SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
# API routes that take a POST but change nothing (they check what they are sent): anyone may
# call them, so a read token may too.
READ_ONLY_POSTS = frozenset(
    {"validate", "schema-match", "agent-check-message", "agent-validate-payload"}
)

Scope = PublisherToken.Scope


class Refused(Exception):
    """A token was presented and cannot be used (unknown, expired, revoked): the reason."""


class Invalid(Exception):
    """A request to make a token that cannot be granted; ``field`` names the offending part."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


class TooMany(Exception):
    """The account holds as many live tokens as it may."""


class NoSuchAgent(Exception):
    """The agent named for a token with scope agent is none the account manages."""


@dataclass(frozen=True)
class Issued:
    """A token just made: the row, and the secret, which is never available again."""

    token: PublisherToken
    secret: str


def digest_of(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def is_ours(secret: str) -> bool:
    """Whether ``secret`` is spelled like a token of this module (not an operator's key)."""
    return secret.startswith(PREFIX)


def state(token: PublisherToken, now: datetime | None = None) -> str:
    """``active``, ``expired`` or ``revoked``."""
    if token.revoked_at is not None:
        return "revoked"
    if token.expires_at is not None and token.expires_at <= (now or timezone.now()):
        return "expired"
    return "active"


def of_account(account: Any) -> QuerySet[PublisherToken]:
    """The account's tokens, newest first (revoked and expired ones too)."""
    return PublisherToken.objects.filter(account=account).order_by("-created_at", "-id")


def live(account: Any, now: datetime | None = None) -> QuerySet[PublisherToken]:
    moment = now or timezone.now()
    return of_account(account).filter(
        Q(expires_at__isnull=True) | Q(expires_at__gt=moment), revoked_at__isnull=True
    )


def one_of(account: Any, token_id: Any) -> PublisherToken | None:
    """The account's token with this id; None for another account's or an unknown one."""
    try:
        return of_account(account).filter(pk=int(token_id)).first()
    except (TypeError, ValueError):
        return None


def manageable_agents(account: Any) -> QuerySet[Agent]:
    """The agents a token of this account may be scoped to: its own, not deleted."""
    return Agent.objects.filter(submitted_by=account, deleted_at__isnull=True).order_by(
        "name", "url"
    )


def _expiry(expires_in_days: Any, now: datetime) -> datetime | None:
    if expires_in_days is None:
        return None
    if isinstance(expires_in_days, bool) or not isinstance(expires_in_days, int):
        raise Invalid("expires_in_days", "expires_in_days must be a whole number of days.")
    if not 1 <= expires_in_days <= MAX_DAYS:
        raise Invalid("expires_in_days", f"expires_in_days must be 1 to {MAX_DAYS}.")
    return now + timedelta(days=expires_in_days)


def _covers(parent: PublisherToken, scope: str, agent: Agent | None) -> bool:
    """Whether ``parent`` may do everything a token of ``scope`` (and ``agent``) could."""
    if parent.scope == Scope.PUBLISH:
        return True
    if parent.scope == Scope.READ:
        return scope == Scope.READ
    return scope == Scope.AGENT and agent is not None and agent.pk == parent.agent_id


def issue(
    account: Any,
    *,
    name: Any,
    scope: Any,
    agent_id: Any = None,
    expires_in_days: Any = None,
    by: PublisherToken | None = None,
) -> Issued:
    """Make a token for ``account``. ``by`` is the publisher token the request came with, if
    any: the new one may be neither broader nor longer-lived than it. Raises :class:`Invalid`."""
    now = timezone.now()
    if not isinstance(name, str) or not name.strip():
        raise Invalid("name", "Give the token a name (what it is for), up to 100 characters.")
    name = name.strip()
    if len(name) > NAME_MAX:
        raise Invalid("name", f"The name may be at most {NAME_MAX} characters.")
    if any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in name):
        raise Invalid("name", "The name may not hold control characters (NUL, line breaks...).")
    if scope not in Scope.values or scope == Scope.ORIGIN:  # origin: trusted publishing's own
        raise Invalid("scope", "scope must be one of: read, publish, agent.")
    agent = None
    if scope == Scope.AGENT:
        if agent_id is None:
            raise Invalid("agent", "A token with scope agent names its agent (its id).")
        key = _uuid(agent_id)
        agent = Agent.objects.filter(pk=key, deleted_at__isnull=True).first() if key else None
        if agent is None or not moderation.can_manage(account, agent):
            raise NoSuchAgent(
                "No agent this account manages has this id: a token may be scoped only to one "
                "of the account's own agents."
            )
    elif agent_id is not None:
        raise Invalid("agent", "Only a token with scope agent names an agent.")
    expiry = _expiry(expires_in_days, now)
    if by is not None:
        if not _covers(by, scope, agent):
            raise Invalid("scope", "A token cannot make a token broader than itself.")
        if by.expires_at is not None and (expiry is None or expiry > by.expires_at):
            raise Invalid(
                "expires_in_days",
                "A token cannot make a token that outlives it: this one expires at "
                f"{by.expires_at.isoformat()}.",
            )
    if live(account, now).count() >= MAX_ACTIVE:
        raise TooMany(f"An account may hold {MAX_ACTIVE} live tokens; revoke one first.")
    secret = PREFIX + secrets.token_urlsafe(32)
    token = PublisherToken.objects.create(
        account=account,
        name=name,
        prefix=secret[:SHOWN],
        digest=digest_of(secret),
        scope=scope,
        agent=agent,
        expires_at=expiry,
    )
    return Issued(token=token, secret=secret)


def _uuid(value: Any) -> uuid.UUID | None:
    try:
        return uuid.UUID(str(value))
    except ValueError:
        return None


def revoke(token: PublisherToken) -> PublisherToken:
    """Revoke ``token`` (again is a no-op: the first time stays recorded)."""
    if token.revoked_at is None:
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])
    return token


def authenticate(secret: str) -> PublisherToken:
    """The live token whose secret this is, its account loaded; raises :class:`Refused`."""
    digest = digest_of(secret)
    token = (
        PublisherToken.objects.select_related("account", "origin").filter(digest=digest).first()
        if is_ours(secret)
        else None
    )
    if token is None or not hmac.compare_digest(token.digest, digest):
        raise Refused("Unknown token: it was never issued, or it was mistyped.")
    now = timezone.now()
    if token.revoked_at is not None:
        raise Refused(f"This token ({token.prefix}…) was revoked; make a new one.")
    if token.expires_at is not None and token.expires_at <= now:
        raise Refused(
            f"This token ({token.prefix}…) expired at {token.expires_at.isoformat()}; "
            "make a new one."
        )
    if not token.account.is_active:
        raise Refused("The account of this token is disabled.")
    if token.last_used_at is None or now - token.last_used_at >= LAST_USED_EVERY:
        token.last_used_at = now
        PublisherToken.objects.filter(pk=token.pk).update(last_used_at=now)
    return token


def scope_refusal(
    token: PublisherToken, *, method: str, kwargs: dict[str, Any], route: str | None
) -> str | None:
    """Why ``token``'s scope does not cover this request (None when it does). ``kwargs`` are
    the route's (an agent's is ``pk``), ``route`` its name."""
    reads = method.upper() in SAFE_METHODS or route in READ_ONLY_POSTS
    if token.scope == Scope.PUBLISH:
        return None
    if token.scope == Scope.READ:
        if reads:
            return None
        return (
            f"This token ({token.prefix}…) has scope read: it may only read (GET, HEAD, "
            "OPTIONS). Submitting or changing agents needs a token with scope publish, or one "
            "scoped to that agent."
        )
    if str(kwargs.get("pk", "")) == str(token.agent_id) or reads:
        return None
    return (
        f"This token ({token.prefix}…) is scoped to agent {token.agent_id}: it may change that "
        "agent only (and read anything). Submitting agents and changing others needs a token "
        "with scope publish."
    )
