"""Publisher accounts (issue 44, docs/publishers.md): django-allauth's sign-up, sign-in, e-mail,
two-factor sign-in and GitHub / OpenID Connect sign-in, read from the environment.

The production variables are listed in docs/configuration.md ("Accounts and e-mail").
"""

from __future__ import annotations

import json
from typing import Any

from registry.env import ConfigError, env_bool, env_int, env_optional, env_str
from registry.settings.base import DEBUG

# The admin's password backend first: its failure counters (registry/login_throttle.py) refuse
# a username login after too many failures, on the admin and on /accounts/login/ alike. An
# e-mail login goes to allauth's backend, behind allauth's own limits (ACCOUNT_RATE_LIMITS).
AUTHENTICATION_BACKENDS = [
    "registry.login_throttle.ThrottledModelBackend",
    "allauth.account.auth_backends.AuthenticationBackend",
]

LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/my-agents"
ACCOUNT_LOGOUT_REDIRECT_URL = "/"

# --- Accounts ---------------------------------------------------------------------------------
# Limits per client address counted as every other limit of the registry counts it (trusted
# proxies, IPv6 networks): publishers/account_adapter.py.
ACCOUNT_ADAPTER = "publishers.account_adapter.AccountAdapter"
# Sign in with the e-mail address or the user name; sign up with both, and a verified address.
ACCOUNT_LOGIN_METHODS = {"email", "username"}
ACCOUNT_SIGNUP_FIELDS = ["email*", "username*", "password1*", "password2*"]
ACCOUNT_UNIQUE_EMAIL = True
ACCOUNT_EMAIL_VERIFICATION = "mandatory"
ACCOUNT_EMAIL_CONFIRMATION_EXPIRE_DAYS = 3
# The link in the e-mail opens a page with a button: a GET (a mail scanner following links)
# confirms nothing.
ACCOUNT_CONFIRM_EMAIL_ON_GET = False
ACCOUNT_EMAIL_SUBJECT_PREFIX = "[A2A agent registry] "
# The same answer whether an account exists or not: sign-up with a known address and password
# reset of an unknown one both say "we sent you an e-mail" (and the e-mail says what happened).
ACCOUNT_PREVENT_ENUMERATION = True
ACCOUNT_EMAIL_UNKNOWN_ACCOUNTS = True
# Signing out is a POST (the nav's form, with its CSRF token), never a link a page can embed.
ACCOUNT_LOGOUT_ON_GET = False
ACCOUNT_SESSION_REMEMBER = None  # the "Remember me" box decides
ACCOUNT_LOGIN_ON_EMAIL_CONFIRMATION = True
ACCOUNT_LOGIN_ON_PASSWORD_RESET = False
ACCOUNT_EMAIL_NOTIFICATIONS = True  # "your password was changed", "an e-mail was added"
ACCOUNT_REAUTHENTICATION_TIMEOUT = 300
ACCOUNT_USERNAME_BLACKLIST = ["admin", "administrator", "root", "staff", "registry", "support"]
# allauth's limits, in its "amount/period/per" form (m = minute, per ip, key or user).
ACCOUNT_RATE_LIMITS: dict[str, str | None] = {
    "login": "30/m/ip",
    # Failed logins: 10 a minute from one address, 5 in 5 minutes for one account.
    "login_failed": "10/m/ip,5/5m/key",
    "signup": "20/m/ip",
    "reset_password": "20/m/ip,5/m/key",
    "reset_password_from_key": "20/m/ip",
    # One confirmation e-mail per address every 3 minutes.
    "confirm_email": "1/3m/key",
    "change_password": "5/m/user",
    "manage_email": "10/m/user",
    "reauthenticate": "10/m/user",
}

# --- Two-factor sign-in -----------------------------------------------------------------------
MFA_SUPPORTED_TYPES = ["totp", "webauthn", "recovery_codes"]
MFA_PASSKEY_LOGIN_ENABLED = True
MFA_TOTP_ISSUER = env_str("REGISTRY_MFA_ISSUER", "A2A agent registry")
MFA_RECOVERY_CODE_COUNT = 10
# A code of the step before or after the current one is taken too (phone clocks drift).
MFA_TOTP_TOLERANCE = 1
# WebAuthn needs a secure origin; http://127.0.0.1 (make run, the browser tests) only when asked.
MFA_WEBAUTHN_ALLOW_INSECURE_ORIGIN = env_bool("REGISTRY_WEBAUTHN_INSECURE_ORIGIN", DEBUG)

# --- Sign-in with GitHub and OpenID Connect providers (off until configured) -------------------
SOCIALACCOUNT_ADAPTER = "publishers.social_adapter.SocialAccountAdapter"  # unset: 404
# An address the provider says it verified is taken as verified; others are sent a link.
SOCIALACCOUNT_EMAIL_VERIFICATION = "mandatory"
SOCIALACCOUNT_EMAIL_REQUIRED = True
SOCIALACCOUNT_QUERY_EMAIL = True
# A provider's e-mail never signs in to an existing account of that address by itself: the
# owner connects the provider from their signed-in account (Account connections).
SOCIALACCOUNT_EMAIL_AUTHENTICATION = False
SOCIALACCOUNT_LOGIN_ON_GET = False  # a POST with the CSRF token starts the redirect
SOCIALACCOUNT_STORE_TOKENS = False
SOCIALACCOUNT_REQUESTS_TIMEOUT = 10


def _github() -> dict[str, Any]:
    client_id = env_optional("REGISTRY_GITHUB_CLIENT_ID")
    secret = env_optional("REGISTRY_GITHUB_SECRET")
    if client_id is None and secret is None:
        return {}
    if client_id is None or secret is None:
        raise ConfigError("REGISTRY_GITHUB_CLIENT_ID and REGISTRY_GITHUB_SECRET go together")
    return {
        "APPS": [{"client_id": client_id, "secret": secret}],
        "SCOPE": ["read:user", "user:email"],
        "VERIFIED_EMAIL": False,  # GitHub's /user/emails says which are verified
        "OAUTH_PKCE_ENABLED": True,
    }


_OIDC_KEYS = ("id", "name", "server_url", "client_id", "secret")


def oidc_apps(raw: str | None) -> list[dict[str, Any]]:
    """allauth's ``APPS`` for REGISTRY_OIDC_PROVIDERS: a JSON list of objects with ``id``,
    ``name``, ``server_url`` (the issuer; its ``/.well-known/openid-configuration`` is read),
    ``client_id`` and ``secret``. Each provider is signed in at /accounts/oidc/<id>/login/."""
    if raw is None:
        return []
    try:
        items = json.loads(raw)
    except ValueError:
        raise ConfigError("REGISTRY_OIDC_PROVIDERS must be a JSON list of objects") from None
    if not isinstance(items, list):
        raise ConfigError("REGISTRY_OIDC_PROVIDERS must be a JSON list of objects")
    apps, seen = [], set()
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            raise ConfigError(f"REGISTRY_OIDC_PROVIDERS[{index}] must be an object")
        missing = [k for k in _OIDC_KEYS if not isinstance(item.get(k), str) or not item[k]]
        if missing:
            raise ConfigError(f"REGISTRY_OIDC_PROVIDERS[{index}] lacks {', '.join(missing)}")
        if not all(ch.isalnum() or ch in "-_" for ch in item["id"]) or item["id"] in seen:
            raise ConfigError(
                f"REGISTRY_OIDC_PROVIDERS[{index}]: id {item['id']!r} must be unique, "
                "letters, digits, - and _"
            )
        if not item["server_url"].startswith(("https://", "http://")):
            raise ConfigError(f"REGISTRY_OIDC_PROVIDERS[{index}]: server_url must be a URL")
        seen.add(item["id"])
        apps.append(
            {
                "provider_id": item["id"],
                "name": item["name"],
                "client_id": item["client_id"],
                "secret": item["secret"],
                "settings": {"server_url": item["server_url"], "oauth_pkce_enabled": True},
            }
        )
    return apps


SOCIALACCOUNT_PROVIDERS: dict[str, dict[str, Any]] = {
    "github": _github(),
    "openid_connect": {"APPS": oidc_apps(env_optional("REGISTRY_OIDC_PROVIDERS"))},
}

# --- E-mail -----------------------------------------------------------------------------------
# With REGISTRY_EMAIL_HOST: SMTP through it. Without it, `make run` (DEBUG) prints each e-mail,
# its confirmation link included, on the console; a production registry sends through an MTA
# on localhost:25 (docs/configuration.md).
_email_host = env_optional("REGISTRY_EMAIL_HOST")
if _email_host is None and DEBUG:
    EMAIL_BACKEND = "django.core.mail.backends.console.EmailBackend"
else:
    EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
EMAIL_HOST = _email_host or "localhost"
EMAIL_PORT = env_int("REGISTRY_EMAIL_PORT", 25, minimum=1)
EMAIL_HOST_USER = env_str("REGISTRY_EMAIL_USER", "")
EMAIL_HOST_PASSWORD = env_str("REGISTRY_EMAIL_PASSWORD", "")
EMAIL_USE_TLS = env_bool("REGISTRY_EMAIL_USE_TLS", False)
EMAIL_USE_SSL = env_bool("REGISTRY_EMAIL_USE_SSL", False)
if EMAIL_USE_TLS and EMAIL_USE_SSL:
    raise ConfigError("REGISTRY_EMAIL_USE_TLS and REGISTRY_EMAIL_USE_SSL exclude each other")
EMAIL_TIMEOUT = env_int("REGISTRY_EMAIL_TIMEOUT", 10, minimum=1)
DEFAULT_FROM_EMAIL = env_str("REGISTRY_EMAIL_FROM", "A2A agent registry <registry@localhost>")
SERVER_EMAIL = DEFAULT_FROM_EMAIL
