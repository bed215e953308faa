"""Rate limits on writes, per account (token), read from settings at request time."""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from rest_framework.throttling import UserRateThrottle

from registry import metrics
from registry.limits import client_address
from registry.redis_breaker import Unavailable

logger = logging.getLogger(__name__)


class SubmissionRateThrottle(UserRateThrottle):
    """Submissions and imports per account; staff are not limited."""

    scope = "submissions"

    def get_rate(self) -> str | None:
        return settings.REGISTRY_SUBMISSION_RATE or None

    def get_ident(self, request: Any) -> str:
        """A request without an account is counted as its client (DRF's own ``get_ident``
        believes any ``X-Forwarded-For``): the trusted-proxy rule and the canonical key."""
        return client_address(request)

    def allow_request(self, request: Any, view: Any) -> bool:
        if getattr(request.user, "is_staff", False):
            return True
        self.rate = self.get_rate()
        if self.rate is None:
            return True
        self.num_requests, self.duration = self.parse_rate(self.rate)
        try:
            allowed = super().allow_request(request, view)
        except Exception as exc:  # the cache (Redis) is down: a submission must not fail for it
            if not isinstance(exc, Unavailable):  # the breaker has said so once already
                logger.warning("rate limit not applied: the cache is unreachable", exc_info=True)
            return True
        if not allowed:
            metrics.refused(self.scope)
        return allowed
