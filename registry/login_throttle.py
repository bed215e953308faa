"""Failed password logins, counted per account and per client, refuse further tries for a while.

Every password login goes through Django's ``authenticate()`` and so through
:class:`ThrottledModelBackend`: after ``REGISTRY_LOGIN_FAILURES_PER_ACCOUNT`` failures for one
username, or ``REGISTRY_LOGIN_FAILURES_PER_CLIENT`` from one client address, within
``REGISTRY_LOGIN_WINDOW_SECONDS``, no password is accepted for that username or from that
address (the right one included) until the window has passed. The counters live in the cache
(Redis when configured, so they are shared by every process); if the cache is unreachable the
check is skipped and logged rather than locking everybody out. The admin's login form says what
happened (:class:`ThrottledAdminLoginForm`).
"""

from __future__ import annotations

import hashlib
import logging
import math
import time
from typing import Any

from django.conf import settings
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.core.cache import cache
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpRequest

from registry import metrics
from registry.limits import client_address

logger = logging.getLogger(__name__)

_PREFIX = "login-failures"


def _keys(request: HttpRequest | None, username: str | None) -> list[tuple[str, int]]:
    """The counters a login attempt touches, each with its limit."""
    keys: list[tuple[str, int]] = []
    if username:
        digest = hashlib.sha256(username.strip().lower().encode("utf-8", "replace")).hexdigest()
        keys.append((f"{_PREFIX}:account:{digest}", settings.REGISTRY_LOGIN_FAILURES_PER_ACCOUNT))
    if request is not None:
        address = client_address(request)
        if address:
            keys.append(
                (f"{_PREFIX}:client:{address}", settings.REGISTRY_LOGIN_FAILURES_PER_CLIENT)
            )
    return keys


def blocked_for(request: HttpRequest | None, username: str | None) -> float:
    """Seconds until this username and client may try a password again (0: they may now)."""
    keys = _keys(request, username)
    if not keys:
        return 0.0
    names = [name for key, _ in keys for name in (f"{key}:count", f"{key}:since")]
    try:
        values = cache.get_many(names)
    except Exception:  # the cache backends raise several types when Redis is down
        logger.warning("login throttle not applied: the cache is unreachable", exc_info=True)
        return 0.0
    now = time.time()
    wait = 0.0
    for key, limit in keys:
        count = values.get(f"{key}:count")
        if isinstance(count, int) and count >= limit:
            since = values.get(f"{key}:since")
            opened = float(since) if isinstance(since, (int, float)) else now
            wait = max(wait, opened + settings.REGISTRY_LOGIN_WINDOW_SECONDS - now, 1.0)
    return wait


def record_failure(request: HttpRequest | None, username: str | None) -> None:
    """Count one failed password. A counter's window opens with its first failure and both its
    keys expire when it closes; ``add`` and ``incr`` are atomic, so parallel guesses count too."""
    window = settings.REGISTRY_LOGIN_WINDOW_SECONDS
    try:
        for key, _ in _keys(request, username):
            cache.add(f"{key}:since", time.time(), timeout=window)
            cache.add(f"{key}:count", 0, timeout=window)
            try:
                cache.incr(f"{key}:count")
            except ValueError:  # expired between add and incr: a new window
                cache.add(f"{key}:count", 1, timeout=window)
    except Exception:
        logger.warning("login failure not counted: the cache is unreachable", exc_info=True)


def record_success(username: str | None) -> None:
    """A right password clears the account's counter (never the client's: an attacker's own
    account must not reset the count of the guesses made from that address)."""
    try:
        for key, _ in _keys(None, username):
            cache.delete_many([f"{key}:count", f"{key}:since"])
    except Exception:
        logger.warning("login success not recorded: the cache is unreachable", exc_info=True)


def message(wait: float) -> str:
    minutes = max(1, math.ceil(wait / 60))
    return (
        "Too many failed logins for this account or from this address; "
        f"try again in {minutes} minute{'s' if minutes != 1 else ''}."
    )


class ThrottledModelBackend(ModelBackend):
    """Django's username and password backend behind the failure counters."""

    def authenticate(
        self,
        request: HttpRequest | None,
        username: str | None = None,
        password: str | None = None,
        **kwargs: Any,
    ) -> Any:
        if username is None:
            username = kwargs.get(self._username_field())
        if username is None or password is None:
            return None
        if blocked_for(request, username) > 0:
            # Stops authenticate() here: no backend is asked, the password is not checked.
            metrics.refused("login")
            raise PermissionDenied("too many failed logins")
        user = super().authenticate(request, username=username, password=password, **kwargs)
        if user is None:
            record_failure(request, username)
        else:
            record_success(username)
        return user

    @staticmethod
    def _username_field() -> str:
        return str(get_user_model().USERNAME_FIELD)


class ThrottledAdminLoginForm(AdminAuthenticationForm):
    """The admin's login form, saying so when the counters refuse a login."""

    def clean(self) -> dict[str, Any]:
        username = self.cleaned_data.get("username")
        wait = blocked_for(self.request, username)
        if wait > 0:
            metrics.refused("login")  # before authenticate(), which would count it again
            raise ValidationError(message(wait), code="throttled")
        return super().clean()
