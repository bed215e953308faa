"""Bulk import endpoints: create a job, follow its progress."""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from cards import imports, progress
from cards.api.views import _json_object
from cards.models import ImportJob
from registry import openapi
from registry.errors import ProblemError, only_members
from registry.throttling import SubmissionRateThrottle


def import_document(
    job: ImportJob, request: Request, *, with_results: bool = True
) -> dict[str, Any]:
    document: dict[str, Any] = {
        "id": str(job.pk),
        "status": job.status,
        "source_url": job.source_url or None,
        "error": job.error or None,
        "created_at": job.created_at,
        "started_at": job.started_at,
        "finished_at": job.finished_at,
        "total": job.total,
        "counts": imports.outcome_counts(job),
        "progress": imports.progress_document(job),
        "progress_extension": progress.EXTENSION_URI,
        "links": {"self": request.build_absolute_uri(f"/api/v1/imports/{job.pk}")},
    }
    if with_results:
        document["results"] = [
            {
                "url": item.url,
                "outcome": item.outcome,
                "agent_id": str(item.agent_id) if item.agent_id else None,
                "created": item.created,
                "detail": item.detail,
            }
            for item in job.items.all().order_by("position")
        ]
    return document


class ImportCreateView(APIView):
    permission_classes = [IsAuthenticated]
    throttle_classes = [SubmissionRateThrottle]

    @extend_schema(
        request=OpenApiTypes.OBJECT,
        extensions=openapi.body(openapi.IMPORT),
        responses={202: dict},
    )
    def post(self, request: Request) -> Response:
        body = _json_object(request)
        only_members(body, {"urls", "url"})
        job = imports.import_create(
            urls=body.get("urls"), source_url=body.get("url"), user=request.user
        )
        job.refresh_from_db()
        return Response(
            import_document(job, request, with_results=False), status=status.HTTP_202_ACCEPTED
        )


def _not_found() -> ProblemError:
    return ProblemError(
        status=404, slug="not-found", title="Not found", detail="No import with this id."
    )


class ImportDetailView(APIView):
    """An import's progress and per-URL results: for the account that created it and staff;
    anyone else gets the same 404 as for an id that does not exist."""

    @extend_schema(responses={200: dict})
    def get(self, request: Request, pk: Any) -> Response:
        user = request.user
        if user is None or not user.is_authenticated:
            raise _not_found()
        jobs = ImportJob.objects.filter(pk=pk)  # the URL pattern admits UUIDs only
        if not user.is_staff:
            jobs = jobs.filter(created_by=user)
        job = jobs.first()
        if job is None:
            raise _not_found()
        return Response(import_document(job, request))
