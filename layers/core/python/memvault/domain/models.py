"""Domain model: scope, memory, commands and results (DESIGN section 2).

Input models validate sizes and formats; :func:`parse` turns pydantic's errors into one
:class:`~memvault.domain.errors.ValidationError` naming the offending field, so callers never see
library exceptions for bad input.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, Literal, TypeVar

import pydantic
from pydantic import BaseModel, ConfigDict, Field, field_validator

from memvault.domain.errors import ValidationError

ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:@\-]{0,127}$"
ULID_PATTERN = r"^[0-9A-HJKMNP-TV-Z]{26}$"
_ID_RE = re.compile(ID_PATTERN)
_ULID_RE = re.compile(ULID_PATTERN)

MAX_NAME = 200
MAX_DESCRIPTION = 500
HARD_MAX_CONTENT = 8000
DEFAULT_MAX_CONTENT = 2000
MAX_LIST_ITEMS = 32
MAX_TAG_CHARS = 64
MAX_METADATA_BYTES = 8 * 1024
MAX_BATCH = 100
MAX_TOP_K = 20
MAX_PAGE = 200

BUILTIN_TYPES: tuple[str, ...] = (
    "preference",
    "fact",
    "project",
    "decision",
    "feedback",
    "reference",
    "skill",
    "pattern",
    "todo",
    "episode",
    "summary",
)


class SecurityLevel(StrEnum):
    PUBLIC = "public"
    INTERNAL = "internal"
    CONFIDENTIAL = "confidential"
    RESTRICTED = "restricted"

    @property
    def rank(self) -> int:
        return list(SecurityLevel).index(self)


class SourceKind(StrEnum):
    API = "api"
    TOOL = "tool"
    EXTRACTION = "extraction"
    CAPTURE = "capture"
    COMPACTION = "compaction"
    IMPORT = "import"


class Author(StrEnum):
    AGENT = "agent"
    USER = "user"
    SYSTEM = "system"


class EmbeddingStatus(StrEnum):
    READY = "ready"
    PENDING = "pending"


def valid_id(value: str) -> bool:
    return bool(_ID_RE.match(value))


def valid_ulid(value: str) -> bool:
    return bool(_ULID_RE.match(value))


class Scope(BaseModel):
    """Who a memory belongs to. The tenant always comes from the authenticated caller."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tenant_id: str = Field(pattern=ID_PATTERN)
    agent_id: str = Field(pattern=ID_PATTERN)
    user_id: str = Field(default="", max_length=128)

    @field_validator("user_id")
    @classmethod
    def _user(cls, v: str) -> str:
        if v and not _ID_RE.match(v):
            raise ValueError("user_id must be empty or match " + ID_PATTERN)
        return v

    @property
    def key(self) -> str:
        """A stable string key for the scope (used by storage partitioning)."""
        return f"{self.tenant_id}#{self.agent_id}#{self.user_id}"


class Source(BaseModel):
    """Provenance: stored once, never changed by updates."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: SourceKind = SourceKind.API
    author: Author = Author.AGENT
    run_id: str | None = Field(default=None, max_length=128)


def _check_str_list(values: list[str], field: str) -> list[str]:
    if len(values) > MAX_LIST_ITEMS:
        raise ValueError(f"at most {MAX_LIST_ITEMS} {field} allowed")
    out: list[str] = []
    for raw in values:
        v = raw.strip()
        if not v:
            raise ValueError(f"{field} must not contain empty strings")
        if len(v) > MAX_TAG_CHARS:
            raise ValueError(f"each of {field} must be at most {MAX_TAG_CHARS} characters")
        if v not in out:
            out.append(v)
    return out


MIN_TIME = datetime(1970, 1, 1, tzinfo=UTC)
MAX_TIME = datetime(9999, 12, 30, tzinfo=UTC)


def _check_time(value: datetime | None) -> datetime | None:
    """Timestamps are UTC (naive ones are taken as UTC) between 1970 and 9999."""
    if value is None:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    if not MIN_TIME <= value <= MAX_TIME:
        raise ValueError("must be between 1970-01-01 and 9999-12-30")
    return value.astimezone(UTC)


def _check_metadata(value: dict[str, Any]) -> dict[str, Any]:
    try:
        size = len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode())
    except (TypeError, ValueError) as exc:
        raise ValueError("metadata must be JSON-serializable") from exc
    if size > MAX_METADATA_BYTES:
        raise ValueError(f"metadata must be at most {MAX_METADATA_BYTES} bytes serialized")
    return value


class _MemoryFields(BaseModel):
    """Fields a caller may set on save and update."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=False)

    name: str | None = Field(default=None, max_length=MAX_NAME)
    description: str | None = Field(default=None, max_length=MAX_DESCRIPTION)
    tags: list[str] = Field(default_factory=list)
    entities: list[str] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)
    importance: float = Field(default=0.5, ge=0.0, le=1.0)
    pinned: bool = False
    security_level: SecurityLevel = SecurityLevel.INTERNAL
    expires_at: datetime | None = None

    @field_validator("tags")
    @classmethod
    def _tags(cls, v: list[str]) -> list[str]:
        return _check_str_list(v, "tags")

    @field_validator("entities")
    @classmethod
    def _entities(cls, v: list[str]) -> list[str]:
        return _check_str_list(v, "entities")

    @field_validator("metadata")
    @classmethod
    def _metadata(cls, v: dict[str, Any]) -> dict[str, Any]:
        return _check_metadata(v)

    @field_validator("expires_at")
    @classmethod
    def _expires(cls, v: datetime | None) -> datetime | None:
        return _check_time(v)


class SaveCommand(_MemoryFields):
    """Save one memory. Type validity and content length are checked by the service (configurable)."""

    type: str = Field(min_length=1, max_length=32)
    content: str = Field(max_length=HARD_MAX_CONTENT)
    session_id: str | None = Field(default=None, pattern=ID_PATTERN)
    source: Source = Field(default_factory=Source)
    created_at: datetime | None = None  # honoured only for trusted callers (imports, benchmarks)
    idempotency_key: str | None = Field(default=None, min_length=1, max_length=128)

    @field_validator("created_at")
    @classmethod
    def _created(cls, v: datetime | None) -> datetime | None:
        return _check_time(v)


class UpdateCommand(BaseModel):
    """A partial update: fields left as ``None`` are unchanged. ``tags=[]`` clears the tags."""

    model_config = ConfigDict(extra="forbid")

    content: str | None = Field(default=None, max_length=HARD_MAX_CONTENT)
    type: str | None = Field(default=None, min_length=1, max_length=32)
    name: str | None = Field(default=None, max_length=MAX_NAME)
    description: str | None = Field(default=None, max_length=MAX_DESCRIPTION)
    tags: list[str] | None = None
    entities: list[str] | None = None
    metadata: dict[str, Any] | None = None
    importance: float | None = Field(default=None, ge=0.0, le=1.0)
    pinned: bool | None = None
    security_level: SecurityLevel | None = None
    expires_at: datetime | None = None
    archived: bool | None = None

    @field_validator("tags")
    @classmethod
    def _tags(cls, v: list[str] | None) -> list[str] | None:
        return None if v is None else _check_str_list(v, "tags")

    @field_validator("entities")
    @classmethod
    def _entities(cls, v: list[str] | None) -> list[str] | None:
        return None if v is None else _check_str_list(v, "entities")

    @field_validator("metadata")
    @classmethod
    def _metadata(cls, v: dict[str, Any] | None) -> dict[str, Any] | None:
        return None if v is None else _check_metadata(v)

    @field_validator("expires_at")
    @classmethod
    def _expires(cls, v: datetime | None) -> datetime | None:
        return _check_time(v)


class Memory(BaseModel):
    """A stored memory (the source-of-truth record)."""

    model_config = ConfigDict(extra="forbid")

    id: str
    tenant_id: str
    agent_id: str
    user_id: str = ""
    session_id: str | None = None
    type: str
    name: str | None = None
    description: str | None = None
    content: str
    tags: list[str] = Field(default_factory=list)
    entities: list[str] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)
    importance: float = 0.5
    pinned: bool = False
    security_level: SecurityLevel = SecurityLevel.INTERNAL
    source: Source = Field(default_factory=Source)
    flags: list[str] = Field(default_factory=list)
    version: int = 1
    created_at: datetime
    updated_at: datetime
    accessed_at: datetime | None = None
    access_count: int = 0
    archived: bool = False
    archived_at: datetime | None = None
    expires_at: datetime | None = None
    supersedes: list[str] = Field(default_factory=list)
    superseded_by: str | None = None
    content_hash: str
    embedding: list[float] | None = Field(default=None, repr=False)
    embedding_model: str | None = None
    embedding_status: EmbeddingStatus = EmbeddingStatus.PENDING

    @property
    def scope(self) -> Scope:
        return Scope(tenant_id=self.tenant_id, agent_id=self.agent_id, user_id=self.user_id)

    def public_dict(self) -> dict[str, Any]:
        """The memory as returned by the API: no embedding vector."""
        return self.model_dump(mode="json", exclude={"embedding"})


class Filters(BaseModel):
    """Filters every index query applies inside the query itself."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    types: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    session_id: str | None = None  # None: scope-wide memories only; set: that session + scope-wide
    include_archived: bool = False
    max_security_rank: int = 3  # SecurityLevel.RESTRICTED.rank: callers with clearance see everything
    as_of: datetime | None = None  # when set, memories with expires_at <= as_of are excluded


class RecallQuery(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1, max_length=HARD_MAX_CONTENT)
    session_id: str | None = Field(default=None, pattern=ID_PATTERN)
    types: list[str] = Field(default_factory=list, max_length=MAX_LIST_ITEMS)
    tags: list[str] = Field(default_factory=list, max_length=MAX_LIST_ITEMS)
    top_k: int = Field(default=5, ge=1, le=MAX_TOP_K)
    min_score: float | None = Field(default=None, ge=0.0, le=1.0)
    mode: Literal["hybrid", "keyword", "vector", "rrf"] = "hybrid"
    mmr: bool = False
    track_access: bool = True

    @field_validator("query")
    @classmethod
    def _query(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("query must not be blank")
        return v


class RecallHit(BaseModel):
    memory: Memory
    score: float
    relevance: float
    vector: float
    keyword: float
    decay: float
    boost: float


class RecallResult(BaseModel):
    hits: list[RecallHit]
    degraded: bool = False
    retrievers: list[str] = Field(default_factory=list)
    prompt_block: str = ""


SaveAction = Literal["created", "updated", "unchanged"]


class SaveResult(BaseModel):
    memory: Memory
    action: SaveAction


class Page(BaseModel):
    items: list[Memory]
    next_cursor: str | None = None


class SnapshotRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    trigger: str = Field(min_length=1, max_length=2000)
    focus: str | None = Field(default=None, max_length=2000)
    session_id: str | None = Field(default=None, pattern=ID_PATTERN)
    token_budget: int = Field(default=500, ge=50, le=8000)


SnapshotReason = Literal["pinned", "relevant", "recent"]


class SnapshotItem(BaseModel):
    memory: Memory
    reason: SnapshotReason
    text: str
    tokens: int


class Snapshot(BaseModel):
    items: list[SnapshotItem]
    prompt_block: str
    tokens: int
    token_budget: int


M = TypeVar("M", bound=BaseModel)


def parse(model: type[M], data: Any) -> M:
    """Validate ``data`` into ``model``; raise a domain ValidationError naming the first bad field."""
    try:
        return model.model_validate(data)
    except pydantic.ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first.get("loc", ()) if p != "__root__")
        msg = str(first.get("msg", "invalid value")).removeprefix("Value error, ")
        raise ValidationError(f"{loc or 'body'}: {msg}", field=loc or None) from None
