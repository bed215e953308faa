"""The frame of the site: where the project lives, debug, the apps, the middleware and templates."""

from __future__ import annotations

from pathlib import Path

from registry.env import env_bool, env_list

BASE_DIR = Path(__file__).resolve().parent.parent.parent

DEBUG = env_bool("DJANGO_DEBUG", False)

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "cards",
    # Search by words and by meaning (search/): the model, the vectors, the ranking.
    "search",
    "protocols",
    "schemas_app",
    "live",
    # The "Try it" forms: django_jsonform ships the JSON-Schema form (its static files only).
    "django_jsonform",
    "tryit",
    # Publisher accounts (issue 44; registry/settings/accounts.py): tokens and proven origins,
    # first so that its templates dress allauth's pages in the catalogue's look; then
    # django-allauth's sign-up, e-mail, MFA and GitHub/OpenID Connect sign-in.
    "publishers",
    "allauth",
    "allauth.account",
    "allauth.mfa",
    "allauth.socialaccount",
    "allauth.socialaccount.providers.github",
    "allauth.socialaccount.providers.openid_connect",
]

# Requests are counted by django-prometheus's middleware around all the others (docs/operations.md,
# "Metrics"; the other metrics settings are in registry/settings/metrics.py).
MIDDLEWARE = [
    # django-prometheus's, also counting the answers made by a middleware (issue 46).
    "registry.metrics_requests.PrometheusBeforeMiddleware",
    "registry.logs.middleware.RequestIdMiddleware",  # first: every line of the request has its id
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "registry.sessions.LazySessionMiddleware",  # the session, made on first use
    "django.middleware.common.CommonMiddleware",
    "registry.errors.ApiErrorsMiddleware",  # problem+json under /api/ in every mode
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "allauth.account.middleware.AccountMiddleware",
    "publishers.account_pages.AccountPagePolicyMiddleware",  # CSP of the /accounts/ pages
    "registry.limits.ClientRateLimitMiddleware",
    "registry.messages.LazyMessageMiddleware",  # the admin's messages, made on first use
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # django-prometheus's, with client-sent methods folded into "other" (issue 43).
    "registry.metrics_requests.PrometheusAfterMiddleware",
]

# The plain anonymous GETs answered without walking MIDDLEWARE (registry/hot_reads.py): URL
# names, comma-separated, or ``off``. Each is answered exactly as through the middleware.
REGISTRY_HOT_READS = [
    name for name in env_list("REGISTRY_HOT_READS", ["healthz", "agent-detail"]) if name != "off"
]

ROOT_URLCONF = "registry.urls"
WSGI_APPLICATION = "registry.wsgi.application"
ASGI_APPLICATION = "registry.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
