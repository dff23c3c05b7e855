"""SQLite-specific: the common-term cutoff on large stores (see CUTOFF_* in sqlite_store)."""

from __future__ import annotations

from pathlib import Path

from memvault.adapters.local import sqlite_store
from memvault.domain.models import Filters, Scope
from memvault.domain.text import analyze
from tests.conftest import MemoryFactory, make_storage

A = Scope(tenant_id="t1", agent_id="a1", user_id="u1")


def test_common_terms_do_not_drive_candidates_but_rare_ones_do(
    tmp_path: Path, make_memory: MemoryFactory
) -> None:
    storage = make_storage("sqlite", tmp_path)
    common = [
        make_memory(A, f"the user asked about weather number {i}")
        for i in range(sqlite_store.CUTOFF_MIN_DOCS)
    ]
    storage.repo.create_many(common)
    rare = storage.put(make_memory(A, "the user asked about zeppelins"))
    hits = storage.index.search_keyword(A, analyze("user asked about zeppelins"), limit=50, filters=Filters())
    assert [h.id for h in hits] == [rare.id]
    assert hits[0].score > 0.5  # the rare term carries nearly all of the query's idf
    # with only common terms, the rarest still find candidates
    only_common = storage.index.search_keyword(A, analyze("user asked"), limit=5, filters=Filters())
    assert len(only_common) == 5
