"""Shared fixtures: storage pairs (fake and SQLite), a fixed clock, memory factories."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from memvault.adapters.embedders.hashing import HashingEmbedder
from memvault.adapters.local.sqlite_db import SqliteDatabase
from memvault.adapters.local.sqlite_store import SqliteMemoryRepository, SqliteSearchIndex
from memvault.domain.indexing import content_hash
from memvault.domain.models import Memory, Scope
from memvault.ports import MemoryRepository, SearchIndex
from tests.fakes import FixedClock, InMemoryMemoryRepository, InMemorySearchIndex

T0 = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)
DIM = 64

SHARED = Path(__file__).resolve().parents[2] / "shared"


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(T0)


@dataclass
class Storage:
    name: str
    repo: MemoryRepository
    index: SearchIndex

    def put(self, memory: Memory) -> Memory:
        self.repo.create(memory)
        if not self.index.maintained_by_repository:
            self.index.upsert([memory])
        return memory

    def replace(self, memory: Memory, expected_version: int) -> None:
        self.repo.update(memory, expected_version)
        if not self.index.maintained_by_repository:
            self.index.upsert([memory])

    def drop(self, scope: Scope, memory_id: str) -> bool:
        ok = self.repo.delete(scope, memory_id)
        if ok and not self.index.maintained_by_repository:
            self.index.remove(scope, [memory_id])
        return ok


def make_storage(kind: str, tmp_path: Path, dim: int = DIM) -> Storage:
    if kind == "memory":
        return Storage(kind, InMemoryMemoryRepository(), InMemorySearchIndex())
    db = SqliteDatabase(tmp_path / "memvault.sqlite3")
    return Storage(kind, SqliteMemoryRepository(db), SqliteSearchIndex(db, dim))


@pytest.fixture(params=["memory", "sqlite"])
def storage(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Storage]:
    yield make_storage(request.param, tmp_path)


_counter = itertools.count()
_embedder = HashingEmbedder(DIM)


def _ulid(n: int) -> str:
    alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
    out = ""
    for _ in range(26):
        out = alphabet[n % 32] + out
        n //= 32
    return out


MemoryFactory = Callable[..., Memory]


@pytest.fixture
def make_memory() -> MemoryFactory:
    def factory(scope: Scope, content: str, **kw: object) -> Memory:
        n = next(_counter)
        created = kw.pop("created_at", T0)
        type_ = str(kw.pop("type", "fact"))
        vec = kw.pop("embedding", None)
        if vec is None:
            vec = _embedder.embed_query(content).tolist()
        data: dict[str, object] = {
            "id": _ulid(10**12 + n),
            "tenant_id": scope.tenant_id,
            "agent_id": scope.agent_id,
            "user_id": scope.user_id,
            "type": type_,
            "content": content,
            "created_at": created,
            "updated_at": kw.pop("updated_at", created),
            "content_hash": content_hash(type_, content),
            "embedding": vec,
            "embedding_model": "hashing-v1",
            "embedding_status": "ready",
        }
        data.update(kw)
        return Memory.model_validate(data)

    return factory


def unit(vec: list[float]) -> list[float]:
    a = np.asarray(vec, dtype=np.float32)
    return (a / np.linalg.norm(a)).tolist()
