"""The secret key, the hosts served, HTTPS, and the admin's passwords and login throttle."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ImproperlyConfigured

from registry.env import env_bool, env_int, env_list, env_optional
from registry.settings.base import DEBUG

# Keys published in examples and templates: anyone could sign sessions and tokens with them.
_PLACEHOLDER_KEYS = {
    "change-me-in-production",
    "change-me",
    "changeme",
    "secret",
    "secret-key",
    "your-secret-key",
    "insecure-development-key-do-not-use-in-production",
}
_KEY_HINT = (
    "set it to a long random value (python -c 'import secrets; print(secrets.token_urlsafe(50))'),"
    " or DJANGO_DEBUG=true on a development machine"
)
_secret = env_optional("DJANGO_SECRET_KEY")
if not DEBUG:
    # Without a real key nothing is served unless debug is explicitly on (docs/configuration.md).
    if _secret is None:
        raise ImproperlyConfigured(f"DJANGO_SECRET_KEY is not set: {_KEY_HINT}")
    if _secret.lower() in _PLACEHOLDER_KEYS or _secret.startswith("django-insecure-"):
        raise ImproperlyConfigured(f"DJANGO_SECRET_KEY is a published placeholder: {_KEY_HINT}")
SECRET_KEY = _secret or "insecure-development-key-do-not-use-in-production"
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]"])
# HTTPS (docs/configuration.md, "Serving"): off by default so `make run` and plain-HTTP setups
# work; on in docker-compose.yml, which expects TLS to end at a proxy in front of it
# (REGISTRY_SECURE_PROXY_HEADER: trust its X-Forwarded-Proto). `manage.py check --deploy`.
SECURE_SSL_REDIRECT = env_bool("REGISTRY_SSL_REDIRECT", False)
# Probes stay on plain HTTP; Prometheus scrapes a node directly over the internal network,
# without the TLS proxy (registry/settings/metrics.py).
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$", r"^metrics$"]
SECURE_HSTS_SECONDS = env_int("REGISTRY_HSTS_SECONDS", 0, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("REGISTRY_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = env_bool("REGISTRY_HSTS_PRELOAD", False)
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = env_bool("REGISTRY_SECURE_COOKIES", False)
if env_bool("REGISTRY_SECURE_PROXY_HEADER", False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
# A failed CSRF check: the catalogue's 403 page for people, a problem document for programs,
# never Django's page (a technical one with DEBUG on; docs/catalogue.md, "Small things").
CSRF_FAILURE_VIEW = "cards.catalogue.csrf_failure"

# Passwords (the admin's): Django's standard validators; a password login is refused for a while
# after too many failures for one account or from one client (registry/login_throttle.py).
REGISTRY_PASSWORD_MIN_LENGTH = env_int("REGISTRY_PASSWORD_MIN_LENGTH", 12, minimum=8)
AUTH_PASSWORD_VALIDATORS: list[dict[str, Any]] = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {
        "NAME": "django.contrib.auth.password_validation.MinimumLengthValidator",
        "OPTIONS": {"min_length": REGISTRY_PASSWORD_MIN_LENGTH},
    },
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
REGISTRY_LOGIN_FAILURES_PER_ACCOUNT = env_int("REGISTRY_LOGIN_FAILURES_PER_ACCOUNT", 5, minimum=1)
REGISTRY_LOGIN_FAILURES_PER_CLIENT = env_int("REGISTRY_LOGIN_FAILURES_PER_CLIENT", 20, minimum=1)
REGISTRY_LOGIN_WINDOW_SECONDS = env_int("REGISTRY_LOGIN_WINDOW_SECONDS", 900, minimum=1)
