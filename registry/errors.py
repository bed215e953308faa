"""One error shape for the whole API: RFC 9457 problem+json.

Services raise :class:`ProblemError`; DRF's own exceptions and anything unexpected are mapped by
:func:`problem_exception_handler`, so a client never sees an HTML page or a bare string.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.core.exceptions import DisallowedHost, RequestDataTooBig, SuspiciousOperation
from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBadRequest, JsonResponse
from django.urls import get_resolver
from rest_framework import exceptions
from rest_framework.response import Response

from registry.findings import json_pointer
from registry.undecodable import query_fault

PROBLEM_CONTENT_TYPE = "application/problem+json"
logger = logging.getLogger(__name__)


def problem_type(slug: str) -> str:
    # A relative URI reference (RFC 9457 section 3.1.1); the slugs are listed in docs/api.md.
    return f"/problems/{slug}"


class ProblemError(Exception):
    """An application error with everything a problem document needs."""

    def __init__(
        self,
        *,
        status: int,
        slug: str,
        title: str,
        detail: str,
        errors: list[dict[str, str]] | None = None,
        extra: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(detail)
        self.status = status
        self.slug = slug
        self.title = title
        self.detail = detail
        self.errors = errors or []
        self.extra = extra or {}

    def as_dict(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "type": problem_type(self.slug),
            "title": self.title,
            "status": self.status,
            "detail": self.detail,
        }
        if self.errors:
            body["errors"] = self.errors
        body.update(self.extra)
        return body


def _flatten(detail: Any, path: tuple[str | int, ...] = ()) -> list[dict[str, str]]:
    """Turn DRF's nested error detail into a flat list of {pointer, message}."""
    if isinstance(detail, dict):
        out: list[dict[str, str]] = []
        for key, value in detail.items():
            sub = path if key == "non_field_errors" else (*path, key)
            out.extend(_flatten(value, sub))
        return out
    if isinstance(detail, list):
        if all(not isinstance(item, (dict, list)) for item in detail):
            return [{"pointer": json_pointer(*path), "message": str(item)} for item in detail]
        out = []
        for index, item in enumerate(detail):
            out.extend(_flatten(item, (*path, index)))
        return out
    return [{"pointer": json_pointer(*path), "message": str(detail)}]


_DRF_SLUGS: dict[type[exceptions.APIException], tuple[str, str]] = {
    exceptions.ParseError: ("malformed-request", "Malformed request"),
    exceptions.AuthenticationFailed: ("authentication-failed", "Authentication failed"),
    exceptions.NotAuthenticated: ("not-authenticated", "Authentication required"),
    exceptions.PermissionDenied: ("forbidden", "Forbidden"),
    exceptions.NotFound: ("not-found", "Not found"),
    exceptions.MethodNotAllowed: ("method-not-allowed", "Method not allowed"),
    exceptions.NotAcceptable: ("not-acceptable", "Not acceptable"),
    exceptions.UnsupportedMediaType: ("unsupported-media-type", "Unsupported media type"),
    exceptions.Throttled: ("rate-limited", "Too many requests"),
}


def _from_api_exception(exc: exceptions.APIException) -> ProblemError:
    if isinstance(exc, exceptions.ValidationError):
        errors = _flatten(exc.detail)
        detail = errors[0]["message"] if len(errors) == 1 else "The request has invalid fields."
        return ProblemError(
            status=400,
            slug="invalid-request",
            title="Invalid request",
            detail=detail,
            errors=errors,
        )
    slug, title = next((v for k, v in _DRF_SLUGS.items() if isinstance(exc, k)), ("error", "Error"))
    detail = exc.detail if isinstance(exc.detail, str) else str(exc.detail)
    return ProblemError(status=exc.status_code, slug=slug, title=title, detail=str(detail))


def problem_response(problem: ProblemError) -> Response:
    return Response(problem.as_dict(), status=problem.status, content_type=PROBLEM_CONTENT_TYPE)


def problem_exception_handler(exc: Exception, context: dict[str, Any]) -> Response:
    headers: dict[str, str] = {}
    logged = False
    if isinstance(exc, ProblemError):
        problem = exc
    elif isinstance(exc, Http404):
        problem = ProblemError(
            status=404, slug="not-found", title="Not found", detail="No such resource."
        )
    elif isinstance(exc, RequestDataTooBig):
        problem = ProblemError(
            status=413,
            slug="body-too-large",
            title="Request body too large",
            detail="The request body is larger than the registry accepts.",
        )
    elif isinstance(exc, SuspiciousOperation):
        problem = ProblemError(
            status=400, slug="malformed-request", title="Bad request", detail=str(exc)
        )
    elif isinstance(exc, DjangoPermissionDenied):
        problem = ProblemError(
            status=403, slug="forbidden", title="Forbidden", detail=str(exc) or "Forbidden."
        )
    elif isinstance(exc, exceptions.APIException):
        problem = _from_api_exception(exc)
        wait = getattr(exc, "wait", None) if isinstance(exc, exceptions.Throttled) else None
        if wait is not None:
            headers["Retry-After"] = str(int(wait) + 1)
        if isinstance(exc, (exceptions.NotAuthenticated, exceptions.AuthenticationFailed)):
            headers["WWW-Authenticate"] = "Token"
    else:
        request = context.get("request")
        path = getattr(request, "path", "") or str(context.get("view"))
        logger.error("Internal Server Error: %s", path, exc_info=exc)
        logged = True  # once, with its traceback: Django's own line would repeat it
        problem = ProblemError(
            status=500,
            slug="internal-error",
            title="Internal error",
            detail="The registry failed to handle this request; it has been logged.",
        )
    if "retry_after" in problem.extra:  # a 429 or 503 that knows when to come back
        headers["Retry-After"] = str(problem.extra["retry_after"])
    response = problem_response(problem)
    for name, value in headers.items():
        response[name] = value
    if logged:
        response._has_been_logged = True  # type: ignore[attr-defined]  # django.utils.log
    return response


# ARD's errorCode for a status (protocols/ard/errors.py's table, which this layer may not import).
_ARD_CODES = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 404: "NOT_FOUND",
              429: "RATE_LIMIT_EXCEEDED", 500: "INTERNAL_ERROR"}  # fmt: skip


def _plain_problem(
    request: HttpRequest, status: int, slug: str, title: str, detail: str
) -> JsonResponse:
    """An error Django answers itself (the 400/404/500 handlers), in the door's own shape: the
    ARD envelope under /ard/, a JSON-RPC error object on /a2a, problem+json everywhere else."""
    path = request.path_info
    if path == "/ard" or path.startswith("/ard/"):
        code = _ARD_CODES.get(status, "INTERNAL_ERROR" if status >= 500 else "INVALID_ARGUMENT")
        return JsonResponse({"errorCode": code, "message": detail}, status=status)
    if path == "/a2a" or path.startswith("/a2a/"):
        rpc = -32603 if status >= 500 else -32600
        body = {"jsonrpc": "2.0", "id": None, "error": {"code": rpc, "message": detail}}
        return JsonResponse(body, status=status)
    body = ProblemError(status=status, slug=slug, title=title, detail=detail).as_dict()
    return JsonResponse(body, status=status, content_type=PROBLEM_CONTENT_TYPE)


def not_found_view(request: HttpRequest, exception: Exception | None = None) -> JsonResponse:
    return _plain_problem(request, 404, "not-found", "Not found", f"Nothing at {request.path}.")


def server_error_view(request: HttpRequest) -> JsonResponse:
    return _plain_problem(
        request,
        500,
        "internal-error",
        "Internal error",
        "The registry failed to handle this request; it has been logged.",
    )


def bad_request_view(request: HttpRequest, exception: Exception | None = None) -> JsonResponse:
    if isinstance(exception, DisallowedHost):
        detail = "The Host header names no site served here (ALLOWED_HOSTS)."
    elif isinstance(exception, RequestDataTooBig):
        detail = "The request body is too large."
    else:
        detail = "The request was malformed."
    return _plain_problem(request, 400, "malformed-request", "Bad request", detail)


def only_members(body: dict[str, Any], allowed: set[str]) -> None:
    """A 400 problem naming any member of a JSON body the operation does not know (a typo must
    not be silently ignored)."""
    unknown = sorted(str(name) for name in body if name not in allowed)
    if unknown:
        raise ProblemError(
            status=400,
            slug="invalid-request",
            title="Invalid request",
            detail=f"Unknown member(s): {', '.join(unknown)}; known: {', '.join(sorted(allowed))}.",
            errors=[
                {"pointer": json_pointer(name), "message": "unknown member"} for name in unknown
            ],
        )


# --- malformed requests and error pages under /api/ ----------------------------------------------


def query_string_problem(raw: str) -> str | None:
    """Why a raw query string cannot be read (None when it can): percent-decoded, every name and
    value must be UTF-8 (a surrogate encoded as UTF-8 is not) with no NUL character. Django
    would otherwise turn undecodable bytes into U+FFFD and answer as if they were text."""
    fault = query_fault(raw)
    return None if fault is None else fault.sentence() + "."


def query_problem(raw: str) -> ProblemError | None:
    """:func:`query_string_problem` as the API's 400, ``errors`` pointing at the parameter (the
    shape of every other invalid parameter, cards.reads.params.invalid)."""
    fault = query_fault(raw)
    if fault is None:
        return None
    pointer = f"#/{fault.name}" if fault.name is not None else "#"
    message = fault.message if fault.name is not None else fault.unnamed()
    return ProblemError(
        status=400,
        slug="invalid-parameter",
        title="Invalid query parameter",
        detail=fault.sentence(),
        errors=[{"pointer": pointer, "message": message}],
    )


def path_problem(path: str) -> str | None:
    """Why a decoded request path cannot be read (None when it can)."""
    if "\x00" in path:
        return "The path contains a NUL character."
    return None


def _is_api(path: str) -> bool:
    return path == "/api" or path.startswith("/api/")


def _handler404(request: HttpRequest, exception: Exception) -> HttpResponse:
    """The URLconf's ``handler404`` (the catalogue's page for people, the door's JSON for
    programs), asked as Django asks it when ``DEBUG`` is off."""
    resolver = get_resolver(getattr(request, "urlconf", None))
    handler: Callable[..., HttpResponse] = resolver.resolve_error_handler(404)
    return handler(request, exception=exception)


class ApiErrorsMiddleware:
    """The API answers problem+json in every mode: a malformed query string or path is a 400
    before any view runs, and an error page Django renders itself under ``/api/`` (the HTML
    404 of an unmatched URL with ``DEBUG`` on, for one) becomes a problem document.

    Elsewhere, with ``DEBUG`` on (``make run``), a 404 is what ``handler404`` answers with it
    off, not Django's technical page listing every URL pattern: an unmatched URL (the request
    never reached a view) and an ``Http404`` a view raises alike (docs/catalogue.md). The
    admin keeps Django's own pages."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not (settings.DEBUG and isinstance(exception, Http404)):
            return None
        if _is_api(request.path_info) or request.path_info.startswith("/admin/"):
            return None
        return _handler404(request, exception)

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path_info.startswith("/admin/"):
            # The admin's filters and searches go to PostgreSQL as they are: a NUL there was a
            # 500 (`?moderation__exact=%00`). Its pages are HTML, so the 400 is plain text.
            reason = query_string_problem(request.META.get("QUERY_STRING", ""))
            if reason is not None:
                return HttpResponseBadRequest(reason, content_type="text/plain; charset=utf-8")
            return self.get_response(request)
        if not _is_api(request.path_info):
            response = self.get_response(request)
            unmatched = getattr(request, "resolver_match", None) is None
            if settings.DEBUG and unmatched and response.status_code == 404:
                return _handler404(request, Http404(f"Nothing at {request.path}."))
            return response
        problem = query_problem(request.META.get("QUERY_STRING", ""))
        if problem is not None:
            return JsonResponse(
                problem.as_dict(), status=problem.status, content_type=PROBLEM_CONTENT_TYPE
            )
        reason = path_problem(request.path_info)
        if reason is not None:
            return _plain_problem(request, 400, "malformed-request", "Bad request", reason)
        response = self.get_response(request)
        kind = response.get("Content-Type", "")
        if response.status_code >= 400 and kind.startswith("text/html"):
            if response.status_code == 404:
                return not_found_view(request)
            if response.status_code >= 500:
                return server_error_view(request)
            return _plain_problem(
                request, response.status_code, "error", "Error", "The request was not accepted."
            )
        return response
