"""The tasks the A2A endpoint answers with: complete when made, kept for GetTask, per version."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime
from typing import Any

from a2a.server.jsonrpc_models import InternalError

from cards.progress import EXTENSION_URI as PROGRESS_URI
from protocols import a2a_store
from protocols.a2a_errors import RpcError
from protocols.own_card import RESULT_MODE

STATES = {"completed": "TASK_STATE_COMPLETED"}


def unavailable() -> RpcError:
    return RpcError(InternalError, "The task store is unavailable; retry in a moment.")


def stored_task(task_id: Any) -> dict[str, Any] | None:
    try:
        return a2a_store.stored_task(task_id)
    except a2a_store.StoreUnavailable:
        raise unavailable() from None


def completed_task(
    version: str, message: dict[str, Any], result: dict[str, Any], total: int, client: str
) -> dict[str, Any]:
    now = datetime.now(UTC).isoformat().replace("+00:00", "Z")
    task_id, context_id = str(uuid.uuid4()), message.get("contextId") or str(uuid.uuid4())
    # v1.0 names a part's media type in ``mediaType``; seed 000 in ``metadata.mimeType``.
    data_part: dict[str, Any] = {
        "data": result,
        "mediaType": RESULT_MODE,
        "metadata": {"mimeType": RESULT_MODE},
    }
    summary = f"{len(result['agents'])} agent(s) found"
    progress = {
        "trackers": [
            {"id": "agent-query", "progress": total, "total": total, "status": "completed",
             "message": summary, "startedAt": now, "updatedAt": now}
        ],
    }  # fmt: skip
    task: dict[str, Any] = {
        "id": task_id,
        "contextId": context_id,
        "status": {"state": STATES["completed"], "timestamp": now},
        "artifacts": [
            {
                "artifactId": "agent-query-result",
                "name": "agentQueryResult",
                "parts": [data_part, {"text": summary}],
            }
        ],
        "history": [{**message, "taskId": task_id, "contextId": context_id}],
        "metadata": {PROGRESS_URI: progress},
    }
    a2a_store.keep(task, client)
    return spelled(version, task)


def spelled(version: str, task: dict[str, Any]) -> dict[str, Any]:
    """v1.0 wraps the task (``{"task": ...}``); v0.3 answers it bare, with ``kind`` fields."""
    if version == "1.0":
        return {"task": task}
    old = json.loads(json.dumps(task))
    old["kind"] = "task"
    old["status"]["state"] = "completed"
    for artifact in old["artifacts"]:
        for part in artifact["parts"]:
            part["kind"] = "data" if "data" in part else "text"
            part.pop("mediaType", None)  # a v1.0 member: v0.3 parts say it in their metadata
    return old
