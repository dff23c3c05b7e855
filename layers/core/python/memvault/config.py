"""Settings, validated once (pydantic-settings). Environment variables use the ``MEMVAULT_`` prefix."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from memvault.domain.models import BUILTIN_TYPES, DEFAULT_MAX_CONTENT, HARD_MAX_CONTENT


class RecallSettings(BaseModel):
    fusion: Literal["noisy_or", "linear", "rrf"] = "noisy_or"
    # Defaults tuned on the LoCoMo development split (DECISIONS.md 13, bench/results/fusion_tuning.md)
    w_vector: float = Field(default=0.3, ge=0.0, le=1.0)
    w_keyword: float = Field(default=0.7, ge=0.0, le=1.0)
    keyword_half: float = Field(default=0.25, gt=0.0)
    half_life_days: float = Field(default=365.0, gt=0.0)
    decay_floor: float = Field(default=0.9, ge=0.0, le=1.0)
    min_score: float = Field(default=0.3, ge=0.0, le=1.0)
    candidate_floor: int = Field(default=50, ge=1, le=1000)
    candidate_per_k: int = Field(default=4, ge=1, le=50)
    mmr_lambda: float = Field(default=0.7, ge=0.0, le=1.0)
    query_cache_size: int = Field(default=2048, ge=0)


class SnapshotSettings(BaseModel):
    relevant: int = Field(default=3, ge=0, le=20)
    recent: int = Field(default=5, ge=0, le=50)
    recent_hours: float = Field(default=24.0, gt=0)
    max_pinned: int = Field(default=20, ge=0, le=200)


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="MEMVAULT_", env_nested_delimiter="__", extra="ignore")

    backend: Literal["local", "aws"] = "local"
    data_dir: Path = Field(default_factory=lambda: Path.home() / ".memvault")
    embedder: Literal["e5", "use", "hashing"] = "e5"
    embed_threads: int = Field(default=1, ge=1, le=64)
    embed_batch_threads: int = Field(default=2, ge=1, le=64)
    max_content_chars: int = Field(default=DEFAULT_MAX_CONTENT, ge=1, le=HARD_MAX_CONTENT)
    extra_types: list[str] = Field(default_factory=list)
    redact_secrets: bool = True
    redaction_patterns: list[str] = Field(default_factory=list)
    instruction_policy: Literal["flag", "reject", "quarantine"] = "flag"
    near_duplicate_threshold: float = Field(default=0.95, ge=0.5, le=1.0)
    near_duplicate_min_overlap: float = Field(default=0.8, ge=0.0, le=1.0)
    recall: RecallSettings = Field(default_factory=RecallSettings)
    snapshot: SnapshotSettings = Field(default_factory=SnapshotSettings)

    @field_validator("extra_types")
    @classmethod
    def _types(cls, v: list[str]) -> list[str]:
        for t in v:
            if not t.isidentifier() or len(t) > 32:
                raise ValueError(f"memory type {t!r} must be an identifier of at most 32 characters")
        return v

    @property
    def memory_types(self) -> tuple[str, ...]:
        return BUILTIN_TYPES + tuple(t for t in self.extra_types if t not in BUILTIN_TYPES)

    @property
    def database_path(self) -> Path:
        return self.data_dir / "memvault.sqlite3"


@cache
def get_settings() -> Settings:
    return Settings()
