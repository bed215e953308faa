"""The structured results of the MCP tools (their output schemas)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field


class AgentList(BaseModel):
    results: list[dict[str, Any]] = Field(
        description="Agent summaries (each with live: the outcome of the registry's live "
        "checks of the agent): best first with a score (0-100) for text, else newest first."
    )
    truncated: bool = Field(description="More agents matched than the limit.")


class AgentMatches(BaseModel):
    agents: list[dict[str, Any]] = Field(
        description="Agents with the skills and schemas that accept the payload."
    )
    candidates: int
    accepted: int
    truncated: bool


class MessageVerdict(BaseModel):
    outcome: Literal[
        "structured-input", "structured-input-error", "no-structured-part", "rejected-task-exists"
    ]
    action: str
    part: dict[str, Any] | None
    schema_: dict[str, Any] | None = Field(alias="schema")
    errors: list[dict[str, str]]
    warnings: list[dict[str, str]]
    ignored_parts: list[int]
    available_schemas: list[str]
    task_id: str | None
    structured_outcome: str | None
    agent: dict[str, str]

    model_config = {"populate_by_name": True, "serialize_by_alias": True}


class SchemaList(BaseModel):
    results: list[dict[str, Any]] = Field(
        description="name, and the number of agents declaring, accepting, producing it."
    )
