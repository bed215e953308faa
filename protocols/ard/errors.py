"""ARD's error envelope (Appendix B): ``{"errorCode": "INVALID_ARGUMENT", "message": ...}``."""

from __future__ import annotations

from typing import Any

from django.http import JsonResponse


class ArdError(Exception):
    CODES = {
        400: "INVALID_ARGUMENT",
        401: "UNAUTHENTICATED",
        404: "NOT_FOUND",
        405: "INVALID_ARGUMENT",
        413: "INVALID_ARGUMENT",
        415: "INVALID_ARGUMENT",
        429: "RATE_LIMIT_EXCEEDED",
        500: "INTERNAL_ERROR",
        501: "UNIMPLEMENTED",
    }

    def __init__(self, status: int, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.field = field

    def response(self) -> JsonResponse:
        body: dict[str, Any] = {
            "errorCode": self.CODES.get(self.status, "INVALID_ARGUMENT"),
            "message": self.message,
        }
        if self.field is not None:
            body["details"] = [{"field": self.field, "message": self.message}]
        return JsonResponse(body, status=self.status)


def invalid(message: str, *, field: str | None = None) -> ArdError:
    return ArdError(400, message, field=field)
