"""A query-embedding LRU cache in front of any Embedder, keyed by model id + text."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence

from memvault.ports import Embedder, Vector


class CachedEmbedder:
    def __init__(self, inner: Embedder, size: int = 2048) -> None:
        self.inner = inner
        self.size = size
        self.hits = 0
        self.misses = 0
        self._cache: OrderedDict[tuple[str, str], Vector] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    @property
    def hit_rate(self) -> float:
        total = self.hits + self.misses
        return self.hits / total if total else 0.0

    def embed_documents(self, texts: Sequence[str]) -> Vector:
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> Vector:
        key = (self.inner.model_id, text)
        with self._lock:
            hit = self._cache.get(key)
            if hit is not None:
                self._cache.move_to_end(key)
                self.hits += 1
                return hit
            self.misses += 1
        vector = self.inner.embed_query(text)
        vector.setflags(write=False)
        if self.size > 0:
            with self._lock:
                self._cache[key] = vector
                if len(self._cache) > self.size:
                    self._cache.popitem(last=False)
        return vector
