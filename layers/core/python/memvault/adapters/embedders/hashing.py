"""A deterministic hashing embedder (feature hashing of analyzer tokens). For tests only: it has
no notion of meaning, but it is fast, needs no model, and honours the Embedder contract."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from memvault.domain.text import analyze
from memvault.ports import Vector


class HashingEmbedder:
    model_id = "hashing-v1"

    def __init__(self, dimension: int = 256) -> None:
        self.dimension = dimension

    def _one(self, text: str) -> Vector:
        vec = np.zeros(self.dimension, dtype=np.float32)
        for token in analyze(text, drop_stopwords=True) or analyze(text, drop_stopwords=False):
            digest = hashlib.blake2b(token.encode(), digest_size=8).digest()
            h = int.from_bytes(digest, "little")
            vec[h % self.dimension] += 1.0 if (h >> 63) & 1 else -1.0
        norm = float(np.linalg.norm(vec))
        if norm == 0:
            vec[0] = 1.0
            norm = 1.0
        out: Vector = vec / norm
        return out

    def embed_documents(self, texts: Sequence[str]) -> Vector:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.stack([self._one(t) for t in texts])

    def embed_query(self, text: str) -> Vector:
        return self._one(text)
