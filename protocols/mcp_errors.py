"""MCP errors in the REST API's words, and each read run the way Django runs a request.

A ``ProblemError`` becomes an MCP tool error carrying the API's own ``detail`` message. Each read
runs in a worker thread outside Django's request cycle, so the database connection is checked
before and released after each one (Django's request signals do that for views): a restarted
PostgreSQL costs no failed call.
"""

from __future__ import annotations

import logging
from typing import Any

from asgiref.sync import sync_to_async
from django.db import DatabaseError, DataError, close_old_connections
from mcp.server.fastmcp.exceptions import ToolError

from registry.errors import ProblemError

logger = logging.getLogger("protocols.mcp_server")  # every line of the MCP server under one name

RESOURCE_NOT_FOUND = -32002  # MCP's code for a resource that does not exist
INTERNAL_ERROR = -32603


class ApiError(ToolError):
    """A tool error in the REST API's words; ``status`` is what the API would answer."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


def api_error_in(exc: BaseException) -> ApiError | None:
    """The ApiError an SDK wrapper was raised from (its cause or context chain), if any."""
    seen: BaseException | None = exc
    for _ in range(8):
        if seen is None:
            return None
        if isinstance(seen, ApiError):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


DATA_REFUSED = "The arguments hold a value the database cannot take (a NUL character?)."
DATABASE_UNAVAILABLE = "The registry's database is unavailable; retry in a moment."


def _problem_text(exc: ProblemError) -> str:
    """The problem's ``detail``, plus any per-field message it does not already say."""
    extra = [
        f"{e.get('pointer', '')}: {e['message']}"
        for e in exc.errors or []
        if e.get("message") and e["message"] not in exc.detail
    ]
    return f"{exc.detail} ({'; '.join(extra)})" if extra else exc.detail


def _unit(fn: Any, kwargs: dict[str, Any]) -> Any:
    """One read in the worker thread, the way Django wraps a request: the thread's database
    connection is checked before (dropped when broken or expired, pinged when
    ``CONN_HEALTH_CHECKS`` is on) and after, so a restarted database costs no failed call."""
    close_old_connections()
    try:
        return fn(**kwargs)
    except ProblemError as exc:
        raise ApiError(_problem_text(exc), exc.status) from None
    except DataError:
        # A value PostgreSQL refuses (a NUL character in a JSON key, say): the caller's mistake.
        raise ApiError(DATA_REFUSED) from None
    except DatabaseError:
        logger.warning("MCP call not answered: the database is unavailable", exc_info=True)
        raise ApiError(DATABASE_UNAVAILABLE, 503) from None
    except Exception:
        logger.exception("MCP call failed")
        raise ApiError("Internal error: the call could not be answered.", 500) from None
    finally:
        close_old_connections()


async def run_read(fn: Any, **kwargs: Any) -> Any:
    return await sync_to_async(_unit, thread_sensitive=True)(fn, kwargs)
