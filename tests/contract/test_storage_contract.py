"""Contract of MemoryRepository + SearchIndex, run against every adapter (in-memory fake, SQLite;
DynamoDB joins with the AWS adapters). Isolation is tested by trying to cross it."""

from __future__ import annotations

from datetime import timedelta

import pytest

from memvault.adapters.embedders.hashing import HashingEmbedder
from memvault.domain.errors import VersionConflictError
from memvault.domain.models import Filters, Scope, SecurityLevel
from memvault.domain.text import analyze
from memvault.ports import IdempotencyRecord, ListQuery
from tests.conftest import DIM, T0, MemoryFactory, Storage

A = Scope(tenant_id="t1", agent_id="a1", user_id="u1")
OTHER_TENANT = Scope(tenant_id="t2", agent_id="a1", user_id="u1")
OTHER_AGENT = Scope(tenant_id="t1", agent_id="a2", user_id="u1")
OTHER_USER = Scope(tenant_id="t1", agent_id="a1", user_id="u2")
AGENT_WIDE = Scope(tenant_id="t1", agent_id="a1", user_id="")
OTHERS = [OTHER_TENANT, OTHER_AGENT, OTHER_USER, AGENT_WIDE]

emb = HashingEmbedder(DIM)


def test_saved_memory_reads_back_whole(storage: Storage, make_memory: MemoryFactory) -> None:
    m = storage.put(make_memory(A, "User prefers dark mode", tags=["ui"], metadata={"k": [1, 2]}))
    got = storage.repo.get(A, m.id)
    assert got is not None
    assert got.content == "User prefers dark mode"
    assert got.tags == ["ui"]
    assert got.metadata == {"k": [1, 2]}
    assert got.embedding is not None and len(got.embedding) == DIM
    assert got.created_at == T0


@pytest.mark.parametrize("other", OTHERS, ids=["tenant", "agent", "user", "agent-wide"])
def test_memory_of_scope_a_is_invisible_through_scope_b(
    storage: Storage, make_memory: MemoryFactory, other: Scope
) -> None:
    m = storage.put(make_memory(A, "secret project codename bluebird", tags=["proj"], pinned=True))
    assert storage.repo.get(other, m.id) is None
    assert storage.repo.get_many(other, [m.id]) == []
    assert storage.repo.scoring_rows(other, [m.id]) == []
    assert storage.repo.find_by_hash(other, m.content_hash, None) is None
    assert storage.repo.count(other) == 0
    assert storage.repo.list_page(other, ListQuery()).items == []
    assert storage.repo.pinned(other, Filters(), 10) == []
    assert storage.repo.recent(other, T0 - timedelta(days=1), Filters(), 10) == []
    assert list(storage.repo.iter_scope(other)) == []
    assert (
        storage.index.search_keyword(other, analyze("bluebird codename"), limit=10, filters=Filters()) == []
    )
    assert storage.index.search_vector(other, emb.embed_query("bluebird"), limit=10, filters=Filters()) == []
    # not updated or deleted through the other scope either
    assert storage.repo.delete(other, m.id) is False
    forged = m.model_copy(
        update={
            "tenant_id": other.tenant_id,
            "agent_id": other.agent_id,
            "user_id": other.user_id,
            "content": "hijacked",
            "version": 2,
        }
    )
    with pytest.raises(VersionConflictError):
        storage.repo.update(forged, expected_version=1)
    storage.repo.touch(other, [m.id], T0)
    still = storage.repo.get(A, m.id)
    assert still is not None and still.content == m.content and still.access_count == 0


def test_update_checks_version_and_replaces_the_record(storage: Storage, make_memory: MemoryFactory) -> None:
    m = storage.put(make_memory(A, "deploys happen on Fridays"))
    changed = m.model_copy(update={"content": "deploys happen on Tuesdays", "version": 2})
    storage.replace(changed, expected_version=1)
    with pytest.raises(VersionConflictError):
        storage.repo.update(changed.model_copy(update={"version": 3}), expected_version=1)
    got = storage.repo.get(A, m.id)
    assert got is not None and got.version == 2 and got.content.endswith("Tuesdays")
    # the index follows the record
    hits = storage.index.search_keyword(A, analyze("tuesdays"), limit=5, filters=Filters())
    assert [h.id for h in hits] == [m.id]
    assert storage.index.search_keyword(A, analyze("fridays"), limit=5, filters=Filters()) == []


def test_delete_removes_record_and_index_entries(storage: Storage, make_memory: MemoryFactory) -> None:
    m = storage.put(make_memory(A, "the staging database is postgres"))
    storage.index.search_vector(A, emb.embed_query("postgres"), limit=5, filters=Filters())  # warm caches
    assert storage.drop(A, m.id) is True
    assert storage.repo.get(A, m.id) is None
    assert storage.drop(A, m.id) is False
    assert storage.index.search_keyword(A, analyze("postgres"), limit=5, filters=Filters()) == []
    assert storage.index.search_vector(A, emb.embed_query("postgres"), limit=5, filters=Filters()) == []


def test_delete_with_stale_version_is_refused(storage: Storage, make_memory: MemoryFactory) -> None:
    m = storage.put(make_memory(A, "x marks the spot"))
    with pytest.raises(VersionConflictError):
        storage.repo.delete(A, m.id, expected_version=7)
    assert storage.repo.get(A, m.id) is not None


def test_list_pages_newest_first_with_filters(storage: Storage, make_memory: MemoryFactory) -> None:
    for i in range(7):
        storage.put(
            make_memory(
                A,
                f"note {i}",
                created_at=T0 + timedelta(minutes=i),
                type="todo" if i % 2 else "fact",
                tags=["odd"] if i % 2 else [],
            )
        )
    first = storage.repo.list_page(A, ListQuery(limit=3))
    assert [m.content for m in first.items] == ["note 6", "note 5", "note 4"]
    assert first.next_cursor
    second = storage.repo.list_page(A, ListQuery(limit=3, cursor=first.next_cursor))
    assert [m.content for m in second.items] == ["note 3", "note 2", "note 1"]
    third = storage.repo.list_page(A, ListQuery(limit=3, cursor=second.next_cursor))
    assert [m.content for m in third.items] == ["note 0"] and third.next_cursor is None
    todos = storage.repo.list_page(A, ListQuery(types=("todo",)))
    assert {m.content for m in todos.items} == {"note 1", "note 3", "note 5"}
    tagged = storage.repo.list_page(A, ListQuery(tags=("odd",)))
    assert len(tagged.items) == 3


def test_archived_memories_are_hidden_unless_asked(storage: Storage, make_memory: MemoryFactory) -> None:
    m = storage.put(make_memory(A, "old runbook for kafka", archived=True))
    assert storage.repo.count(A) == 0 and storage.repo.count(A, include_archived=True) == 1
    assert storage.repo.list_page(A, ListQuery()).items == []
    assert len(storage.repo.list_page(A, ListQuery(include_archived=True)).items) == 1
    assert storage.index.search_keyword(A, analyze("kafka"), limit=5, filters=Filters()) == []
    assert storage.index.search_vector(A, emb.embed_query("kafka runbook"), limit=5, filters=Filters()) == []
    both = Filters(include_archived=True)
    assert [c.id for c in storage.index.search_keyword(A, analyze("kafka"), limit=5, filters=both)] == [m.id]


def test_index_filters_by_type_tag_session_security_and_expiry(
    storage: Storage, make_memory: MemoryFactory
) -> None:
    base = storage.put(make_memory(A, "coffee order oat latte", type="preference", tags=["food"]))
    other_type = storage.put(make_memory(A, "coffee machine is broken", type="fact"))
    in_session = storage.put(make_memory(A, "coffee talk in session", session_id="s1"))
    secret = storage.put(make_memory(A, "coffee budget salary", security_level=SecurityLevel.RESTRICTED))
    expired = storage.put(make_memory(A, "coffee coupon", expires_at=T0 + timedelta(hours=1)))
    terms = analyze("coffee")
    vec = emb.embed_query("coffee")

    def both(f: Filters) -> tuple[set[str], set[str]]:
        kw = {c.id for c in storage.index.search_keyword(A, terms, limit=50, filters=f)}
        vv = {c.id for c in storage.index.search_vector(A, vec, limit=50, filters=f)}
        return kw, vv

    kw, vv = both(Filters())
    assert kw == {base.id, other_type.id, secret.id, expired.id}
    assert base.id in vv and in_session.id not in vv
    kw, vv = both(Filters(types=("preference",)))
    assert kw == {base.id} and vv == {base.id}
    kw, vv = both(Filters(tags=("food",)))
    assert kw == {base.id} and vv == {base.id}
    kw, _ = both(Filters(session_id="s1"))
    assert in_session.id in kw
    kw, vv = both(Filters(max_security_rank=SecurityLevel.INTERNAL.rank))
    assert secret.id not in kw and secret.id not in vv
    kw, vv = both(Filters(as_of=T0 + timedelta(hours=2)))
    assert expired.id not in kw and expired.id not in vv


def test_keyword_scores_are_ratios_to_an_ideal_document(storage: Storage, make_memory: MemoryFactory) -> None:
    for i in range(20):
        storage.put(make_memory(A, f"routine log line number {i} about the weather"))
    hit = storage.put(make_memory(A, "deploy failed with ERR_4711 on the gateway"))
    result = storage.index.search_keyword(A, analyze("ERR_4711"), limit=5, filters=Filters())
    assert result[0].id == hit.id
    assert 0.5 < result[0].score < 3.0


def test_vector_search_returns_cosines_in_order(storage: Storage, make_memory: MemoryFactory) -> None:
    texts = ["alpha beta gamma", "alpha beta", "delta epsilon"]
    ms = [storage.put(make_memory(A, t)) for t in texts]
    hits = storage.index.search_vector(A, emb.embed_query("alpha beta gamma"), limit=3, filters=Filters())
    assert hits[0].id == ms[0].id and hits[0].score == pytest.approx(1.0, abs=1e-5)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_touch_counts_accesses_without_new_version(storage: Storage, make_memory: MemoryFactory) -> None:
    m = storage.put(make_memory(A, "touch me"))
    storage.repo.touch(A, [m.id], T0 + timedelta(hours=1))
    storage.repo.touch(A, [m.id], T0 + timedelta(hours=2))
    got = storage.repo.get(A, m.id)
    assert got is not None and got.access_count == 2 and got.version == 1
    assert got.accessed_at == T0 + timedelta(hours=2)


def test_idempotency_record_is_written_with_the_memory(storage: Storage, make_memory: MemoryFactory) -> None:
    m = make_memory(A, "idempotent")
    rec = IdempotencyRecord("t1", "key-1", "h", {"id": m.id, "action": "created"}, T0)
    storage.repo.create(m, rec)
    got = storage.repo.get_idempotency("t1", "key-1")
    assert got is not None and got.response["id"] == m.id and got.request_hash == "h"
    assert storage.repo.get_idempotency("t2", "key-1") is None
    storage.repo.put_idempotency(
        IdempotencyRecord("t1", "key-2", "h2", {"id": m.id, "action": "unchanged"}, T0)
    )
    assert storage.repo.get_idempotency("t1", "key-2").response["action"] == "unchanged"  # type: ignore[union-attr]


def test_find_by_name_and_hash_respect_session(storage: Storage, make_memory: MemoryFactory) -> None:
    m = storage.put(make_memory(A, "tabs not spaces", name="indent", type="preference", session_id="s9"))
    assert storage.repo.find_by_name(A, "preference", "indent", "s9") is not None
    assert storage.repo.find_by_name(A, "preference", "indent", None) is None
    assert storage.repo.find_by_hash(A, m.content_hash, "s9") is not None
    assert storage.repo.find_by_hash(A, m.content_hash, None) is None


def test_recent_and_pinned(storage: Storage, make_memory: MemoryFactory) -> None:
    old = storage.put(make_memory(A, "old", created_at=T0 - timedelta(days=3)))
    new = storage.put(make_memory(A, "new", created_at=T0))
    pin = storage.put(make_memory(A, "pinned rule", pinned=True, created_at=T0 - timedelta(days=9)))
    recent = storage.repo.recent(A, T0 - timedelta(days=1), Filters(), 10)
    assert [m.id for m in recent] == [new.id]
    assert [m.id for m in storage.repo.pinned(A, Filters(), 10)] == [pin.id]
    assert old.id not in {m.id for m in recent}


def test_create_many_is_all_or_nothing(storage: Storage, make_memory: MemoryFactory) -> None:
    batch = [make_memory(A, f"bulk item {i}") for i in range(5)]
    storage.repo.create_many(batch)
    if not storage.index.maintained_by_repository:
        storage.index.upsert(batch)
    assert storage.repo.count(A) == 5
    assert len(storage.index.search_keyword(A, analyze("bulk item"), limit=10, filters=Filters())) == 5
    clash = [make_memory(A, "new one"), batch[0]]
    with pytest.raises(VersionConflictError):
        storage.repo.create_many(clash)
    assert storage.repo.count(A) == 5


def test_vector_scores_only_for_ids_of_the_scope(storage: Storage, make_memory: MemoryFactory) -> None:
    mine = storage.put(make_memory(A, "alpha beta gamma"))
    theirs = storage.put(make_memory(OTHER_TENANT, "alpha beta gamma"))
    q = emb.embed_query("alpha beta gamma")
    scores = storage.index.vector_scores(A, q, [mine.id, theirs.id, "01ARZ3NDEKTSV4RRFFQ69G5FAV"])
    assert set(scores) == {mine.id}
    assert scores[mine.id] == pytest.approx(1.0, abs=1e-5)


def test_get_many_leaves_out_embeddings_unless_asked(storage: Storage, make_memory: MemoryFactory) -> None:
    m = storage.put(make_memory(A, "vectors are heavy"))
    assert storage.repo.get_many(A, [m.id])[0].embedding is None
    full = storage.repo.get_many(A, [m.id], with_embeddings=True)[0]
    assert full.embedding is not None and len(full.embedding) == DIM


def test_keyword_filters_hold_when_many_better_matches_are_filtered_out(
    storage: Storage, make_memory: MemoryFactory
) -> None:
    for i in range(260):
        storage.put(make_memory(A, f"kafka kafka kafka broker {i}", type="fact"))
    todos = [
        storage.put(make_memory(A, f"kafka todo note {i} with many other words in it", type="todo"))
        for i in range(3)
    ]
    hits = storage.index.search_keyword(A, analyze("kafka"), limit=10, filters=Filters(types=("todo",)))
    assert {h.id for h in hits} == {t.id for t in todos}


def test_scoring_rows_carry_the_signals_recall_needs(storage: Storage, make_memory: MemoryFactory) -> None:
    en = storage.put(make_memory(A, "plain english", importance=0.9, pinned=True))
    zh = storage.put(make_memory(A, "用户喜欢小狗", updated_at=T0 + timedelta(days=1)))
    storage.repo.touch(A, [zh.id], T0)
    rows = {r.id: r for r in storage.repo.scoring_rows(A, [en.id, zh.id, "01ARZ3NDEKTSV4RRFFQ69G5FAV"])}
    assert set(rows) == {en.id, zh.id}
    assert (rows[en.id].importance, rows[en.id].pinned, rows[en.id].cjk) == (0.9, True, False)
    assert rows[zh.id].cjk is True and rows[zh.id].access_count == 1
    assert rows[zh.id].updated_at == T0 + timedelta(days=1)
