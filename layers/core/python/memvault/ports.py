"""Ports: the interfaces the services depend on. Adapters (local, aws) and test fakes implement them.

Scope comes first and is required in every method that touches memories: isolation is part of
every storage and index query, never a filter applied to results afterwards.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from memvault.domain.models import Filters, Memory, Page, Scope

Vector = npt.NDArray[np.float32]


@dataclass(frozen=True)
class Candidate:
    """A retriever's hit: the memory id and the retriever's raw score (BM25 score, or cosine)."""

    id: str
    score: float


@dataclass(frozen=True)
class ListQuery:
    types: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    session_id: str | None = None
    include_archived: bool = False
    limit: int = 50
    cursor: str | None = None


@dataclass(frozen=True)
class IdempotencyRecord:
    tenant_id: str
    key: str
    request_hash: str
    response: dict[str, Any]
    created_at: datetime


@dataclass(frozen=True)
class ScoringRow:
    """What recall needs of a candidate to score it, without parsing the whole record."""

    id: str
    updated_at: datetime
    pinned: bool
    importance: float
    access_count: int
    cjk: bool  # content is mostly CJK (picks the calibration's language bucket)


class Clock(Protocol):
    def now(self) -> datetime: ...


class IdFactory(Protocol):
    def new_id(self, at: datetime) -> str: ...


@runtime_checkable
class Embedder(Protocol):
    """Turns text into L2-normalized float32 vectors. ``model_id`` keys the calibration."""

    @property
    def model_id(self) -> str: ...

    @property
    def dimension(self) -> int: ...

    def embed_documents(self, texts: Sequence[str]) -> Vector:
        """(n, dimension) vectors for texts to store."""
        ...

    def embed_query(self, text: str) -> Vector:
        """(dimension,) vector for a search query."""
        ...


class MemoryRepository(Protocol):
    """The source of truth for memories (SQLite locally, DynamoDB on AWS)."""

    def get(self, scope: Scope, memory_id: str) -> Memory | None: ...

    def get_many(
        self, scope: Scope, memory_ids: Sequence[str], *, with_embeddings: bool = False
    ) -> list[Memory]:
        """The memories of ``scope`` among ``memory_ids`` (missing or foreign ids are skipped);
        ``embedding`` is left empty unless ``with_embeddings`` (it dominates the parse cost)."""
        ...

    def scoring_rows(self, scope: Scope, memory_ids: Sequence[str]) -> list[ScoringRow]:
        """Scoring signals of the memories of ``scope`` among ``memory_ids`` (others skipped)."""
        ...

    def find_by_hash(self, scope: Scope, content_hash: str, session_id: str | None) -> Memory | None: ...

    def find_by_name(self, scope: Scope, type_: str, name: str, session_id: str | None) -> Memory | None: ...

    def create(self, memory: Memory, idempotency: IdempotencyRecord | None = None) -> None:
        """Insert a new memory (and its idempotency record) atomically."""
        ...

    def create_many(self, memories: Sequence[Memory]) -> None:
        """Insert many new memories at once (imports, bulk loads): all or nothing."""
        ...

    def update(
        self, memory: Memory, expected_version: int, idempotency: IdempotencyRecord | None = None
    ) -> None:
        """Replace the memory if its stored version is ``expected_version``; else VersionConflictError."""
        ...

    def delete(self, scope: Scope, memory_id: str, expected_version: int | None = None) -> bool:
        """Delete; False when there is no such memory in ``scope``."""
        ...

    def list_page(self, scope: Scope, query: ListQuery) -> Page: ...

    def count(self, scope: Scope, include_archived: bool = False) -> int: ...

    def recent(self, scope: Scope, since: datetime, filters: Filters, limit: int) -> list[Memory]:
        """Active memories created at or after ``since``, newest first."""
        ...

    def pinned(self, scope: Scope, filters: Filters, limit: int) -> list[Memory]: ...

    def touch(self, scope: Scope, memory_ids: Sequence[str], at: datetime) -> None:
        """Record an access (accessed_at, access_count+1) without changing the version."""
        ...

    def get_idempotency(self, tenant_id: str, key: str) -> IdempotencyRecord | None: ...

    def put_idempotency(self, record: IdempotencyRecord) -> None:
        """Remember a response for an idempotency key (when no memory was written)."""
        ...

    def iter_scope(self, scope: Scope) -> Iterator[Memory]:
        """Every memory of the scope (rebuilds, degraded scoring, export)."""
        ...


class SearchIndex(Protocol):
    """Keyword (BM25) and vector retrieval, both filtered by scope inside the query.

    ``maintained_by_repository`` is True when the repository keeps the index in the same
    transaction (SQLite); then the services do not call ``upsert``/``remove``.
    """

    @property
    def maintained_by_repository(self) -> bool: ...

    def upsert(self, memories: Sequence[Memory]) -> None: ...

    def remove(self, scope: Scope, memory_ids: Sequence[str]) -> None: ...

    def search_keyword(
        self, scope: Scope, terms: Sequence[str], *, limit: int, filters: Filters
    ) -> list[Candidate]:
        """BM25 over the analyzed text; ``terms`` are analyzer tokens (OR semantics)."""
        ...

    def search_vector(self, scope: Scope, vector: Vector, *, limit: int, filters: Filters) -> list[Candidate]:
        """Top cosine similarities (vectors are normalized)."""
        ...

    def vector_scores(self, scope: Scope, vector: Vector, memory_ids: Sequence[str]) -> dict[str, float]:
        """Cosine of ``vector`` with each listed memory of ``scope`` that has an embedding."""
        ...
