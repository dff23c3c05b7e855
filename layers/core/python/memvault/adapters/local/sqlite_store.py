"""Embedded backend: ``SqliteMemoryRepository`` and ``SqliteSearchIndex`` over one SQLite file.

The repository writes the record, its keyword terms (FTS5) and its vector in one transaction, so
the index is never behind the records. Keyword terms are analyzed in Python (one analyzer for
every backend, see ``memvault.domain.text``) and stored hex-encoded so FTS5's ``ascii`` tokenizer
keeps each analyzed token whole. Vector search is exact, with numpy, over an in-memory matrix per
scope that is refreshed incrementally from a write sequence number (so writes by another process
are seen too).
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np

from memvault.adapters.local.sqlite_db import SqliteDatabase
from memvault.domain.errors import ValidationError, VersionConflictError
from memvault.domain.indexing import document_terms
from memvault.domain.models import Filters, Memory, Page, Scope
from memvault.domain.scoring import is_mostly_cjk
from memvault.ports import Candidate, IdempotencyRecord, ListQuery, ScoringRow, Vector

_BODY_EXCLUDE = {"embedding", "access_count", "accessed_at"}


def _ts(dt: datetime | None) -> str | None:
    if dt is None:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.astimezone(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def _term(token: str) -> str:
    """FTS5-safe form of an analyzed token (hex of its UTF-8 bytes)."""
    return token.encode().hex()


def scope_prefix(scope: Scope) -> str:
    """Every FTS term carries its scope: posting lists are per scope, so a keyword query reads
    only its own scope's postings and document frequencies are scope-local ("x" is not a hex
    digit, so prefix and term cannot run together)."""
    return hashlib.sha256(scope.key.encode()).hexdigest()[:16] + "x"


def _pack(vector: Sequence[float] | None) -> bytes | None:
    if vector is None:
        return None
    return np.asarray(vector, dtype=np.float32).tobytes()


def _row_to_memory(row: sqlite3.Row) -> Memory:
    data: dict[str, Any] = json.loads(row["body"])
    data["access_count"] = row["access_count"]
    data["accessed_at"] = row["accessed_at"]
    blob = row["embedding"]
    if blob is not None:
        data["embedding"] = np.frombuffer(blob, dtype=np.float32).tolist()
    return Memory.model_validate(data)


_COLS = "body, access_count, accessed_at, embedding"
_SELECT = f"SELECT {_COLS} FROM memories"


def _filter_sql(filters: Filters, alias: str = "m") -> tuple[str, list[Any]]:
    """SQL conditions for ``filters`` (scope is added by callers)."""
    clauses: list[str] = []
    params: list[Any] = []
    if not filters.include_archived:
        clauses.append(f"{alias}.archived = 0")
    if filters.session_id is None:
        clauses.append(f"{alias}.session_id IS NULL")
    else:
        clauses.append(f"({alias}.session_id IS NULL OR {alias}.session_id = ?)")
        params.append(filters.session_id)
    if filters.types:
        clauses.append(f"{alias}.type IN ({','.join('?' * len(filters.types))})")
        params.extend(filters.types)
    if filters.tags:
        clauses.append(
            f"{alias}.rowid IN (SELECT memory_rowid FROM memory_tags WHERE scope_key = {alias}.scope_key"
            f" AND tag IN ({','.join('?' * len(filters.tags))}))"
        )
        params.extend(filters.tags)
    clauses.append(f"{alias}.security_rank <= ?")
    params.append(filters.max_security_rank)
    if filters.as_of is not None:
        clauses.append(f"({alias}.expires_at IS NULL OR {alias}.expires_at > ?)")
        params.append(_ts(filters.as_of))
    return " AND ".join(clauses), params


class SqliteMemoryRepository:
    """MemoryRepository on SQLite; keeps the FTS terms and vectors in the same transaction."""

    def __init__(self, db: SqliteDatabase) -> None:
        self.db = db

    # -- reads -------------------------------------------------------------------------------
    def get(self, scope: Scope, memory_id: str) -> Memory | None:
        row = (
            self.db.connection()
            .execute(f"{_SELECT} WHERE scope_key = ? AND id = ?", (scope.key, memory_id))
            .fetchone()
        )
        return _row_to_memory(row) if row else None

    def get_many(
        self, scope: Scope, memory_ids: Sequence[str], *, with_embeddings: bool = False
    ) -> list[Memory]:
        if not memory_ids:
            return []
        ids = list(dict.fromkeys(memory_ids))
        marks = ",".join("?" * len(ids))
        cols = _COLS if with_embeddings else "body, access_count, accessed_at, NULL AS embedding"
        rows = (
            self.db.connection()
            .execute(
                # unary + keeps the planner on the unique id index instead of scanning the scope
                f"SELECT {cols} FROM memories WHERE +scope_key = ? AND id IN ({marks})",
                (scope.key, *ids),
            )
            .fetchall()
        )
        return [_row_to_memory(r) for r in rows]

    def scoring_rows(self, scope: Scope, memory_ids: Sequence[str]) -> list[ScoringRow]:
        if not memory_ids:
            return []
        ids = list(dict.fromkeys(memory_ids))
        marks = ",".join("?" * len(ids))
        rows = (
            self.db.connection()
            .execute(
                "SELECT id, updated_at, pinned, importance, access_count, cjk FROM memories"
                f" WHERE +scope_key = ? AND id IN ({marks})",
                (scope.key, *ids),
            )
            .fetchall()
        )
        return [
            ScoringRow(
                id=r[0],
                updated_at=datetime.fromisoformat(r[1]),
                pinned=bool(r[2]),
                importance=float(r[3]),
                access_count=int(r[4]),
                cjk=bool(r[5]),
            )
            for r in rows
        ]

    def find_by_hash(self, scope: Scope, content_hash: str, session_id: str | None) -> Memory | None:
        row = (
            self.db.connection()
            .execute(
                f"{_SELECT} WHERE scope_key = ? AND content_hash = ? AND session_id IS ? LIMIT 1",
                (scope.key, content_hash, session_id),
            )
            .fetchone()
        )
        return _row_to_memory(row) if row else None

    def find_by_name(self, scope: Scope, type_: str, name: str, session_id: str | None) -> Memory | None:
        row = (
            self.db.connection()
            .execute(
                f"{_SELECT} WHERE scope_key = ? AND type = ? AND name = ? AND session_id IS ? LIMIT 1",
                (scope.key, type_, name, session_id),
            )
            .fetchone()
        )
        return _row_to_memory(row) if row else None

    def list_page(self, scope: Scope, query: ListQuery) -> Page:
        clauses = ["scope_key = ?"]
        params: list[Any] = [scope.key]
        if not query.include_archived:
            clauses.append("archived = 0")
        if query.session_id is not None:
            clauses.append("session_id = ?")
            params.append(query.session_id)
        if query.types:
            clauses.append(f"type IN ({','.join('?' * len(query.types))})")
            params.extend(query.types)
        if query.tags:
            clauses.append(
                "rowid IN (SELECT memory_rowid FROM memory_tags WHERE scope_key = ?"
                f" AND tag IN ({','.join('?' * len(query.tags))}))"
            )
            params.extend([scope.key, *query.tags])
        if query.cursor:
            created, last_id = decode_cursor(query.cursor)
            clauses.append("(created_at < ? OR (created_at = ? AND id < ?))")
            params.extend([created, created, last_id])
        sql = (
            "SELECT body, access_count, accessed_at, embedding, created_at, id FROM memories"
            f" WHERE {' AND '.join(clauses)} ORDER BY created_at DESC, id DESC LIMIT ?"
        )
        rows = self.db.connection().execute(sql, (*params, query.limit + 1)).fetchall()
        items = [_row_to_memory(r) for r in rows[: query.limit]]
        cursor = None
        if len(rows) > query.limit:
            last = rows[query.limit - 1]
            cursor = encode_cursor(last["created_at"], last["id"])
        return Page(items=items, next_cursor=cursor)

    def count(self, scope: Scope, include_archived: bool = False) -> int:
        sql = "SELECT count(*) FROM memories WHERE scope_key = ?"
        if not include_archived:
            sql += " AND archived = 0"
        return int(self.db.connection().execute(sql, (scope.key,)).fetchone()[0])

    def recent(self, scope: Scope, since: datetime, filters: Filters, limit: int) -> list[Memory]:
        cond, params = _filter_sql(filters)
        rows = (
            self.db.connection()
            .execute(
                f"SELECT m.body, m.access_count, m.accessed_at, m.embedding FROM memories m"
                f" WHERE m.scope_key = ? AND m.created_at >= ? AND {cond}"
                " ORDER BY m.created_at DESC, m.id DESC LIMIT ?",
                (scope.key, _ts(since), *params, limit),
            )
            .fetchall()
        )
        return [_row_to_memory(r) for r in rows]

    def pinned(self, scope: Scope, filters: Filters, limit: int) -> list[Memory]:
        cond, params = _filter_sql(filters)
        rows = (
            self.db.connection()
            .execute(
                f"SELECT m.body, m.access_count, m.accessed_at, m.embedding FROM memories m"
                f" WHERE m.scope_key = ? AND m.pinned = 1 AND {cond}"
                " ORDER BY m.updated_at DESC LIMIT ?",
                (scope.key, *params, limit),
            )
            .fetchall()
        )
        return [_row_to_memory(r) for r in rows]

    def get_idempotency(self, tenant_id: str, key: str) -> IdempotencyRecord | None:
        row = (
            self.db.connection()
            .execute(
                "SELECT request_hash, response, created_at FROM idempotency WHERE tenant_id = ? AND key = ?",
                (tenant_id, key),
            )
            .fetchone()
        )
        if row is None:
            return None
        return IdempotencyRecord(
            tenant_id=tenant_id,
            key=key,
            request_hash=row["request_hash"],
            response=json.loads(row["response"]),
            created_at=datetime.fromisoformat(row["created_at"].replace("Z", "+00:00")),
        )

    def put_idempotency(self, record: IdempotencyRecord) -> None:
        with self.db.transaction() as tx:
            self._put_idempotency(tx, record)

    def iter_scope(self, scope: Scope) -> Iterator[Memory]:
        last = -1
        while True:
            rows = (
                self.db.connection()
                .execute(
                    f"SELECT {_COLS}, rowid FROM memories WHERE scope_key = ? AND rowid > ?"
                    " ORDER BY rowid LIMIT 500",
                    (scope.key, last),
                )
                .fetchall()
            )
            if not rows:
                return
            for r in rows:
                yield _row_to_memory(r)
            last = rows[-1]["rowid"]

    # -- writes ------------------------------------------------------------------------------
    def create(self, memory: Memory, idempotency: IdempotencyRecord | None = None) -> None:
        with self.db.transaction() as tx:
            self._insert(tx, memory)
            if idempotency:
                self._put_idempotency(tx, idempotency)

    def create_many(self, memories: Sequence[Memory]) -> None:
        """Insert many new memories in one transaction (imports, bulk loads): all or nothing."""
        with self.db.transaction() as tx:
            for memory in memories:
                self._insert(tx, memory)

    def _insert(self, tx: sqlite3.Connection, memory: Memory) -> None:
        seq = self.db.next_seq(tx)
        if tx.execute("SELECT 1 FROM memories WHERE id = ?", (memory.id,)).fetchone():
            raise VersionConflictError(f"memory {memory.id} already exists", field="id")
        cur = tx.execute(
            "INSERT INTO memories (id, scope_key, tenant_id, agent_id, user_id, session_id, type, name,"
            " content_hash, archived, pinned, security_rank, created_at, updated_at, expires_at, version,"
            " importance, cjk, access_count, accessed_at, body, embedding, embedding_model, seq)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                memory.id,
                memory.scope.key,
                memory.tenant_id,
                memory.agent_id,
                memory.user_id,
                memory.session_id,
                *self._columns(memory),
                memory.access_count,
                _ts(memory.accessed_at),
                self._body(memory),
                _pack(memory.embedding),
                memory.embedding_model,
                seq,
            ),
        )
        self._write_derived(tx, int(cur.lastrowid or 0), memory, new=True)

    def update(
        self, memory: Memory, expected_version: int, idempotency: IdempotencyRecord | None = None
    ) -> None:
        with self.db.transaction() as tx:
            row = tx.execute(
                "SELECT rowid, version FROM memories WHERE scope_key = ? AND id = ?",
                (memory.scope.key, memory.id),
            ).fetchone()
            if row is None or row["version"] != expected_version:
                raise VersionConflictError(
                    f"memory {memory.id} is not at version {expected_version}", field="version"
                )
            seq = self.db.next_seq(tx)
            tx.execute(
                "UPDATE memories SET type = ?, name = ?, content_hash = ?, archived = ?, pinned = ?,"
                " security_rank = ?, created_at = ?, updated_at = ?, expires_at = ?, version = ?,"
                " importance = ?, cjk = ?, body = ?,"
                " embedding = ?, embedding_model = ?, session_id = ?, seq = ? WHERE rowid = ?",
                (
                    *self._columns(memory),
                    self._body(memory),
                    _pack(memory.embedding),
                    memory.embedding_model,
                    memory.session_id,
                    seq,
                    row["rowid"],
                ),
            )
            self._write_derived(tx, int(row["rowid"]), memory, new=False)
            if idempotency:
                self._put_idempotency(tx, idempotency)

    def delete(self, scope: Scope, memory_id: str, expected_version: int | None = None) -> bool:
        with self.db.transaction() as tx:
            row = tx.execute(
                "SELECT rowid, version FROM memories WHERE scope_key = ? AND id = ?", (scope.key, memory_id)
            ).fetchone()
            if row is None:
                return False
            if expected_version is not None and row["version"] != expected_version:
                raise VersionConflictError(
                    f"memory {memory_id} is not at version {expected_version}", field="version"
                )
            rowid = int(row["rowid"])
            tx.execute("DELETE FROM memory_fts WHERE rowid = ?", (rowid,))
            tx.execute("UPDATE counters SET value = value - 1 WHERE name = 'fts_rows'")
            tx.execute("UPDATE scope_rows SET value = value - 1 WHERE scope_key = ?", (scope.key,))
            tx.execute("DELETE FROM memory_tags WHERE memory_rowid = ?", (rowid,))
            tx.execute("DELETE FROM memories WHERE rowid = ?", (rowid,))
            tx.execute(
                "INSERT INTO tombstones (scope_key, memory_rowid, seq) VALUES (?, ?, ?)",
                (scope.key, rowid, self.db.next_seq(tx)),
            )
            return True

    def touch(self, scope: Scope, memory_ids: Sequence[str], at: datetime) -> None:
        if not memory_ids:
            return
        marks = ",".join("?" * len(memory_ids))
        with self.db.transaction() as tx:
            tx.execute(
                f"UPDATE memories SET access_count = access_count + 1, accessed_at = ?"
                f" WHERE +scope_key = ? AND id IN ({marks})",
                (_ts(at), scope.key, *memory_ids),
            )

    # -- helpers -----------------------------------------------------------------------------
    @staticmethod
    def _columns(memory: Memory) -> tuple[Any, ...]:
        return (
            memory.type,
            memory.name,
            memory.content_hash,
            int(memory.archived),
            int(memory.pinned),
            memory.security_level.rank,
            _ts(memory.created_at),
            _ts(memory.updated_at),
            _ts(memory.expires_at),
            memory.version,
            memory.importance,
            int(is_mostly_cjk(memory.content)),
        )

    @staticmethod
    def _body(memory: Memory) -> str:
        return json.dumps(memory.model_dump(mode="json", exclude=_BODY_EXCLUDE), ensure_ascii=False)

    def _write_derived(self, tx: sqlite3.Connection, rowid: int, memory: Memory, *, new: bool) -> None:
        prefix = scope_prefix(memory.scope)
        terms = " ".join(prefix + _term(t) for t in document_terms(memory))
        if not new:
            tx.execute("DELETE FROM memory_fts WHERE rowid = ?", (rowid,))
            tx.execute("DELETE FROM memory_tags WHERE memory_rowid = ?", (rowid,))
        else:
            tx.execute("UPDATE counters SET value = value + 1 WHERE name = 'fts_rows'")
            tx.execute(
                "INSERT INTO scope_rows (scope_key, value) VALUES (?, 1)"
                " ON CONFLICT (scope_key) DO UPDATE SET value = value + 1",
                (memory.scope.key,),
            )
        tx.execute(
            "INSERT INTO memory_fts (rowid, terms) VALUES (?, ?)",
            (rowid, terms),
        )
        tx.executemany(
            "INSERT OR IGNORE INTO memory_tags (memory_rowid, scope_key, tag) VALUES (?, ?, ?)",
            [(rowid, memory.scope.key, tag) for tag in memory.tags],
        )

    @staticmethod
    def _put_idempotency(tx: sqlite3.Connection, rec: IdempotencyRecord) -> None:
        tx.execute(
            "INSERT INTO idempotency (tenant_id, key, request_hash, response, created_at)"
            " VALUES (?, ?, ?, ?, ?)",
            (rec.tenant_id, rec.key, rec.request_hash, json.dumps(rec.response), _ts(rec.created_at)),
        )


def encode_cursor(created_at: str, memory_id: str) -> str:
    return base64.urlsafe_b64encode(f"{created_at}|{memory_id}".encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[str, str]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        created, memory_id = raw.split("|", 1)
    except (ValueError, UnicodeDecodeError):
        raise ValidationError("cursor is not valid", field="cursor") from None
    return created, memory_id


class _ScopeMatrix:
    """The vectors of one scope in memory, with per-row attributes for filtering."""

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self.seq = -1
        self.size = 0
        self.vectors = np.zeros((0, dim), dtype=np.float32)
        self.ids: list[str] = []
        self.live = np.zeros(0, dtype=bool)
        self.archived = np.zeros(0, dtype=bool)
        self.rank = np.zeros(0, dtype=np.int8)
        self.expires = np.zeros(0, dtype=np.float64)
        self.type_code = np.zeros(0, dtype=np.int32)
        self.session_code = np.zeros(0, dtype=np.int32)  # 0: no session
        self.codes: dict[str, int] = {}
        self.rowids = np.zeros(0, dtype=np.int64)
        self.slot: dict[int, int] = {}
        self.id_slot: dict[str, int] = {}
        self.lock = threading.Lock()

    def _grow(self, need: int) -> None:
        cap = len(self.vectors)
        if need <= cap:
            return
        new_cap = max(need, cap * 2, 64)
        self.vectors = _resize(self.vectors, (new_cap, self.dim))
        self.live = _resize(self.live, (new_cap,))
        self.archived = _resize(self.archived, (new_cap,))
        self.rank = _resize(self.rank, (new_cap,))
        self.expires = _resize(self.expires, (new_cap,))
        self.rowids = _resize(self.rowids, (new_cap,))
        self.type_code = _resize(self.type_code, (new_cap,))
        self.session_code = _resize(self.session_code, (new_cap,))

    def code(self, value: str) -> int:
        """A small int per distinct type or session string (0 is reserved for "no session")."""
        return self.codes.setdefault(value, len(self.codes) + 1)

    def apply(self, rows: list[sqlite3.Row], dead: list[int]) -> None:
        for r in rows:
            rowid = int(r["rowid"])
            slot = self.slot.get(rowid)
            if slot is None:
                slot = self.size
                self._grow(slot + 1)
                self.size += 1
                self.slot[rowid] = slot
                self.id_slot[r["id"]] = slot
                self.ids.append(r["id"])
            self.type_code[slot] = self.code("t:" + r["type"])
            self.session_code[slot] = self.code("s:" + r["session_id"]) if r["session_id"] else 0
            blob = r["embedding"]
            if blob is None or len(blob) != self.dim * 4:
                self.live[slot] = False
                continue
            self.vectors[slot] = np.frombuffer(blob, dtype=np.float32)
            self.live[slot] = True
            self.rowids[slot] = rowid
            self.archived[slot] = bool(r["archived"])
            self.rank[slot] = int(r["security_rank"])
            exp = r["expires_at"]
            self.expires[slot] = (
                datetime.fromisoformat(exp.replace("Z", "+00:00")).timestamp() if exp else math.inf
            )
        for rowid in dead:
            slot = self.slot.get(rowid)
            if slot is not None:
                self.live[slot] = False


def _resize(arr: np.ndarray[Any, Any], shape: tuple[int, ...]) -> np.ndarray[Any, Any]:
    out = np.zeros(shape, dtype=arr.dtype)
    out[: len(arr)] = arr
    return out


# Common-term cutoff (as Lucene's cutoff_frequency): in a scope of at least CUTOFF_MIN_DOCS rows,
# query terms found in more than CUTOFF_DF of the scope's rows do not drive candidate generation
# (their idf is small) unless no rarer term exists, then the CUTOFF_KEEP rarest are kept. They
# still count in the ideal-document score, so keyword relevance stays honest.
CUTOFF_MIN_DOCS = 2000
CUTOFF_DF = 0.05
CUTOFF_KEEP = 3


def _idf(total: int, n: int) -> float:
    """FTS5's bm25 idf, floored at 1e-6 as FTS5 does; 0 for a term no row contains."""
    if n <= 0:
        return 0.0
    idf = math.log((total - n + 0.5) / (n + 0.5))
    return idf if idf > 0 else 1e-6


class SqliteSearchIndex:
    """SearchIndex over the repository's tables: FTS5 bm25() for keywords, numpy for vectors."""

    maintained_by_repository = True

    def __init__(self, db: SqliteDatabase, dimension: int) -> None:
        self.db = db
        self.dimension = dimension
        self._scopes: dict[str, _ScopeMatrix] = {}
        self._lock = threading.Lock()

    def upsert(self, memories: Sequence[Memory]) -> None:
        """No-op: the repository writes terms and vectors in the record's own transaction."""

    def remove(self, scope: Scope, memory_ids: Sequence[str]) -> None:
        """No-op: the repository deletes terms and vectors in the record's own transaction."""

    # -- keyword -----------------------------------------------------------------------------
    def search_keyword(
        self, scope: Scope, terms: Sequence[str], *, limit: int, filters: Filters
    ) -> list[Candidate]:
        unique = list(dict.fromkeys(t for t in terms if t))
        if not unique:
            return []
        conn = self.db.connection()
        prefix = scope_prefix(scope)
        total, scope_rows, df = self._doc_frequencies(conn, scope, [prefix + _term(t) for t in unique])
        ideal = sum(_idf(total, n) for n in df.values())
        kept = [t for t, n in df.items() if n > 0]
        if scope_rows >= CUTOFF_MIN_DOCS:
            rare = [t for t in kept if df[t] <= CUTOFF_DF * scope_rows]
            kept = rare or sorted(kept, key=lambda t: df[t])[:CUTOFF_KEEP]
        if not kept or ideal <= 0:
            return []
        match = " OR ".join(kept)
        cond, params = _filter_sql(filters)
        fetch = max(limit * 4, 200)
        while True:
            # Rank inside FTS5 first (no join per match), then apply the record filters to that
            # short list; widen the list when the filters leave too few rows.
            top = conn.execute(
                "SELECT rowid, -bm25(memory_fts) AS s FROM memory_fts WHERE memory_fts MATCH ?"
                " ORDER BY bm25(memory_fts) LIMIT ?",
                (match, fetch),
            ).fetchall()
            if not top:
                return []
            marks = ",".join("?" * len(top))
            passed = dict(
                conn.execute(
                    f"SELECT m.rowid, m.id FROM memories m WHERE m.rowid IN ({marks}) AND +m.scope_key = ?"
                    f" AND {cond}",
                    (*(r[0] for r in top), scope.key, *params),
                ).fetchall()
            )
            hits = [Candidate(id=passed[r[0]], score=float(r[1]) / ideal) for r in top if r[0] in passed]
            if len(hits) >= limit or len(top) < fetch or fetch >= total:
                return hits[:limit]
            fetch *= 4

    @staticmethod
    def _doc_frequencies(
        conn: sqlite3.Connection, scope: Scope, hexed: list[str]
    ) -> tuple[int, int, dict[str, int]]:
        """Rows in the FTS table (FTS5's N), rows of the scope, and each scoped term's document
        frequency (FTS5's own statistics)."""
        total = int(conn.execute("SELECT value FROM counters WHERE name = 'fts_rows'").fetchone()[0])
        row = conn.execute("SELECT value FROM scope_rows WHERE scope_key = ?", (scope.key,)).fetchone()
        scope_rows = int(row[0]) if row else 0
        df: dict[str, int] = {}
        for term in hexed:
            # one equality lookup per term: fts5vocab serves term = ? from its index, IN (...) scans
            row = conn.execute("SELECT doc FROM memory_fts_vocab WHERE term = ?", (term,)).fetchone()
            df[term] = int(row[0]) if row else 0
        return total, scope_rows, df

    # -- vector ------------------------------------------------------------------------------
    def search_vector(self, scope: Scope, vector: Vector, *, limit: int, filters: Filters) -> list[Candidate]:
        matrix = self._refresh(scope)
        with matrix.lock:
            n = matrix.size
            if n == 0:
                return []
            mask = matrix.live[:n].copy()
            if not filters.include_archived:
                mask &= ~matrix.archived[:n]
            mask &= matrix.rank[:n] <= filters.max_security_rank
            if filters.as_of is not None:
                mask &= matrix.expires[:n] > filters.as_of.timestamp()
            if filters.types:
                allowed = [matrix.codes.get("t:" + t, -1) for t in filters.types]
                mask &= np.isin(matrix.type_code[:n], allowed)
            sessions = matrix.session_code[:n]
            if filters.session_id is None:
                mask &= sessions == 0
            else:
                mask &= (sessions == 0) | (sessions == matrix.codes.get("s:" + filters.session_id, -1))
            if filters.tags:
                mask &= np.isin(matrix.rowids[:n], self._tagged_rowids(scope, filters.tags))
            scores = matrix.vectors[:n] @ np.asarray(vector, dtype=np.float32)
            scores[~mask] = -np.inf
            k = min(limit, int(mask.sum()))
            if k <= 0:
                return []
            top = np.argpartition(-scores, k - 1)[:k] if k < n else np.arange(n)
            top = top[np.argsort(-scores[top])][:k]
            return [Candidate(id=matrix.ids[i], score=float(scores[i])) for i in top if mask[i]]

    def vector_scores(self, scope: Scope, vector: Vector, memory_ids: Sequence[str]) -> dict[str, float]:
        matrix = self._refresh(scope)
        with matrix.lock:
            slots = [(i, matrix.id_slot.get(i)) for i in memory_ids]
            found = [(i, s) for i, s in slots if s is not None and matrix.live[s]]
            if not found:
                return {}
            sims = matrix.vectors[[s for _, s in found]] @ np.asarray(vector, dtype=np.float32)
            return {i: float(x) for (i, _), x in zip(found, sims, strict=True)}

    def _tagged_rowids(self, scope: Scope, tags: Sequence[str]) -> np.ndarray[Any, Any]:
        marks = ",".join("?" * len(tags))
        rows = (
            self.db.connection()
            .execute(
                f"SELECT memory_rowid FROM memory_tags WHERE scope_key = ? AND tag IN ({marks})",
                (scope.key, *tags),
            )
            .fetchall()
        )
        return np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))

    def _refresh(self, scope: Scope) -> _ScopeMatrix:
        with self._lock:
            matrix = self._scopes.get(scope.key)
            if matrix is None:
                matrix = self._scopes[scope.key] = _ScopeMatrix(self.dimension)
        conn = self.db.connection()
        with matrix.lock:
            conn.execute("BEGIN")
            try:
                head = conn.execute("SELECT value FROM counters WHERE name = 'seq'").fetchone()[0]
                if head == matrix.seq:
                    return matrix
                rows = conn.execute(
                    "SELECT rowid, id, type, session_id, archived, security_rank, expires_at, embedding"
                    " FROM memories WHERE scope_key = ? AND seq > ? ORDER BY seq",
                    (scope.key, matrix.seq),
                ).fetchall()
                dead = [
                    int(r[0])
                    for r in conn.execute(
                        "SELECT memory_rowid FROM tombstones WHERE scope_key = ? AND seq > ?",
                        (scope.key, matrix.seq),
                    ).fetchall()
                ]
            finally:
                conn.execute("COMMIT")
            matrix.apply(rows, dead)
            matrix.seq = head
        return matrix
