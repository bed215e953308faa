"""``GET /api/v1/agents/{id}/history``: the snapshots of one agent's card, newest first."""

from __future__ import annotations

from typing import Any

from django.http import HttpResponse
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.views import APIView

from cards import hooks
from cards.api.common import CURSOR, LIMIT, page_of, page_response, viewer_of
from cards.models import Snapshot
from cards.reads import gate, paging
from cards.reads.params import Query

SNAPSHOTS = paging.Keyset(scope="history", order=("-fetched_at", "-id"))


def _counts(findings: Any) -> dict[str, int]:
    tally = {"error": 0, "warning": 0, "info": 0}
    for finding in findings or []:
        severity = finding.get("severity") if isinstance(finding, dict) else None
        if severity in tally:
            tally[severity] += 1
    return tally


HISTORY_ITEM = inline_serializer(
    "Snapshot",
    {
        "sha256": serializers.CharField(),
        "fetched_at": serializers.DateTimeField(),
        "card_url": serializers.CharField(),
        "content_type": serializers.CharField(),
        "shape": serializers.CharField(),
        "counts": serializers.DictField(child=serializers.IntegerField()),
        "changes": serializers.DictField(),
        "schema_changes": serializers.ListField(child=serializers.DictField()),
        "signature": serializers.DictField(),
        "events": serializers.ListField(child=serializers.DictField()),
    },
)


class AgentHistoryView(APIView):
    """The snapshots of one agent's card, newest first: what changed and the schema verdicts."""

    @extend_schema(
        parameters=[CURSOR, LIMIT], responses={200: page_of("SnapshotPage", HISTORY_ITEM)}
    )
    def get(self, request: Request, pk: Any) -> HttpResponse:
        query = Query(request.query_params, ["cursor", "limit"])
        limit = query.limit()
        if not gate.agents(viewer_of(request)).filter(pk=pk).exists():
            raise gate.not_found()
        rows = SNAPSHOTS.apply(
            Snapshot.objects.filter(agent_id=pk).defer("raw", "data", "card"), query.one("cursor")
        ).prefetch_related("events")
        page = list(rows[: limit + 1])
        more = len(page) > limit
        page = page[:limit]
        ids = [snapshot.pk for snapshot in page]
        details = {name: get(ids) for name, get in hooks.snapshot_details.items()}
        results = [
            {
                "sha256": snapshot.sha256,
                "fetched_at": snapshot.fetched_at,
                "card_url": snapshot.card_url,
                "content_type": snapshot.content_type,
                "shape": snapshot.shape,
                "counts": _counts(snapshot.findings),
                "changes": snapshot.changes,
                **{name: rows.get(snapshot.pk, []) for name, rows in details.items()},
                "signature": {
                    "status": (snapshot.signature or {}).get("status"),
                    "thumbprints": (snapshot.signature or {}).get("thumbprints", []),
                },
                "events": [
                    {"kind": e.kind, "detail": e.detail, "at": e.created_at.isoformat()}
                    for e in snapshot.events.all()
                ],
            }
            for snapshot in page
        ]
        cursor = (
            SNAPSHOTS.next_cursor([page[-1].fetched_at, page[-1].pk]) if more and page else None
        )
        return page_response({"results": results, "next": paging.next_link(request, cursor)})
