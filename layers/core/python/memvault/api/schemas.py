"""Request and response bodies of the HTTP API (the OpenAPI document is generated from these)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from memvault.domain.models import (
    ID_PATTERN,
    MAX_BATCH,
    RecallQuery,
    SaveCommand,
    SecurityLevel,
    SnapshotRequest,
)

MASK = "[CONFIDENTIAL]"


class ScopeFields(BaseModel):
    agent_id: str = Field(pattern=ID_PATTERN, description="The agent the memory belongs to")
    user_id: str = Field(default="", max_length=128, description="End user; empty for agent-wide memories")


class SaveBody(SaveCommand, ScopeFields):
    """Save one memory. ``created_at`` is honoured only for keys with the admin role."""

    model_config = ConfigDict(extra="forbid")

    def command(self) -> SaveCommand:
        return SaveCommand.model_validate(self.model_dump(exclude={"agent_id", "user_id"}))


class BatchItem(SaveCommand):
    model_config = ConfigDict(extra="forbid")


class BatchBody(ScopeFields):
    model_config = ConfigDict(extra="forbid")
    items: list[BatchItem] = Field(min_length=1, max_length=MAX_BATCH)


class RecallBody(RecallQuery, ScopeFields):
    model_config = ConfigDict(extra="forbid")
    limit: int | None = Field(default=None, ge=1, le=20, description="Alias of top_k")

    def query_model(self) -> RecallQuery:
        data = self.model_dump(exclude={"agent_id", "user_id", "limit"})
        if self.limit is not None:
            data["top_k"] = self.limit
        return RecallQuery.model_validate(data)


class SnapshotBody(SnapshotRequest, ScopeFields):
    model_config = ConfigDict(extra="forbid")

    def request(self) -> SnapshotRequest:
        return SnapshotRequest.model_validate(self.model_dump(exclude={"agent_id", "user_id"}))


class ErrorDetail(BaseModel):
    code: str
    message: str
    field: str | None = None


class ErrorBody(BaseModel):
    error: ErrorDetail


def memory_view(memory: dict[str, Any], clearance: SecurityLevel) -> dict[str, Any]:
    """A memory as the caller may see it: content masked above the caller's clearance."""
    if SecurityLevel(memory["security_level"]).rank > clearance.rank:
        memory = {
            **memory,
            "content": MASK,
            "name": MASK if memory.get("name") else None,
            "description": MASK if memory.get("description") else None,
        }
    return memory
