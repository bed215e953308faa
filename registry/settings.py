"""Settings of the registry, every one read from the environment (see docs/configuration.md).

With nothing set the registry runs on SQLite with tasks executed in-process, so that
``make run`` works on a fresh machine. ``DATABASE_URL`` and ``REDIS_URL`` switch it to
PostgreSQL and a Celery worker.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from registry.env import (
    ConfigError,
    env_bool,
    env_float,
    env_int,
    env_list,
    env_networks,
    env_optional,
    env_ports,
    env_str,
)
from registry.logs import formats as log_formats
from registry.rates import Rate

BASE_DIR = Path(__file__).resolve().parent.parent

DEBUG = env_bool("DJANGO_DEBUG", False)
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
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$"]  # probes stay on plain HTTP
SECURE_HSTS_SECONDS = env_int("REGISTRY_HSTS_SECONDS", 0, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("REGISTRY_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = env_bool("REGISTRY_HSTS_PRELOAD", False)
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = env_bool("REGISTRY_SECURE_COOKIES", False)
if env_bool("REGISTRY_SECURE_PROXY_HEADER", False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

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
    "protocols",
    "schemas_app",
    "live",
    # The "Try it" forms: django_jsonform ships the JSON-Schema form (its static files only).
    "django_jsonform",
    "tryit",
    # Publisher accounts (issue 44; registry/accounts_settings.py): tokens and proven origins,
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

MIDDLEWARE = [
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

_database_url = env_optional("DATABASE_URL")
DATABASES: dict[str, dict[str, Any]]
REGISTRY_DB_POOL = env_bool("REGISTRY_DB_POOL", False)
if _database_url is None:
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": env_str("REGISTRY_SQLITE_PATH", str(BASE_DIR / "db.sqlite3")),
        }
    }
else:
    try:
        DATABASES = {"default": dict(dj_database_url.parse(_database_url, conn_max_age=60))}
    except Exception as exc:  # the library raises several types for a bad URL
        raise ConfigError(f"DATABASE_URL is not a usable database URL: {exc}") from None
    # A reused connection is checked at the start of each request, so a restarted database costs
    # no failed request: registry.postgresql polls its socket (no round trip) and sends a
    # `SELECT 1` only when the server has written something; REGISTRY_DB_HEALTH_CHECKS=false
    # skips the check.
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = env_bool("REGISTRY_DB_HEALTH_CHECKS", True)
    if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
        DATABASES["default"]["ENGINE"] = "registry.postgresql"
    # The reads compiled once (registry/compiled.py) run as prepared statements: PostgreSQL plans
    # them once per connection (registry/postgresql/base.py). Off behind a pooler in transaction
    # mode, which does not keep a client's statements.
    DATABASES["default"]["PREPARED"] = env_bool("REGISTRY_DB_PREPARED", True)
    # Under ASGI (registry.asgi: uvicorn, and gunicorn's uvicorn workers) Django runs each
    # request's sync code in a fresh thread, so per-thread persistent connections are never
    # reused; a psycopg connection pool keeps them (docs/benchmarks-protocols.md).
    if REGISTRY_DB_POOL and DATABASES["default"]["ENGINE"].endswith("postgresql"):
        DATABASES["default"]["CONN_MAX_AGE"] = 0
        # A pooled connection is tested as it is handed out (Django passes psycopg_pool's
        # `check=ConnectionPool.check_connection` itself when CONN_HEALTH_CHECKS is on; giving it
        # here too is a TypeError on every query), so connections broken by a database restart
        # are replaced instead of failing a request (docs/security.md; tests/faults/).
        DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {"min_size": 1, "max_size": 8}

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

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
LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"

# --- REST API -------------------------------------------------------------------------------
REST_FRAMEWORK: dict[str, Any] = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        # Tokens an owner made (publishers/tokens.py: scoped, expiring, hashed), then the
        # operator's (`manage.py issue_token`), then the signed-in session.
        "publishers.auth.PublisherTokenAuthentication",
        "registry.auth.TokenOrBearerAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticatedOrReadOnly"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["registry.parsers.StrictJSONParser"],
    "EXCEPTION_HANDLER": "registry.errors.problem_exception_handler",
    # Accept absent, */* or application/json: the JSON renderer without parsing the header.
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "registry.negotiation.JsonFirstNegotiation",
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "UNAUTHENTICATED_USER": None,
}
if DEBUG:
    REST_FRAMEWORK["DEFAULT_RENDERER_CLASSES"] = [
        *REST_FRAMEWORK["DEFAULT_RENDERER_CLASSES"],
        "rest_framework.renderers.BrowsableAPIRenderer",
    ]

SPECTACULAR_SETTINGS = {
    "TITLE": "A2A agent card registry",
    "DESCRIPTION": "Submit, verify, validate and discover A2A agents by their cards. The ARD "
    "Registry API under /ard/ has its own document: [/ard/openapi.json](/ard/openapi.json), "
    "browsable at [/api/docs/ard](/api/docs/ard).",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # The docs UI is served from our own static files, not a CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # Two "outcome" enums: one live check's, and an agent's overall (docs/live-checks.md).
    "ENUM_NAME_OVERRIDES": {
        "LiveCheckOutcomeEnum": ["pass", "warn", "fail", "skip"],
        "LiveOutcomeEnum": ["pass", "fail", "not-checked"],
    },
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "registry.openapi.add_problems",
    ],
}

# --- Cache (throttle counters, JWKS documents) ------------------------------------------------
# Every call waits at most 1 s for Redis (redis-py's default is 5 s), and once Redis has failed
# the calls of the next 3 s fail at once (registry/redis_breaker.py, docs/security.md).
_REDIS_CACHE_OPTIONS: dict[str, Any] = {
    "pool_class": "registry.redis_breaker.ConnectionPool",
    "socket_connect_timeout": 1,
    "socket_timeout": 1,
}
CACHES: dict[str, dict[str, Any]]
if env_optional("REDIS_URL") is not None:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": env_str("REDIS_CACHE_URL", env_str("REDIS_URL", "")),
            "KEY_PREFIX": "registry",
            "OPTIONS": _REDIS_CACHE_OPTIONS,
        },
        # Anonymous A2A tasks: a key space of their own, bounded (REGISTRY_A2A_* below); point
        # REGISTRY_A2A_CACHE_URL at a Redis with `maxmemory` to keep them off the broker's.
        "a2a": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": env_str(
                "REGISTRY_A2A_CACHE_URL", env_str("REDIS_CACHE_URL", env_str("REDIS_URL", ""))
            ),
            "KEY_PREFIX": "registry-a2a",
            "OPTIONS": {**_REDIS_CACHE_OPTIONS, "socket_connect_timeout": 2, "socket_timeout": 2},
        },
    }
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

# A2A tasks (protocols/a2a.py): kept this many seconds for GetTask; at most this many bytes each
# (over it the history is left out, still over it the task is not kept); at most this many per
# client and this many bytes for all clients per TTL window (docs/security.md).
REGISTRY_A2A_TASK_TTL = env_int("REGISTRY_A2A_TASK_TTL", 600, minimum=1)
REGISTRY_A2A_TASK_MAX_BYTES = env_int("REGISTRY_A2A_TASK_MAX_BYTES", 64 * 1024, minimum=1024)
REGISTRY_A2A_TASKS_PER_CLIENT = env_int("REGISTRY_A2A_TASKS_PER_CLIENT", 60, minimum=0)
REGISTRY_A2A_STORE_MAX_BYTES = env_int("REGISTRY_A2A_STORE_MAX_BYTES", 32 * 1024 * 1024, minimum=0)

# Submissions (and imports) per account, in DRF's "N/period" form; empty for no limit.
REGISTRY_SUBMISSION_RATE = env_str("REGISTRY_SUBMISSION_RATE", "120/hour")
# Anonymous requests per client address (registry/limits.py); "off" for no limit.
REGISTRY_ANON_RATE = env_str("REGISTRY_ANON_RATE", "600/minute")
# Anonymous POST /api/v1/validate {"url"} per client address: each one makes the registry fetch.
REGISTRY_VALIDATE_URL_ANON_RATE = env_str("REGISTRY_VALIDATE_URL_ANON_RATE", "10/hour")
# Proxies whose X-Forwarded-For is believed (CIDR list); empty: the connection's address only.
REGISTRY_TRUSTED_PROXIES = env_networks("REGISTRY_TRUSTED_PROXIES")
# Per-client limits count an IPv6 client by its network of this many bits (one host usually holds
# a whole /64, one address of it per request if it likes); IPv4 by its address.
REGISTRY_THROTTLE_IPV6_PREFIX = env_int("REGISTRY_THROTTLE_IPV6_PREFIX", 64, minimum=1)
if REGISTRY_THROTTLE_IPV6_PREFIX > 128:
    raise ConfigError(
        f"REGISTRY_THROTTLE_IPV6_PREFIX must be at most 128 (got {REGISTRY_THROTTLE_IPV6_PREFIX})"
    )
for _rate_name in ("REGISTRY_ANON_RATE", "REGISTRY_VALIDATE_URL_ANON_RATE"):
    try:
        Rate.parse(globals()[_rate_name])
    except ValueError as exc:
        raise ConfigError(f"{_rate_name}: {exc}") from None

# --- Celery ---------------------------------------------------------------------------------
REDIS_URL = env_optional("REDIS_URL")
CELERY_BROKER_URL = env_optional("CELERY_BROKER_URL") or REDIS_URL
# Without a broker, tasks run in-process: the no-configuration mode of `make run`.
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", CELERY_BROKER_URL is None)
CELERY_TASK_EAGER_PROPAGATES = False
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SOFT_TIME_LIMIT = env_int("REGISTRY_TASK_SOFT_TIME_LIMIT", 60, minimum=1)
CELERY_TASK_TIME_LIMIT = env_int("REGISTRY_TASK_TIME_LIMIT", 90, minimum=1)
CELERY_TASK_IGNORE_RESULT = True
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# A worker rides out Redis outages of any length: it reconnects forever (the default gives up
# after 100 tries and exits), and tasks running when the connection drops are cancelled and
# redelivered (acks_late) rather than acknowledged on a dead connection. compose restarts a worker
# that exits anyway (restart: unless-stopped; docs/security.md, "Serving and outages").
CELERY_BROKER_CONNECTION_RETRY = True
CELERY_BROKER_CONNECTION_MAX_RETRIES = None
CELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS = True
# A submission must not hang when the broker is down: fail fast and let the sweep pick it up.
# Priorities on the Redis broker (kombu keeps one list per step and reads them in order): a crawl
# someone asked for (submission, owner's re-crawl) runs ahead of the periodic sweep's.
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "max_retries": 1,
    "interval_start": 0,
    "interval_step": 0.2,
    "priority_steps": list(range(10)),
    "sep": ":",
    "queue_order_strategy": "priority",
}
CELERY_TASK_DEFAULT_PRIORITY = 5

# --- Fetch policy (DESIGN section 6) --------------------------------------------------------
REGISTRY_FETCH_ALLOW_HTTP = env_bool("REGISTRY_FETCH_ALLOW_HTTP", False)
REGISTRY_FETCH_ALLOWED_NETWORKS = env_networks("REGISTRY_FETCH_ALLOWED_NETWORKS")
REGISTRY_FETCH_ALLOWED_PORTS = env_ports("REGISTRY_FETCH_ALLOWED_PORTS", [443])
REGISTRY_FETCH_MAX_BYTES = env_int("REGISTRY_FETCH_MAX_BYTES", 1024 * 1024, minimum=1024)
REGISTRY_FETCH_CONNECT_TIMEOUT = env_float("REGISTRY_FETCH_CONNECT_TIMEOUT", 5.0)
REGISTRY_FETCH_READ_TIMEOUT = env_float("REGISTRY_FETCH_READ_TIMEOUT", 10.0)
REGISTRY_FETCH_TOTAL_TIMEOUT = env_float("REGISTRY_FETCH_TOTAL_TIMEOUT", 20.0)
# CPU seconds one request (validate, schema match, check-message, validate-payload, MCP, A2A) and
# one crawl or import task may spend evaluating JSON Schemas (schemas_app/budget.py).
REGISTRY_SCHEMA_BUDGET_SECONDS = env_float("REGISTRY_SCHEMA_BUDGET_SECONDS", 0.5)
REGISTRY_SCHEMA_CRAWL_BUDGET_SECONDS = env_float("REGISTRY_SCHEMA_CRAWL_BUDGET_SECONDS", 3.0)
# One regular-expression match cannot be stopped once started: the longest text the lightest
# look-around pattern is run on; heavier patterns get less (schemas_app/regex_cost.py).
REGISTRY_SCHEMA_REGEX_MAX_INPUT = env_int("REGISTRY_SCHEMA_REGEX_MAX_INPUT", 256, minimum=16)
REGISTRY_USER_AGENT = env_str(
    "REGISTRY_USER_AGENT", "A2A-Card-Registry/0.1 (+https://github.com/a2a-card-registry)"
)

# --- Live checks (live/, docs/live-checks.md) -------------------------------------------------
# After a crawl, at most once an interval: the agent's endpoints asked what cannot start work.
REGISTRY_LIVE_CHECKS = env_bool("REGISTRY_LIVE_CHECKS", True)
REGISTRY_LIVE_INTERVAL_SECONDS = env_int("REGISTRY_LIVE_INTERVAL_SECONDS", 6 * 3600, minimum=60)
# The beat's sweep that queues due checks (nothing of them on the crawl's path): how often, and
# at most how many agents a sweep.
REGISTRY_LIVE_SWEEP_SECONDS = env_float("REGISTRY_LIVE_SWEEP_SECONDS", 60.0)
REGISTRY_LIVE_SWEEP_BATCH = env_int("REGISTRY_LIVE_SWEEP_BATCH", 500, minimum=1)
# Each request: connect, read and total bounds, and the largest answer read.
REGISTRY_LIVE_CONNECT_TIMEOUT = env_float("REGISTRY_LIVE_CONNECT_TIMEOUT", 3.0)
REGISTRY_LIVE_READ_TIMEOUT = env_float("REGISTRY_LIVE_READ_TIMEOUT", 5.0)
REGISTRY_LIVE_REQUEST_TIMEOUT = env_float("REGISTRY_LIVE_REQUEST_TIMEOUT", 8.0)
REGISTRY_LIVE_MAX_BYTES = env_int("REGISTRY_LIVE_MAX_BYTES", 256 * 1024, minimum=1024)
# One agent's whole run: checks left when it is spent are skipped, with the reason. Generous:
# every request may first wait its turn at the destination's politeness gate (1 s apart).
REGISTRY_LIVE_RUN_SECONDS = env_float("REGISTRY_LIVE_RUN_SECONDS", 60.0)
# At most this many interfaces are checked an agent (one per origin, binding and version); the
# others are reported as skipped, with the reason.
REGISTRY_LIVE_MAX_INTERFACES = env_int("REGISTRY_LIVE_MAX_INTERFACES", 4, minimum=1)
# Messages (only for agents whose owner opted in): at most this many an agent a UTC day.
REGISTRY_LIVE_MESSAGES_PER_DAY = env_int("REGISTRY_LIVE_MESSAGES_PER_DAY", 6, minimum=0)
# POST /api/v1/agents/{id}/probe: at most once in this many seconds an agent.
REGISTRY_LIVE_PROBE_COOLDOWN_SECONDS = env_int(
    "REGISTRY_LIVE_PROBE_COOLDOWN_SECONDS", 60, minimum=0
)

# --- Crawling --------------------------------------------------------------------------------
REGISTRY_CRAWL_MAX_RETRIES = env_int("REGISTRY_CRAWL_MAX_RETRIES", 5, minimum=0)
# First retry after about this long; each further retry doubles it (with jitter), up to an hour.
REGISTRY_CRAWL_RETRY_BASE_SECONDS = env_float("REGISTRY_CRAWL_RETRY_BASE_SECONDS", 10.0)
REGISTRY_CRAWL_INTERVAL_SECONDS = env_int("REGISTRY_CRAWL_INTERVAL_SECONDS", 6 * 3600, minimum=300)
REGISTRY_CRAWL_MIN_INTERVAL_SECONDS = env_int(
    "REGISTRY_CRAWL_MIN_INTERVAL_SECONDS", 300, minimum=60
)
REGISTRY_CRAWL_MAX_INTERVAL_SECONDS = env_int(
    "REGISTRY_CRAWL_MAX_INTERVAL_SECONDS", 7 * 86400, minimum=300
)
REGISTRY_CRAWL_BACKOFF_BASE_SECONDS = env_int("REGISTRY_CRAWL_BACKOFF_BASE_SECONDS", 300, minimum=1)
REGISTRY_UNREACHABLE_AFTER_FAILURES = env_int("REGISTRY_UNREACHABLE_AFTER_FAILURES", 5, minimum=1)
REGISTRY_GONE_AFTER_SECONDS = env_int("REGISTRY_GONE_AFTER_SECONDS", 7 * 86400, minimum=0)
REGISTRY_ATTEMPT_RETENTION_DAYS = env_int("REGISTRY_ATTEMPT_RETENTION_DAYS", 90, minimum=1)
REGISTRY_SWEEP_BATCH = env_int("REGISTRY_SWEEP_BATCH", 500, minimum=1)
# Due agents per crawl task: the sweep queues them in batches (one message, one hand-off to a
# worker process and one acknowledgement each); 1 queues every crawl on its own.
REGISTRY_CRAWL_BATCH = env_int("REGISTRY_CRAWL_BATCH", 8, minimum=1)
# How long a sweep's claim (or a submission's queued crawl) keeps an agent out of later sweeps
# while its crawl waits in the queue; a message lost with Redis is swept again after this
# (docs/crawling.md, "Faults"; docs/deploy.md).
REGISTRY_CRAWL_LEASE_SECONDS = env_int("REGISTRY_CRAWL_LEASE_SECONDS", 600, minimum=10)
# Once its crawl runs, the row is held for this long, renewed every third of it while the crawl
# goes on: a crawl whose worker is killed, or cancelled when Redis goes away, is due again
# this long after its worker last renewed it (cards/scheduling.py).
REGISTRY_CRAWL_RUNNING_LEASE_SECONDS = env_int(
    "REGISTRY_CRAWL_RUNNING_LEASE_SECONDS", 90, minimum=3
)
REGISTRY_SWEEP_INTERVAL_SECONDS = env_float("REGISTRY_SWEEP_INTERVAL_SECONDS", 30.0)
# Politeness towards each origin, shared by all workers through Redis.
REGISTRY_ORIGIN_CONCURRENCY = env_int("REGISTRY_ORIGIN_CONCURRENCY", 2, minimum=1)
REGISTRY_ORIGIN_MIN_GAP_SECONDS = env_float("REGISTRY_ORIGIN_MIN_GAP_SECONDS", 1.0, allow_zero=True)
# The politeness gate every outbound request passes (registry/http/gate.py, docs/fetch-policy.md):
# a gap between request starts at one destination (its origin and each address it resolves to;
# by default the origin gap above), at most this many requests to one destination in a clock
# hour across every agent and account (0: no ceiling), and how long a request may sleep for its
# turn before it is refused as busy (the crawl or check is deferred, never failed).
REGISTRY_DESTINATION_MIN_GAP_SECONDS = env_float(
    "REGISTRY_DESTINATION_MIN_GAP_SECONDS", REGISTRY_ORIGIN_MIN_GAP_SECONDS, allow_zero=True
)
REGISTRY_DESTINATION_HOURLY_LIMIT = env_int("REGISTRY_DESTINATION_HOURLY_LIMIT", 1200, minimum=0)
REGISTRY_DESTINATION_MAX_WAIT_SECONDS = env_float(
    "REGISTRY_DESTINATION_MAX_WAIT_SECONDS", 5.0, allow_zero=True
)
# New agents start approved (an open registry; curators hide or reject) unless this is false.
REGISTRY_AUTO_APPROVE = env_bool("REGISTRY_AUTO_APPROVE", True)
# ARD (docs/ard.md): peer registries for federated search, and how long `auto` waits for them.
REGISTRY_ARD_PEERS = env_list("REGISTRY_ARD_PEERS", [])
REGISTRY_ARD_FEDERATION_TIMEOUT = env_float("REGISTRY_ARD_FEDERATION_TIMEOUT", 2.0)
# Manifests: at most this many entries are read from one manifest (the rest is a finding).
REGISTRY_ARD_MAX_ENTRIES = env_int("REGISTRY_ARD_MAX_ENTRIES", 500, minimum=1)
REGISTRY_IMPORT_MAX_URLS = env_int("REGISTRY_IMPORT_MAX_URLS", 10000, minimum=1)
# URLs given inline ({"urls": [...]}): bounded by the request body cap (2.5 MB at 2,048 characters
# a URL); longer lists go in a document ({"url": ...}), up to REGISTRY_IMPORT_MAX_URLS.
REGISTRY_IMPORT_INLINE_MAX_URLS = env_int("REGISTRY_IMPORT_INLINE_MAX_URLS", 1000, minimum=1)

# --- Semantic search (docs/search.md) ---------------------------------------------------------
# auto: embed agents and rank `mode=semantic` searches when the model package is installed
# (lexical otherwise, said once in the log); off: always lexical.
REGISTRY_EMBEDDINGS = env_str("REGISTRY_EMBEDDINGS", "auto").lower()
if REGISTRY_EMBEDDINGS not in ("auto", "off"):
    raise ConfigError(f"REGISTRY_EMBEDDINGS must be auto or off (got {REGISTRY_EMBEDDINGS!r})")
# Tokens of an agent's text the model reads (at most 128, what it was trained on); fewer is
# faster to embed at ingest (docs/search.md, "Speed").
REGISTRY_EMBEDDING_MAX_TOKENS = env_int("REGISTRY_EMBEDDING_MAX_TOKENS", 80, minimum=16)
# Threads the model and numpy's matrix products may use in one process (1 per worker process
# suits a small machine; cards/embedding/threads.py).
REGISTRY_EMBEDDING_THREADS = env_int("REGISTRY_EMBEDDING_THREADS", 1, minimum=1)
# Where the converted model and the vector index snapshot are kept (a cache: safe to delete).
REGISTRY_EMBEDDING_DIR = Path(
    env_str("REGISTRY_EMBEDDING_DIR", str(BASE_DIR / "var" / "embedding"))
)

# --- Metrics (docs/operations.md; docs/configuration.md, "Metrics") -------------------------
# Requests (django-prometheus's middleware around all the others), PostgreSQL queries
# (registry.postgresql) and cache reads (registry.metrics_cache); the registry's own series are
# in registry/metrics.py. Several processes: PROMETHEUS_MULTIPROC_DIR (read by prometheus_client).
MIDDLEWARE = [
    # django-prometheus's, also counting the answers made by a middleware (issue 46).
    "registry.metrics_requests.PrometheusBeforeMiddleware",
    *MIDDLEWARE,
    # django-prometheus's, with client-sent methods folded into "other" (issue 43).
    "registry.metrics_requests.PrometheusAfterMiddleware",
]
for _cache in CACHES.values():
    if isinstance(_cache, dict) and _cache["BACKEND"].endswith("backends.redis.RedisCache"):
        _cache["BACKEND"] = "registry.metrics_cache.RedisCache"
# /metrics answers clients in these networks ("none": no address is enough) or with
# `Authorization: Bearer <REGISTRY_METRICS_TOKEN>`; anyone else gets a 404.
REGISTRY_METRICS_ALLOW = (
    []
    if env_str("REGISTRY_METRICS_ALLOW", "").lower() == "none"
    else env_networks("REGISTRY_METRICS_ALLOW", default=("127.0.0.0/8", "::1/128"))
)
REGISTRY_METRICS_TOKEN = env_optional("REGISTRY_METRICS_TOKEN")
if REGISTRY_METRICS_TOKEN is not None and len(REGISTRY_METRICS_TOKEN) < 16:
    raise ConfigError("REGISTRY_METRICS_TOKEN must be at least 16 characters (a random value)")
# A Celery worker's main process serves its node's metrics on this port (0: not at all), bound
# to this address: nothing else guards it (docs/operations.md, "Worker nodes").
REGISTRY_METRICS_PORT = env_int("REGISTRY_METRICS_PORT", 0, minimum=0)
if REGISTRY_METRICS_PORT > 65535:
    raise ConfigError(f"REGISTRY_METRICS_PORT must be a port number (got {REGISTRY_METRICS_PORT})")
REGISTRY_METRICS_ADDRESS = env_str("REGISTRY_METRICS_ADDRESS", "127.0.0.1")
# Prometheus scrapes a node directly over the internal network, without the TLS proxy.
SECURE_REDIRECT_EXEMPT = [*SECURE_REDIRECT_EXEMPT, r"^metrics$"]

# --- Attestations (docs/badges-and-attestations.md) -----------------------------------------
# The registry's Ed25519 key: PEM text or a file path; unset, one is generated and stored.
REGISTRY_SIGNING_KEY = env_optional("REGISTRY_SIGNING_KEY")
if (
    REGISTRY_SIGNING_KEY is not None
    and "-----BEGIN" not in REGISTRY_SIGNING_KEY
    and not Path(REGISTRY_SIGNING_KEY).is_file()
):
    raise ConfigError("REGISTRY_SIGNING_KEY must be a PEM private key or the path of a PEM file")
# The attestations' issuer; unset, the base URL of the request (scheme and host) is used.
REGISTRY_BASE_URL = (env_optional("REGISTRY_BASE_URL") or "").rstrip("/") or None
if REGISTRY_BASE_URL is not None and not REGISTRY_BASE_URL.startswith(("https://", "http://")):
    raise ConfigError(f"REGISTRY_BASE_URL must be an http(s) URL (got {REGISTRY_BASE_URL!r})")
REGISTRY_ATTESTATION_TTL_SECONDS = env_int("REGISTRY_ATTESTATION_TTL_SECONDS", 3600, minimum=60)

# --- Proof of an origin (issue 44; docs/publishers.md, "Proof of an origin") ---------------
# A verified origin is re-checked this often; it lapses after this many failed re-checks in a
# row. The sweep runs every REGISTRY_ORIGIN_RECHECK_SECONDS and re-checks at most BATCH.
REGISTRY_ORIGIN_RECHECK_HOURS = env_float("REGISTRY_ORIGIN_RECHECK_HOURS", 24.0)
REGISTRY_ORIGIN_RECHECK_FAILURES = env_int("REGISTRY_ORIGIN_RECHECK_FAILURES", 3, minimum=1)
REGISTRY_ORIGIN_RECHECK_SECONDS = env_float("REGISTRY_ORIGIN_RECHECK_SECONDS", 300.0)
REGISTRY_ORIGIN_RECHECK_BATCH = env_int("REGISTRY_ORIGIN_RECHECK_BATCH", 50, minimum=1)
# Verify attempts per account (each one makes the registry fetch or query DNS).
REGISTRY_ORIGIN_VERIFY_RATE = env_str("REGISTRY_ORIGIN_VERIFY_RATE", "30/hour")
try:
    Rate.parse(REGISTRY_ORIGIN_VERIFY_RATE)
except ValueError as _exc:
    raise ConfigError(f"REGISTRY_ORIGIN_VERIFY_RATE: {_exc}") from None
REGISTRY_ORIGINS_PER_ACCOUNT = env_int("REGISTRY_ORIGINS_PER_ACCOUNT", 100, minimum=1)
# The DNS method's resolvers, "ip:port,ip:port" ("[::1]:53" for IPv6); empty: the system's.
REGISTRY_DNS_NAMESERVERS: list[tuple[str, int]] = []
for _server in env_list("REGISTRY_DNS_NAMESERVERS", []):
    _host, _, _port = _server.rpartition(":")
    _host = _host.strip("[]")
    if not (_host and set(_host) <= set("0123456789abcdefABCDEF.:") and _port.isdigit()):
        raise ConfigError(f"REGISTRY_DNS_NAMESERVERS: {_server!r} is not ip:port")
    if not 0 < int(_port) < 65536:
        raise ConfigError(f"REGISTRY_DNS_NAMESERVERS: {_port} is not a valid port")
    REGISTRY_DNS_NAMESERVERS.append((_host, int(_port)))
REGISTRY_DNS_TIMEOUT_SECONDS = env_float("REGISTRY_DNS_TIMEOUT_SECONDS", 5.0)
# --- Trusted publishing (issue 45; docs/publishing-from-ci.md, "Trusted publishers") --------
# The OIDC issuers whose CI ID tokens may be exchanged for a publish token, comma-separated.
REGISTRY_TRUSTED_ISSUERS = [
    _issuer.rstrip("/")
    for _issuer in env_list(
        "REGISTRY_TRUSTED_ISSUERS",
        ["https://token.actions.githubusercontent.com", "https://gitlab.com"],
    )
]
# The audience a CI job asks its ID token for (GitHub: getIDToken(audience); GitLab: id_tokens aud).
REGISTRY_TRUSTED_PUBLISHING_AUDIENCE = env_str(
    "REGISTRY_TRUSTED_PUBLISHING_AUDIENCE", "a2a-registry"
)
# How long the publish token an exchange mints lasts.
REGISTRY_TRUSTED_PUBLISH_TOKEN_MINUTES = env_int(
    "REGISTRY_TRUSTED_PUBLISH_TOKEN_MINUTES", 15, minimum=1
)
# Exchanges per client address (each may make the registry fetch the issuer's keys).
REGISTRY_TRUSTED_EXCHANGE_RATE = env_str("REGISTRY_TRUSTED_EXCHANGE_RATE", "60/hour")
try:
    Rate.parse(REGISTRY_TRUSTED_EXCHANGE_RATE)
except ValueError as _exc:
    raise ConfigError(f"REGISTRY_TRUSTED_EXCHANGE_RATE: {_exc}") from None

CELERY_BEAT_SCHEDULE = {
    "sweep-due-crawls": {"task": "cards.sweep_due", "schedule": REGISTRY_SWEEP_INTERVAL_SECONDS},
    "prune-crawl-attempts": {"task": "cards.prune_history", "schedule": 86400.0},
    # The vector index snapshot the web processes open (docs/search.md); cheap when unchanged.
    "save-vector-index": {"task": "cards.save_vector_index", "schedule": 300.0},
    # Live checks of agents whose card was read since their last check (docs/live-checks.md).
    "sweep-due-live-checks": {"task": "live.sweep", "schedule": REGISTRY_LIVE_SWEEP_SECONDS},
    # Re-checks of proven origins that are due (docs/publishers.md, "Proof of an origin").
    "recheck-due-origins": {
        "task": "publishers.recheck_due_origins",
        "schedule": REGISTRY_ORIGIN_RECHECK_SECONDS,
    },
}

# Logs (docs/operations.md, "Logs"): text for people (`[request id] message`), or one JSON
# object a line for a log pipeline; every line says its request id, task and agent where known.
REGISTRY_LOG_FORMAT = env_str("REGISTRY_LOG_FORMAT", "text").lower()
if REGISTRY_LOG_FORMAT not in log_formats.FORMATS:
    raise ConfigError(f"REGISTRY_LOG_FORMAT must be text or json (got {REGISTRY_LOG_FORMAT!r})")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": log_formats.FILTERS,
    "formatters": log_formats.FORMATTERS,
    "handlers": {"console": log_formats.console_handler(REGISTRY_LOG_FORMAT)},
    "root": {"handlers": ["console"], "level": env_str("REGISTRY_LOG_LEVEL", "INFO")},
    # One line per outbound request is noise; the crawl outcome is recorded on the agent.
    # The MCP SDK logs "Processing request of type ..." and "Terminating session" per call.
    # Each line once: a 4xx is the access log's line (not also django.request's "Bad Request");
    # a 500 is logged once with its traceback by registry.errors. Celery's "Task ... succeeded:
    # 'error'" is replaced by cards.tasks' own line saying what the crawl recorded. kombu's
    # "No hostname was supplied" is noise when no broker is configured (eager tasks).
    "loggers": {
        "httpx": {"level": "WARNING"},
        "httpcore": {"level": "WARNING"},
        "mcp": {"level": "WARNING"},
        "django.request": {"level": "ERROR"},
        # registry.logs.task_lines writes each task's received/succeeded/retried/failed line
        # (a failure once, with its traceback); Celery's own would repeat them.
        "celery.app.trace": {"level": "CRITICAL"},
        "celery.worker.strategy": {"level": "WARNING"},
        "celery.beat": {"filters": ["beat_ticks"]},  # "Sending due task" every 30 s: DEBUG
        "kombu.connection": {"level": "ERROR"},
        **log_formats.server_loggers(REGISTRY_LOG_FORMAT),
    },
}

# Accounts, sign-in and e-mail (issue 44; docs/publishers.md): django-allauth's settings.
from registry.accounts_settings import *  # noqa: E402, F403
