"""The one composition root: ``build_services(settings, **overrides)`` wires ports to adapters.

Imports of adapters are lazy so a Lambda function loads only what its backend needs. Tests pass
overrides (fakes, a fixed clock, a hashing embedder) instead of patching.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from memvault.config import Settings, get_settings
from memvault.domain.scoring import Calibration, calibration_for
from memvault.ports import Clock, Embedder, IdFactory, MemoryRepository, SearchIndex
from memvault.services.memories import MemoryService
from memvault.services.recall import RecallService
from memvault.services.snapshot import SnapshotService


@dataclass
class Services:
    settings: Settings
    repository: MemoryRepository
    index: SearchIndex
    embedder: Embedder
    memories: MemoryService
    recall: RecallService
    snapshot: SnapshotService


def build_embedder(settings: Settings) -> Embedder:
    from memvault.adapters.embedders.cache import CachedEmbedder

    inner: Embedder
    if settings.embedder == "e5":
        from memvault.adapters.embedders.local import E5Embedder

        inner = E5Embedder(threads=settings.embed_threads, batch_threads=settings.embed_batch_threads)
    elif settings.embedder == "use":
        from memvault.adapters.embedders.local import UseEmbedder

        inner = UseEmbedder(threads=settings.embed_threads, batch_threads=settings.embed_batch_threads)
    else:
        from memvault.adapters.embedders.hashing import HashingEmbedder

        inner = HashingEmbedder()
    return CachedEmbedder(inner, size=settings.recall.query_cache_size)


def build_services(
    settings: Settings,
    *,
    repository: MemoryRepository | None = None,
    index: SearchIndex | None = None,
    embedder: Embedder | None = None,
    clock: Clock | None = None,
    ids: IdFactory | None = None,
    calibration: Calibration | None = None,
) -> Services:
    from memvault.adapters.system import SystemClock, UlidFactory

    embedder = embedder or build_embedder(settings)
    clock = clock or SystemClock()
    ids = ids or UlidFactory()
    calibration = calibration or calibration_for(embedder.model_id)
    if repository is None or index is None:
        repository, index = _storage(settings, embedder, repository, index)
    memories = MemoryService(
        settings=settings,
        repository=repository,
        index=index,
        embedder=embedder,
        calibration=calibration,
        clock=clock,
        ids=ids,
    )
    recall = RecallService(
        settings=settings.recall,
        memory_types=settings.memory_types,
        repository=repository,
        index=index,
        embedder=embedder,
        calibration=calibration,
        clock=clock,
    )
    snapshot = SnapshotService(settings=settings.snapshot, repository=repository, recall=recall, clock=clock)
    return Services(settings, repository, index, embedder, memories, recall, snapshot)


def _storage(
    settings: Settings, embedder: Embedder, repository: MemoryRepository | None, index: SearchIndex | None
) -> tuple[Any, Any]:
    if settings.backend == "local":
        from memvault.adapters.local.sqlite_db import SqliteDatabase
        from memvault.adapters.local.sqlite_store import SqliteMemoryRepository, SqliteSearchIndex

        db = SqliteDatabase(settings.database_path)
        return (
            repository or SqliteMemoryRepository(db),
            index or SqliteSearchIndex(db, embedder.dimension),
        )
    raise NotImplementedError("MEMVAULT_BACKEND=aws arrives with the AWS adapters (issue 4)")


@cache
def services() -> Services:
    """The process-wide services, built once from the environment's settings."""
    return build_services(get_settings())
