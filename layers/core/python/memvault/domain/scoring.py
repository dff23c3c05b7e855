"""Pure scoring rules for recall (DESIGN section 4): calibration, keyword saturation, fusion,
time decay, importance/access boost, RRF and MMR.

All relevance values are absolute (comparable across queries) so ``min_score`` means something:

* vector: the raw cosine goes through the embedding model's calibration (a logistic fitted on
  labelled pairs, ``memvault/calibration.json``) giving P(relevant | cosine) in [0, 1];
* keyword: adapters return BM25 divided by the BM25 an ideal document would get (every query term
  once, average length), ``ratio``; it saturates as ``(1 + h) * r / (r + h)`` clipped to 1;
* fusion ("noisy_or"): ``1 - (1 - v) ** (wv / wmax) * (1 - k) ** (wk / wmax)``. The stronger
  weighted signal keeps exponent 1, so a strong keyword-only hit (an error code the embedder cannot
  relate) is not capped at the keyword weight, and agreement of both retrievers raises relevance.
  "linear" (``wv * v + wk * k``) and "rrf" are available for comparison.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from importlib import resources
from typing import Literal

import numpy as np
import numpy.typing as npt

FusionMethod = Literal["noisy_or", "linear", "rrf"]
RRF_K = 60


@dataclass(frozen=True)
class Calibration:
    """Logistic map from raw cosine to P(relevant): ``1 / (1 + exp(-(a * cos + b)))``."""

    a: float
    b: float

    def relevance(self, cosine: float) -> float:
        return 1.0 / (1.0 + math.exp(-(self.a * cosine + self.b)))

    def relevance_array(self, cosines: npt.NDArray[np.float32]) -> npt.NDArray[np.float64]:
        z: npt.NDArray[np.float64] = -(self.a * cosines.astype(np.float64) + self.b)
        return 1.0 / (1.0 + np.exp(z))


@cache
def _calibration_table() -> dict[str, dict[str, float]]:
    text = resources.files("memvault").joinpath("calibration.json").read_text(encoding="utf-8")
    data: dict[str, dict[str, float]] = json.loads(text)
    return data


def calibration_for(model_id: str) -> Calibration:
    """The recorded calibration of an embedding model; a clear error for an uncalibrated model."""
    table = _calibration_table()
    if model_id not in table:
        raise KeyError(
            f"no calibration recorded for embedding model {model_id!r}; "
            "run scripts/fit_calibration.py and commit memvault/calibration.json"
        )
    entry = table[model_id]
    return Calibration(a=float(entry["a"]), b=float(entry["b"]))


def keyword_relevance(ratio: float, half: float = 0.5) -> float:
    """Saturating map of the BM25 ratio (score / ideal-document score) into [0, 1]."""
    if ratio <= 0:
        return 0.0
    return min(1.0, (1.0 + half) * ratio / (ratio + half))


def fuse(vector: float, keyword: float, *, w_vector: float, w_keyword: float) -> float:
    """Noisy-OR fusion with weights as exponents (see module docstring)."""
    w_max = max(w_vector, w_keyword)
    if w_max <= 0:
        return 0.0
    v = min(max(vector, 0.0), 1.0)
    k = min(max(keyword, 0.0), 1.0)
    miss = (1.0 - v) ** (w_vector / w_max) * (1.0 - k) ** (w_keyword / w_max)
    return 1.0 - miss


def fuse_linear(vector: float, keyword: float, *, w_vector: float, w_keyword: float) -> float:
    total = w_vector + w_keyword
    return 0.0 if total <= 0 else (w_vector * vector + w_keyword * keyword) / total


def rrf(ranks: list[int | None], k: int = RRF_K) -> float:
    """Reciprocal-rank fusion normalised to [0, 1] by the best possible sum (rank 1 everywhere).

    Ranks are 1-based; None means the retriever did not return the item. RRF is relative to the
    query's candidate lists, so with it ``min_score`` is only a rank cut, not an absolute bar.
    """
    total = sum(1.0 / (k + r) for r in ranks if r is not None)
    best = len(ranks) / (k + 1)
    return total / best if best else 0.0


def decay(updated_at: datetime, now: datetime, *, half_life_days: float, floor: float, pinned: bool) -> float:
    """``floor + (1 - floor) * 0.5 ** (age_days / half_life)``; pinned memories do not decay."""
    if pinned:
        return 1.0
    age_days = max(0.0, (now - updated_at).total_seconds() / 86400.0)
    return floor + (1.0 - floor) * 0.5 ** (age_days / half_life_days)


def boost(importance: float, access_count: int) -> float:
    """A mild factor in [0.9, 1.15]: +-10% for importance around the 0.5 default, and up to +5% for
    memories that recall has returned often (log-scaled, saturating at 100 accesses)."""
    imp = 1.0 + 0.2 * (min(max(importance, 0.0), 1.0) - 0.5)
    acc = 1.0 + 0.05 * min(1.0, math.log1p(max(access_count, 0)) / math.log(101))
    return imp * acc


def mmr_order(
    scores: list[float], vectors: npt.NDArray[np.float32], *, k: int, lambda_: float = 0.7
) -> list[int]:
    """Maximal marginal relevance: indices of up to ``k`` items trading score against redundancy."""
    n = len(scores)
    if n == 0:
        return []
    sims = vectors @ vectors.T
    chosen: list[int] = []
    remaining = list(range(n))
    while remaining and len(chosen) < k:
        best_i, best_val = remaining[0], -math.inf
        for i in remaining:
            redundancy = max((float(sims[i, j]) for j in chosen), default=0.0)
            val = lambda_ * scores[i] - (1 - lambda_) * redundancy
            if val > best_val:
                best_i, best_val = i, val
        chosen.append(best_i)
        remaining.remove(best_i)
    return chosen
