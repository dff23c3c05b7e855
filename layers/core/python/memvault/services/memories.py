"""Memory use cases: save (with redaction, classification, dedup, idempotency), batch save, get,
update, delete and list (DESIGN section 3)."""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from memvault.config import Settings
from memvault.domain.classification import classify, looks_like_instruction
from memvault.domain.errors import (
    IdempotencyConflictError,
    NotFoundError,
    PoisoningRejectedError,
    ValidationError,
    VersionConflictError,
)
from memvault.domain.indexing import content_hash, document_text, embedding_text
from memvault.domain.models import (
    MAX_BATCH,
    MAX_PAGE,
    EmbeddingStatus,
    Filters,
    Memory,
    Page,
    SaveAction,
    SaveCommand,
    SaveResult,
    Scope,
    SecurityLevel,
    UpdateCommand,
    valid_ulid,
)
from memvault.domain.redaction import redact
from memvault.domain.scoring import Calibration, is_mostly_cjk, lang_bucket
from memvault.domain.text import analyze
from memvault.ports import (
    Clock,
    Embedder,
    IdempotencyRecord,
    IdFactory,
    ListQuery,
    MemoryRepository,
    SearchIndex,
    Vector,
)

log = logging.getLogger("memvault.save")


@dataclass
class _Prepared:
    command: SaveCommand
    content: str
    name: str | None
    description: str | None
    level: SecurityLevel
    flags: list[str]
    hash: str


def request_hash(scope: Scope, command: SaveCommand) -> str:
    body = command.model_dump(mode="json", exclude={"idempotency_key"})
    raw = json.dumps([scope.key, body], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(raw.encode()).hexdigest()


def _overlap(a: str, b: str) -> float:
    """Token Jaccard of two texts; 0 when their numbers or identifiers differ (a different fact)."""
    ta, tb = set(analyze(a)), set(analyze(b))
    if not ta or not tb:
        return 0.0
    if {t for t in ta if any(c.isdigit() for c in t)} != {t for t in tb if any(c.isdigit() for c in t)}:
        return 0.0
    return len(ta & tb) / len(ta | tb)


class MemoryService:
    def __init__(
        self,
        *,
        settings: Settings,
        repository: MemoryRepository,
        index: SearchIndex,
        embedder: Embedder,
        calibration: Calibration,
        clock: Clock,
        ids: IdFactory,
    ) -> None:
        self.settings = settings
        self.repo = repository
        self.index = index
        self.embedder = embedder
        self.calibration = calibration
        self.clock = clock
        self.ids = ids

    # -- save --------------------------------------------------------------------------------
    def save(self, scope: Scope, command: SaveCommand, *, trusted: bool = False) -> SaveResult:
        """Save one memory. ``trusted`` callers (admin imports, benchmarks) may set ``created_at``."""
        return self.save_batch(scope, [command], trusted=trusted)[0]

    def save_batch(
        self, scope: Scope, commands: Sequence[SaveCommand], *, trusted: bool = False
    ) -> list[SaveResult]:
        """Validate every item first (a bad item rejects the batch, nothing written), embed all new
        content in one call, then write each item in its own transaction."""
        if not commands:
            raise ValidationError("items: at least one memory is required", field="items")
        if len(commands) > MAX_BATCH:
            raise ValidationError(f"items: at most {MAX_BATCH} memories per batch", field="items")
        prefix = len(commands) > 1
        prepared = [
            self._prepare(c, field_prefix=f"items.{i}." if prefix else "") for i, c in enumerate(commands)
        ]
        results: list[SaveResult | None] = [None] * len(prepared)
        pending: list[int] = []
        for i, p in enumerate(prepared):
            replay = self._replay(scope, p.command)
            if replay is not None:
                results[i] = replay
            else:
                pending.append(i)
        texts = [
            embedding_text(prepared[i].name, prepared[i].description, prepared[i].content) for i in pending
        ]
        vectors = self._embed(texts)
        for j, i in enumerate(pending):
            results[i] = self._store(scope, prepared[i], None if vectors is None else vectors[j], trusted)
        return [r for r in results if r is not None]

    def _prepare(self, command: SaveCommand, *, field_prefix: str) -> _Prepared:
        s = self.settings
        if command.type not in s.memory_types:
            raise ValidationError(
                f"{field_prefix}type: unknown memory type {command.type!r};"
                f" one of {', '.join(s.memory_types)}",
                field=f"{field_prefix}type",
            )
        if not command.content.strip():
            raise ValidationError(f"{field_prefix}content: must not be empty", field=f"{field_prefix}content")
        if len(command.content) > s.max_content_chars:
            raise ValidationError(
                f"{field_prefix}content: at most {s.max_content_chars} characters"
                f" (got {len(command.content)})",
                field=f"{field_prefix}content",
            )
        content, name, description = command.content, command.name, command.description
        if s.redact_secrets:
            content, _ = redact(content, s.redaction_patterns)
            name = redact(name, s.redaction_patterns)[0] if name else name
            description = redact(description, s.redaction_patterns)[0] if description else description
        level = SecurityLevel(classify(content, command.security_level.value))
        flags: list[str] = []
        if looks_like_instruction(content):
            if s.instruction_policy == "reject":
                raise PoisoningRejectedError(
                    f"{field_prefix}content: looks like an instruction to the agent, not a memory",
                    field=f"{field_prefix}content",
                )
            flags.append("instruction_like")
            if s.instruction_policy == "quarantine":
                flags.append("quarantined")
        return _Prepared(
            command, content, name, description, level, flags, content_hash(command.type, content)
        )

    def _embed(self, texts: list[str]) -> Vector | None:
        if not texts:
            return np.zeros((0, self.embedder.dimension), dtype=np.float32)
        try:
            return self.embedder.embed_documents(texts)
        except Exception:  # the embedder is down: store now, embed later (embedding_status=pending)
            log.exception("embedder failed; storing %d memories with embedding_status=pending", len(texts))
            return None

    def _replay(self, scope: Scope, command: SaveCommand) -> SaveResult | None:
        if command.idempotency_key is None:
            return None
        record = self.repo.get_idempotency(scope.tenant_id, command.idempotency_key)
        if record is None:
            return None
        if record.request_hash != request_hash(scope, command):
            raise IdempotencyConflictError(
                "Idempotency-Key was already used with a different request", field="idempotency_key"
            )
        memory = self.repo.get(scope, record.response["id"])
        if memory is None:  # deleted since: replay the original answer
            memory = Memory.model_validate(record.response["memory"])
        return SaveResult(memory=memory, action=record.response["action"])

    def _store(self, scope: Scope, p: _Prepared, vector: Vector | None, trusted: bool) -> SaveResult:
        cmd = p.command
        now = self.clock.now()
        embedding = None if vector is None else [float(x) for x in vector]
        status = EmbeddingStatus.PENDING if vector is None else EmbeddingStatus.READY

        same = self.repo.find_by_hash(scope, p.hash, cmd.session_id)
        if same is not None:
            return self._finish(scope, cmd, same, "unchanged", None)

        target = None
        if cmd.name:
            target = self.repo.find_by_name(scope, cmd.type, cmd.name, cmd.session_id)
        if target is None and vector is not None:
            target = self._near_duplicate(scope, cmd, p.content, vector)
        if target is not None:
            updated = target.model_copy(
                update={
                    "content": p.content,
                    "name": p.name or target.name,
                    "description": p.description or target.description,
                    "tags": list(dict.fromkeys([*target.tags, *cmd.tags]))[:32],
                    "entities": list(dict.fromkeys([*target.entities, *cmd.entities]))[:32],
                    "metadata": {**target.metadata, **cmd.metadata},
                    "importance": max(target.importance, cmd.importance),
                    "pinned": target.pinned or cmd.pinned,
                    "security_level": max(target.security_level, p.level, key=lambda lv: lv.rank),
                    "flags": sorted(set(target.flags) | set(p.flags)),
                    "expires_at": cmd.expires_at or target.expires_at,
                    "content_hash": p.hash,
                    "embedding": embedding,
                    "embedding_model": self.embedder.model_id if embedding else None,
                    "embedding_status": status,
                    "version": target.version + 1,
                    "updated_at": now,
                }
            )
            return self._finish(scope, cmd, updated, "updated", target.version)

        created_at = cmd.created_at if (trusted and cmd.created_at) else now
        memory = Memory(
            id=self.ids.new_id(created_at),
            tenant_id=scope.tenant_id,
            agent_id=scope.agent_id,
            user_id=scope.user_id,
            session_id=cmd.session_id,
            type=cmd.type,
            name=p.name,
            description=p.description,
            content=p.content,
            tags=cmd.tags,
            entities=cmd.entities,
            metadata=cmd.metadata,
            importance=cmd.importance,
            pinned=cmd.pinned,
            security_level=p.level,
            source=cmd.source,
            flags=p.flags,
            created_at=created_at,
            updated_at=created_at,
            expires_at=cmd.expires_at,
            archived="quarantined" in p.flags,
            archived_at=now if "quarantined" in p.flags else None,
            content_hash=p.hash,
            embedding=embedding,
            embedding_model=self.embedder.model_id if embedding else None,
            embedding_status=status,
        )
        return self._finish(scope, cmd, memory, "created", None)

    def _finish(
        self, scope: Scope, cmd: SaveCommand, memory: Memory, action: SaveAction, expected_version: int | None
    ) -> SaveResult:
        idem = None
        if cmd.idempotency_key is not None:
            idem = IdempotencyRecord(
                tenant_id=scope.tenant_id,
                key=cmd.idempotency_key,
                request_hash=request_hash(scope, cmd),
                response={"id": memory.id, "action": action, "memory": memory.public_dict()},
                created_at=self.clock.now(),
            )
        if action == "created":
            self.repo.create(memory, idem)
        elif action == "updated":
            assert expected_version is not None
            self.repo.update(memory, expected_version, idem)
        elif idem is not None:  # unchanged: only remember the answer for retries
            self.repo.put_idempotency(idem)
        if action != "unchanged" and not self.index.maintained_by_repository:
            self.index.upsert([memory])
        return SaveResult(memory=memory, action=action)

    def _near_duplicate(self, scope: Scope, cmd: SaveCommand, content: str, vector: Vector) -> Memory | None:
        filters = Filters(types=(cmd.type,), session_id=cmd.session_id)
        hits = self.index.search_vector(scope, vector, limit=1, filters=filters)
        if not hits:
            return None
        cjk = is_mostly_cjk(content)
        if (
            self.calibration.relevance(hits[0].score, lang_bucket(cjk, cjk))
            < self.settings.near_duplicate_threshold
        ):
            return None
        existing = self.repo.get(scope, hits[0].id)
        if existing is None or existing.session_id != cmd.session_id:
            return None
        if _overlap(existing.content, content) < self.settings.near_duplicate_min_overlap:
            return None
        return existing

    # -- read / change -----------------------------------------------------------------------
    def get(self, scope: Scope, memory_id: str) -> Memory:
        if not valid_ulid(memory_id):
            raise NotFoundError(f"memory {memory_id!r} not found", field="id")
        memory = self.repo.get(scope, memory_id)
        if memory is None:
            raise NotFoundError(f"memory {memory_id!r} not found", field="id")
        return memory

    def update(
        self, scope: Scope, memory_id: str, command: UpdateCommand, *, expected_version: int | None = None
    ) -> Memory:
        current = self.get(scope, memory_id)
        if expected_version is not None and current.version != expected_version:
            raise VersionConflictError(
                f"memory {memory_id} is at version {current.version}, not {expected_version}", field="version"
            )
        changes: dict[str, Any] = command.model_dump(exclude_unset=True, exclude_none=True)
        if not changes:
            return current
        if "type" in changes and changes["type"] not in self.settings.memory_types:
            raise ValidationError(f"type: unknown memory type {changes['type']!r}", field="type")
        if "content" in changes:
            content = changes["content"]
            if not content.strip():
                raise ValidationError("content: must not be empty", field="content")
            if len(content) > self.settings.max_content_chars:
                raise ValidationError(
                    f"content: at most {self.settings.max_content_chars} characters", field="content"
                )
            if self.settings.redact_secrets:
                changes["content"] = redact(content, self.settings.redaction_patterns)[0]
            level = classify(changes["content"], changes.get("security_level", current.security_level).value)
            changes["security_level"] = SecurityLevel(level)
            flags = set(current.flags) - {"instruction_like"}
            if looks_like_instruction(changes["content"]):
                if self.settings.instruction_policy == "reject":
                    raise PoisoningRejectedError("content: looks like an instruction", field="content")
                flags.add("instruction_like")
            changes["flags"] = sorted(flags)
        now = self.clock.now()
        if "archived" in changes:
            changes["archived_at"] = now if changes["archived"] else None
        updated = current.model_copy(update={**changes, "version": current.version + 1, "updated_at": now})
        if {"content", "type"} & changes.keys():
            updated.content_hash = content_hash(updated.type, updated.content)
        if {"content", "name", "description"} & changes.keys():
            vectors = self._embed([document_text(updated)])
            updated.embedding = None if vectors is None else [float(x) for x in vectors[0]]
            updated.embedding_model = self.embedder.model_id if vectors is not None else None
            updated.embedding_status = (
                EmbeddingStatus.READY if vectors is not None else EmbeddingStatus.PENDING
            )
        self.repo.update(updated, current.version)
        if not self.index.maintained_by_repository:
            self.index.upsert([updated])
        return updated

    def delete(self, scope: Scope, memory_id: str, *, expected_version: int | None = None) -> None:
        if not valid_ulid(memory_id) or not self.repo.delete(scope, memory_id, expected_version):
            raise NotFoundError(f"memory {memory_id!r} not found", field="id")
        if not self.index.maintained_by_repository:
            self.index.remove(scope, [memory_id])

    def list_page(
        self,
        scope: Scope,
        *,
        types: Sequence[str] = (),
        tags: Sequence[str] = (),
        session_id: str | None = None,
        include_archived: bool = False,
        limit: int = 50,
        cursor: str | None = None,
    ) -> Page:
        if not 1 <= limit <= MAX_PAGE:
            raise ValidationError(f"limit: must be between 1 and {MAX_PAGE}", field="limit")
        query = ListQuery(
            types=tuple(types),
            tags=tuple(tags),
            session_id=session_id,
            include_archived=include_archived,
            limit=limit,
            cursor=cursor,
        )
        return self.repo.list_page(scope, query)
