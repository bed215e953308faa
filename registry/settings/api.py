"""The REST API (Django REST framework) and its OpenAPI document (drf-spectacular)."""

from __future__ import annotations

from typing import Any

from registry.settings.base import DEBUG

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
