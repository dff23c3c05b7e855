"""Request and response bodies of the HTTP API (the OpenAPI document is generated from these)."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.event_handler.openapi.types import OpenAPIResponse
from pydantic import BaseModel, ConfigDict, Field

from memvault.domain.models import (
    ID_PATTERN,
    MAX_BATCH,
    Memory,
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


def _masked_fields(
    level: str, clearance: SecurityLevel, name: str | None, description: str | None
) -> dict[str, Any]:
    """The one masking rule: above the caller's clearance, content, name and description are
    replaced by ``[CONFIDENTIAL]`` ({} when the caller may see the memory)."""
    if SecurityLevel(level).rank <= clearance.rank:
        return {}
    return {"content": MASK, "name": MASK if name else None, "description": MASK if description else None}


def memory_view(memory: dict[str, Any], clearance: SecurityLevel) -> dict[str, Any]:
    """A memory (as a dict) as the caller may see it."""
    hidden = _masked_fields(
        memory["security_level"], clearance, memory.get("name"), memory.get("description")
    )
    return {**memory, **hidden}


def masked(memory: Memory, clearance: SecurityLevel) -> Memory:
    """A memory as the caller may see it (for prompt blocks)."""
    hidden = _masked_fields(memory.security_level, clearance, memory.name, memory.description)
    return memory.model_copy(update=hidden) if hidden else memory


# -- responses (documented in the OpenAPI document and checked by the fuzz test) --------------
class MemoryOut(BaseModel):
    """A memory as returned by the API (no embedding vector)."""

    id: str
    tenant_id: str
    agent_id: str
    user_id: str
    session_id: str | None
    type: str
    name: str | None
    description: str | None
    content: str
    tags: list[str]
    entities: list[str]
    metadata: dict[str, Any]
    importance: float
    pinned: bool
    security_level: SecurityLevel
    source: dict[str, Any]
    flags: list[str]
    version: int
    created_at: str
    updated_at: str
    accessed_at: str | None
    access_count: int
    archived: bool
    archived_at: str | None
    expires_at: str | None
    supersedes: list[str]
    superseded_by: str | None
    content_hash: str
    embedding_model: str | None
    embedding_status: str


class SaveResponse(BaseModel):
    memory: MemoryOut
    action: str = Field(description="created | updated | unchanged")


class BatchResponse(BaseModel):
    results: list[SaveResponse]


class ListResponse(BaseModel):
    items: list[MemoryOut]
    next_cursor: str | None


class HitOut(BaseModel):
    memory: MemoryOut
    score: float
    relevance: float
    vector: float
    keyword: float
    decay: float
    boost: float


class RecallResponse(BaseModel):
    hits: list[HitOut]
    degraded: bool
    retrievers: list[str]
    prompt_block: str


class SnapshotItemOut(BaseModel):
    memory: MemoryOut
    reason: str
    text: str
    tokens: int


class SnapshotResponse(BaseModel):
    items: list[SnapshotItemOut]
    prompt_block: str
    tokens: int
    token_budget: int


class QueryCacheStats(BaseModel):
    hits: int
    misses: int
    hit_rate: float


class HealthResponse(BaseModel):
    status: str
    version: str
    embedder: str
    backend: str
    query_cache: QueryCacheStats = Field(description="query-embedding LRU cache counters of this process")


ERROR_STATUSES = (400, 401, 403, 404, 409, 412, 413, 422)


def responses(status: int, model: type[BaseModel] | None, description: str) -> dict[int, OpenAPIResponse]:
    """OpenAPI responses of a route: its success body and the shared error body."""
    out: dict[int, Any] = {
        code: {"description": "error", "content": {"application/json": {"model": ErrorBody}}}
        for code in ERROR_STATUSES
    }
    out[status] = {"description": description}
    if model is not None:
        out[status]["content"] = {"application/json": {"model": model}}
    return out
