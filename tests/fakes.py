"""In-memory fakes of the storage ports. They honour the same contract suite as the real adapters
(tests/contract), so unit tests of the services can use them instead of mocks."""

from __future__ import annotations

import base64
import copy
import math
from collections import Counter
from collections.abc import Iterator, Sequence
from datetime import datetime, timedelta

import numpy as np

from memvault.domain.errors import ValidationError, VersionConflictError
from memvault.domain.indexing import document_terms
from memvault.domain.models import Filters, Memory, Page, Scope
from memvault.domain.scoring import is_mostly_cjk
from memvault.ports import Candidate, IdempotencyRecord, ListQuery, ScoringRow, Vector


def _visible(m: Memory, f: Filters) -> bool:
    if not f.include_archived and m.archived:
        return False
    if f.session_id is None and m.session_id is not None:
        return False
    if f.session_id is not None and m.session_id not in (None, f.session_id):
        return False
    if f.types and m.type not in f.types:
        return False
    if f.tags and not set(f.tags) & set(m.tags):
        return False
    if m.security_level.rank > f.max_security_rank:
        return False
    return not (f.as_of is not None and m.expires_at is not None and m.expires_at <= f.as_of)


class FixedClock:
    def __init__(self, now: datetime) -> None:
        self.current = now

    def now(self) -> datetime:
        return self.current

    def advance(self, **kwargs: float) -> None:
        self.current += timedelta(**kwargs)


class InMemoryMemoryRepository:
    def __init__(self) -> None:
        self._scopes: dict[str, dict[str, Memory]] = {}
        self._idem: dict[tuple[str, str], IdempotencyRecord] = {}

    def _scope(self, scope: Scope) -> dict[str, Memory]:
        return self._scopes.setdefault(scope.key, {})

    def get(self, scope: Scope, memory_id: str) -> Memory | None:
        m = self._scope(scope).get(memory_id)
        return copy.deepcopy(m) if m else None

    def get_many(
        self, scope: Scope, memory_ids: Sequence[str], *, with_embeddings: bool = False
    ) -> list[Memory]:
        store = self._scope(scope)
        out = [copy.deepcopy(store[i]) for i in dict.fromkeys(memory_ids) if i in store]
        if not with_embeddings:
            for m in out:
                m.embedding = None
        return out

    def scoring_rows(self, scope: Scope, memory_ids: Sequence[str]) -> list[ScoringRow]:
        store = self._scope(scope)
        return [
            ScoringRow(m.id, m.updated_at, m.pinned, m.importance, m.access_count, is_mostly_cjk(m.content))
            for m in (store[i] for i in dict.fromkeys(memory_ids) if i in store)
        ]

    def find_by_hash(self, scope: Scope, content_hash: str, session_id: str | None) -> Memory | None:
        for m in self._scope(scope).values():
            if m.content_hash == content_hash and m.session_id == session_id:
                return copy.deepcopy(m)
        return None

    def find_by_name(self, scope: Scope, type_: str, name: str, session_id: str | None) -> Memory | None:
        for m in self._scope(scope).values():
            if m.type == type_ and m.name == name and m.session_id == session_id:
                return copy.deepcopy(m)
        return None

    def create(self, memory: Memory, idempotency: IdempotencyRecord | None = None) -> None:
        store = self._scope(memory.scope)
        if memory.id in store:
            raise VersionConflictError(f"memory {memory.id} exists", field="id")
        store[memory.id] = copy.deepcopy(memory)
        if idempotency:
            self._idem[(idempotency.tenant_id, idempotency.key)] = idempotency

    def create_many(self, memories: Sequence[Memory]) -> None:
        if any(m.id in self._scope(m.scope) for m in memories) or len({m.id for m in memories}) < len(
            memories
        ):
            raise VersionConflictError("a memory with one of these ids exists", field="id")
        for m in memories:
            self.create(m)

    def update(
        self, memory: Memory, expected_version: int, idempotency: IdempotencyRecord | None = None
    ) -> None:
        store = self._scope(memory.scope)
        current = store.get(memory.id)
        if current is None or current.version != expected_version:
            raise VersionConflictError(
                f"memory {memory.id} is not at version {expected_version}", field="version"
            )
        stored = copy.deepcopy(memory)
        stored.access_count, stored.accessed_at = current.access_count, current.accessed_at
        store[memory.id] = stored
        if idempotency:
            self._idem[(idempotency.tenant_id, idempotency.key)] = idempotency

    def delete(self, scope: Scope, memory_id: str, expected_version: int | None = None) -> bool:
        store = self._scope(scope)
        current = store.get(memory_id)
        if current is None:
            return False
        if expected_version is not None and current.version != expected_version:
            raise VersionConflictError(
                f"memory {memory_id} is not at version {expected_version}", field="version"
            )
        del store[memory_id]
        return True

    def list_page(self, scope: Scope, query: ListQuery) -> Page:
        items = [
            m
            for m in self._scope(scope).values()
            if (query.include_archived or not m.archived)
            and (query.session_id is None or m.session_id == query.session_id)
            and (not query.types or m.type in query.types)
            and (not query.tags or set(query.tags) & set(m.tags))
        ]
        items.sort(key=lambda m: (m.created_at, m.id), reverse=True)
        if query.cursor:
            try:
                created, last = base64.urlsafe_b64decode(query.cursor.encode()).decode().split("|", 1)
            except ValueError:
                raise ValidationError("cursor is not valid", field="cursor") from None
            items = [m for m in items if (m.created_at.isoformat(), m.id) < (created, last)]
        page = items[: query.limit]
        cursor = None
        if len(items) > query.limit:
            tail = page[-1]
            cursor = base64.urlsafe_b64encode(f"{tail.created_at.isoformat()}|{tail.id}".encode()).decode()
        return Page(items=[copy.deepcopy(m) for m in page], next_cursor=cursor)

    def count(self, scope: Scope, include_archived: bool = False) -> int:
        return sum(1 for m in self._scope(scope).values() if include_archived or not m.archived)

    def recent(self, scope: Scope, since: datetime, filters: Filters, limit: int) -> list[Memory]:
        items = [m for m in self._scope(scope).values() if m.created_at >= since and _visible(m, filters)]
        items.sort(key=lambda m: (m.created_at, m.id), reverse=True)
        return [copy.deepcopy(m) for m in items[:limit]]

    def pinned(self, scope: Scope, filters: Filters, limit: int) -> list[Memory]:
        items = [m for m in self._scope(scope).values() if m.pinned and _visible(m, filters)]
        items.sort(key=lambda m: m.updated_at, reverse=True)
        return [copy.deepcopy(m) for m in items[:limit]]

    def touch(self, scope: Scope, memory_ids: Sequence[str], at: datetime) -> None:
        store = self._scope(scope)
        for i in memory_ids:
            if i in store:
                store[i].access_count += 1
                store[i].accessed_at = at

    def get_idempotency(self, tenant_id: str, key: str) -> IdempotencyRecord | None:
        return self._idem.get((tenant_id, key))

    def put_idempotency(self, record: IdempotencyRecord) -> None:
        self._idem[(record.tenant_id, record.key)] = record

    def iter_scope(self, scope: Scope) -> Iterator[Memory]:
        for m in list(self._scope(scope).values()):
            yield copy.deepcopy(m)


class InMemorySearchIndex:
    """BM25 (k1=1.2, b=0.75, FTS5's idf) and exact cosine, per scope, written through by services."""

    maintained_by_repository = False

    def __init__(self) -> None:
        self._docs: dict[str, dict[str, tuple[Memory, Counter[str]]]] = {}

    def upsert(self, memories: Sequence[Memory]) -> None:
        for m in memories:
            self._docs.setdefault(m.scope.key, {})[m.id] = (copy.deepcopy(m), Counter(document_terms(m)))

    def remove(self, scope: Scope, memory_ids: Sequence[str]) -> None:
        docs = self._docs.get(scope.key, {})
        for i in memory_ids:
            docs.pop(i, None)

    def search_keyword(
        self, scope: Scope, terms: Sequence[str], *, limit: int, filters: Filters
    ) -> list[Candidate]:
        query = list(dict.fromkeys(t for t in terms if t))
        all_docs = [d for docs in self._docs.values() for d in docs.values()]
        total = len(all_docs)
        if not query or not total:
            return []
        avgdl = sum(sum(c.values()) for _, c in all_docs) / total
        idf: dict[str, float] = {}
        for t in query:
            n = sum(1 for _, c in all_docs if t in c)
            if n:
                raw = math.log((total - n + 0.5) / (n + 0.5))
                idf[t] = raw if raw > 0 else 1e-6
        ideal = sum(idf.values())
        scored = []
        for m, counts in self._docs.get(scope.key, {}).values():
            if not _visible(m, filters):
                continue
            dl = sum(counts.values())
            s = 0.0
            for t, w in idf.items():
                f = counts.get(t, 0)
                if f:
                    s += w * f * 2.2 / (f + 1.2 * (0.25 + 0.75 * dl / avgdl))
            if s > 0:
                scored.append(Candidate(id=m.id, score=s / ideal if ideal else 0.0))
        scored.sort(key=lambda c: -c.score)
        return scored[:limit]

    def vector_scores(self, scope: Scope, vector: Vector, memory_ids: Sequence[str]) -> dict[str, float]:
        docs = self._docs.get(scope.key, {})
        return {
            i: float(np.dot(np.asarray(docs[i][0].embedding, dtype=np.float32), vector))
            for i in memory_ids
            if i in docs and docs[i][0].embedding is not None
        }

    def search_vector(self, scope: Scope, vector: Vector, *, limit: int, filters: Filters) -> list[Candidate]:
        out = []
        for m, _ in self._docs.get(scope.key, {}).values():
            if m.embedding is None or not _visible(m, filters):
                continue
            out.append(
                Candidate(id=m.id, score=float(np.dot(np.asarray(m.embedding, dtype=np.float32), vector)))
            )
        out.sort(key=lambda c: -c.score)
        return out[:limit]
