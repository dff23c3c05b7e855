"""Pure scoring rules for recall (DESIGN section 4): calibration, keyword saturation, fusion,
time decay, importance/access boost, RRF and MMR.

All relevance values are absolute (comparable across queries) so ``min_score`` means something:

* vector: the raw cosine goes through the embedding model's calibration (a logistic fitted on
  labelled pairs, ``memvault/calibration.json``, per language bucket where the model needs it)
  giving P(relevant | cosine) in [0, 1];
* keyword: adapters return BM25 divided by the BM25 an ideal document would get (every query term
  once, average length), ``ratio``; it saturates as ``r / (r + h)`` (strictly increasing);
* fusion ("noisy_or"): ``1 - (1 - v) ** (wv / wmax) * (1 - k) ** (wk / wmax)``. The stronger
  weighted signal keeps exponent 1, so a strong keyword-only hit (an error code the embedder cannot
  relate) is not capped at the keyword weight, and agreement of both retrievers raises relevance.
  "linear" (``wv * v + wk * k``) and "rrf" are available for comparison.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from datetime import datetime
from functools import cache
from importlib import resources
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

FusionMethod = Literal["noisy_or", "linear", "rrf"]
RRF_K = 60


_CJK_CHAR = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_WORD = re.compile(r"[^\W\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff_]+")

LangBucket = Literal["en", "zh", "mixed"]


def is_mostly_cjk(text: str) -> bool:
    """True when CJK ideographs are at least half of the tokens (each ideograph one token, each run of
    other letters/digits one token), so "Python 版本要求" is CJK and "POST /memories 413" is not."""
    cjk = len(_CJK_CHAR.findall(text))
    other = len(_WORD.findall(text))
    return cjk > 0 and cjk >= other


def lang_bucket(query_cjk: bool, memory_cjk: bool) -> LangBucket:
    """ "zh" when both sides are mostly Chinese, "en" when neither is, else "mixed"."""
    if query_cjk and memory_cjk:
        return "zh"
    if not query_cjk and not memory_cjk:
        return "en"
    return "mixed"


@dataclass(frozen=True)
class Curve:
    """Logistic map from raw cosine to P(relevant): ``1 / (1 + exp(-(a * cos + b)))``."""

    a: float
    b: float

    def __call__(self, cosine: float) -> float:
        return 1.0 / (1.0 + math.exp(-(self.a * cosine + self.b)))


@dataclass(frozen=True)
class Calibration:
    """A model's calibration: one curve, and optionally one per language bucket (e5 needs them:
    it scores any two Chinese texts ~0.06 higher than two English ones, so one curve cannot fit
    both; see bench/results/calibration.md)."""

    a: float
    b: float
    by_lang: dict[str, Curve] = field(default_factory=dict)

    def relevance(self, cosine: float, bucket: LangBucket | None = None) -> float:
        curve = self.by_lang.get(bucket) if bucket else None
        return (curve or Curve(self.a, self.b))(cosine)


@cache
def _calibration_table() -> dict[str, dict[str, Any]]:
    text = resources.files("memvault").joinpath("calibration.json").read_text(encoding="utf-8")
    data: dict[str, dict[str, Any]] = json.loads(text)
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
    t = float(entry.get("ranking_temperature", 1.0))
    by_lang = {k: Curve(float(v["a"]) / t, float(v["b"]) / t) for k, v in entry.get("by_lang", {}).items()}
    return Calibration(a=float(entry["a"]) / t, b=float(entry["b"]) / t, by_lang=by_lang)


def keyword_relevance(ratio: float, half: float = 0.5) -> float:
    """Saturating map of the BM25 ratio (score / ideal-document score) into [0, 1): ``r / (r + h)``.

    Strictly increasing, so it never flattens BM25's order into ties (a clipped curve did, and
    time decay then decided among the tied hits: LoCoMo keyword recall@5 fell from 0.57 to 0.44).
    """
    if ratio <= 0:
        return 0.0
    return ratio / (ratio + half)


def fuse(vector: float, keyword: float, *, w_vector: float, w_keyword: float) -> float:
    """Noisy-OR fusion with weights as exponents (see module docstring)."""
    w_max = max(w_vector, w_keyword)
    if w_max <= 0:
        return 0.0
    v = min(max(vector, 0.0), 1.0)
    k = min(max(keyword, 0.0), 1.0)
    miss = (1.0 - v) ** (w_vector / w_max) * (1.0 - k) ** (w_keyword / w_max)
    return float(1.0 - miss)


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
    return float(floor + (1.0 - floor) * 0.5 ** (age_days / half_life_days))


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
