"""API keys for the local server, stored hashed in the SQLite file.

A key reads ``mv_<key_id>_<secret>``. Only ``HMAC-SHA256(pepper, secret)`` is stored; the pepper
lives in a separate file (``<data_dir>/pepper``, mode 0600), so a copy of the database alone does
not allow offline guessing. Verification is constant-time. The same scheme backs the Lambda
authorizer on AWS (pepper from Secrets Manager).
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from memvault.adapters.local.sqlite_db import SqliteDatabase
from memvault.api.caller import ROLES, Caller
from memvault.domain.errors import ValidationError
from memvault.domain.models import SecurityLevel, valid_id


@dataclass(frozen=True)
class KeyInfo:
    key_id: str
    tenant_id: str
    agents: str
    roles: str
    clearance: str
    description: str | None
    created_at: str
    revoked_at: str | None


def load_pepper(path: Path) -> bytes:
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(secrets.token_bytes(32))
    return path.read_bytes()


class SqliteKeyStore:
    def __init__(self, db: SqliteDatabase, pepper: bytes) -> None:
        self.db = db
        self.pepper = pepper

    def _hash(self, secret: str) -> str:
        return hmac.new(self.pepper, secret.encode(), hashlib.sha256).hexdigest()

    def create(
        self,
        tenant_id: str,
        *,
        agents: list[str] | None = None,
        roles: list[str] | None = None,
        clearance: str = "internal",
        description: str | None = None,
        now: datetime,
    ) -> tuple[str, KeyInfo]:
        """Issue a key; the full key is returned once and never stored."""
        if not valid_id(tenant_id):
            raise ValidationError("tenant: invalid id", field="tenant")
        roles = roles or ["read", "write"]
        for r in roles:
            if r not in ROLES:
                raise ValidationError(f"roles: unknown role {r!r}; one of {', '.join(ROLES)}", field="roles")
        for a in agents or []:
            if not valid_id(a):
                raise ValidationError(f"agents: invalid agent id {a!r}", field="agents")
        level = SecurityLevel(clearance)
        key_id = secrets.token_hex(6)
        secret = secrets.token_urlsafe(24)
        info = KeyInfo(
            key_id=key_id,
            tenant_id=tenant_id,
            agents="*" if not agents else ",".join(agents),
            roles=",".join(roles),
            clearance=level.value,
            description=description,
            created_at=now.isoformat(),
            revoked_at=None,
        )
        with self.db.transaction() as tx:
            tx.execute(
                "INSERT INTO api_keys (key_id, secret_hash, tenant_id, agents, roles, clearance, description,"
                " created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    key_id,
                    self._hash(secret),
                    tenant_id,
                    info.agents,
                    info.roles,
                    info.clearance,
                    description,
                    info.created_at,
                ),
            )
        return f"mv_{key_id}_{secret}", info

    def revoke(self, key_id: str, now: datetime) -> bool:
        with self.db.transaction() as tx:
            cur = tx.execute(
                "UPDATE api_keys SET revoked_at = ? WHERE key_id = ? AND revoked_at IS NULL",
                (now.isoformat(), key_id),
            )
            return cur.rowcount > 0

    def list(self) -> list[KeyInfo]:
        rows = (
            self.db.connection()
            .execute(
                "SELECT key_id, tenant_id, agents, roles, clearance, description, created_at, revoked_at"
                " FROM api_keys ORDER BY created_at"
            )
            .fetchall()
        )
        return [KeyInfo(**dict(r)) for r in rows]

    def authenticate(self, presented: str) -> Caller | None:
        """The caller for a presented key, or None (unknown, malformed, wrong secret or revoked)."""
        parts = presented.split("_", 2)
        if len(parts) != 3 or parts[0] != "mv":
            return None
        _, key_id, secret = parts
        row = (
            self.db.connection()
            .execute(
                "SELECT secret_hash, tenant_id, agents, roles, clearance, revoked_at FROM api_keys"
                " WHERE key_id = ?",
                (key_id,),
            )
            .fetchone()
        )
        expected = row["secret_hash"] if row else self._hash("dummy-to-keep-timing-flat")
        ok = hmac.compare_digest(expected, self._hash(secret))
        if row is None or not ok or row["revoked_at"] is not None:
            return None
        return Caller.from_context(
            {
                "tenant_id": row["tenant_id"],
                "agents": row["agents"],
                "roles": row["roles"],
                "clearance": row["clearance"],
            }
        )
