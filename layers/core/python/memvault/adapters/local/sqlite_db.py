"""One SQLite file holds everything of the embedded backend: records, keyword index, vectors,
idempotency records. WAL mode, ``synchronous=FULL``, one transaction per write, forward-only
schema migrations recorded in ``schema_version``.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

# Each entry migrates from version i to i+1. Never edit a released entry: append a new one.
MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE memories (
        rowid INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        scope_key TEXT NOT NULL,
        tenant_id TEXT NOT NULL,
        agent_id TEXT NOT NULL,
        user_id TEXT NOT NULL,
        session_id TEXT,
        type TEXT NOT NULL,
        name TEXT,
        content_hash TEXT NOT NULL,
        archived INTEGER NOT NULL DEFAULT 0,
        pinned INTEGER NOT NULL DEFAULT 0,
        security_rank INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        expires_at TEXT,
        version INTEGER NOT NULL,
        importance REAL NOT NULL,
        cjk INTEGER NOT NULL,
        access_count INTEGER NOT NULL DEFAULT 0,
        accessed_at TEXT,
        body TEXT NOT NULL,
        embedding BLOB,
        embedding_model TEXT,
        seq INTEGER NOT NULL
    );
    CREATE INDEX ix_memories_scope_created ON memories (scope_key, created_at DESC, id DESC);
    CREATE INDEX ix_memories_scope_hash ON memories (scope_key, content_hash);
    CREATE INDEX ix_memories_scope_name ON memories (scope_key, type, name);
    CREATE INDEX ix_memories_scope_seq ON memories (scope_key, seq);
    CREATE INDEX ix_memories_scope_pinned ON memories (scope_key, pinned) WHERE pinned = 1;
    CREATE TABLE memory_tags (
        memory_rowid INTEGER NOT NULL REFERENCES memories (rowid) ON DELETE CASCADE,
        scope_key TEXT NOT NULL,
        tag TEXT NOT NULL,
        PRIMARY KEY (scope_key, tag, memory_rowid)
    ) WITHOUT ROWID;
    CREATE INDEX ix_memory_tags_rowid ON memory_tags (memory_rowid);
    CREATE VIRTUAL TABLE memory_fts USING fts5 (terms, tokenize = 'ascii');
    CREATE VIRTUAL TABLE memory_fts_vocab USING fts5vocab (memory_fts, 'row');
    CREATE TABLE tombstones (
        scope_key TEXT NOT NULL,
        memory_rowid INTEGER NOT NULL,
        seq INTEGER NOT NULL
    );
    CREATE INDEX ix_tombstones_scope_seq ON tombstones (scope_key, seq);
    CREATE TABLE counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
    INSERT INTO counters (name, value) VALUES ('seq', 0), ('fts_rows', 0);
    CREATE TABLE scope_rows (scope_key TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
    CREATE TABLE idempotency (
        tenant_id TEXT NOT NULL,
        key TEXT NOT NULL,
        request_hash TEXT NOT NULL,
        response TEXT NOT NULL,
        created_at TEXT NOT NULL,
        PRIMARY KEY (tenant_id, key)
    ) WITHOUT ROWID;
    """,
    """
    CREATE TABLE api_keys (
        key_id TEXT PRIMARY KEY,
        secret_hash TEXT NOT NULL,
        tenant_id TEXT NOT NULL,
        agents TEXT NOT NULL,
        roles TEXT NOT NULL,
        clearance TEXT NOT NULL,
        description TEXT,
        created_at TEXT NOT NULL,
        revoked_at TEXT
    ) WITHOUT ROWID;
    """,
)

SCHEMA_VERSION = len(MIGRATIONS)


class SqliteDatabase:
    """Thread-local connections to one database file, with migrations applied on open."""

    def __init__(self, path: Path | str) -> None:
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        self._write_lock = threading.Lock()
        self._migrate()

    def connection(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=30.0)
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = FULL")
            conn.execute("PRAGMA foreign_keys = ON")
            conn.execute("PRAGMA busy_timeout = 30000")
            conn.execute("PRAGMA cache_size = -65536")
            self._local.conn = conn
        return conn

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """A write transaction (BEGIN IMMEDIATE): all or nothing."""
        conn = self.connection()
        with self._write_lock:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    def next_seq(self, conn: sqlite3.Connection) -> int:
        row = conn.execute(
            "UPDATE counters SET value = value + 1 WHERE name = 'seq' RETURNING value"
        ).fetchone()
        return int(row[0])

    def schema_version(self) -> int:
        row = self.connection().execute("SELECT max(version) FROM schema_version").fetchone()
        return int(row[0] or 0)

    def _migrate(self) -> None:
        conn = self.connection()
        conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
        current = self.schema_version()
        if current > SCHEMA_VERSION:
            raise RuntimeError(
                f"database {self.path} has schema version {current}, newer than this memvault "
                f"({SCHEMA_VERSION}); upgrade memvault"
            )
        for version in range(current, SCHEMA_VERSION):
            with self.transaction() as tx:
                for statement in _split(MIGRATIONS[version]):
                    tx.execute(statement)
                tx.execute("INSERT INTO schema_version (version) VALUES (?)", (version + 1,))

    def close(self) -> None:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None


def _split(script: str) -> list[str]:
    return [s.strip() for s in script.split(";") if s.strip()]
