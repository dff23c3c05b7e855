"""Grid-search the recall fusion defaults on a LoCoMo-format development split.

    .venv/bin/python scripts/tune_fusion.py [--dataset ../shared/datasets/locomo/locomo-dev.json] [--model e5]

Ingests the conversations once (as ``memvault bench retrieval`` does), collects for every question
the candidates of both retrievers with the signals recall fuses (calibrated vector relevance,
keyword ratio, age in days), then scores each parameter setting offline with the same pure
functions the RecallService uses (``memvault.domain.scoring``). Prints the best settings by
evidence recall@5 and writes ``bench/results/fusion_tuning.{md,json}``. Tune on the development
split only.
"""

from __future__ import annotations

import argparse
import itertools
import json
import pickle
import sys
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from memvault.benchmarks import locomo
from memvault.bootstrap import build_services
from memvault.config import Settings
from memvault.domain.models import Filters
from memvault.domain.scoring import (
    Calibration,
    Curve,
    _calibration_table,
    decay,
    fuse,
    fuse_linear,
    is_mostly_cjk,
    keyword_relevance,
    lang_bucket,
)
from memvault.domain.text import analyze

ROOT = Path(__file__).resolve().parents[1]


@dataclass
class Cand:
    dia: str
    cos: float | None  # raw cosine (None: no embedding)
    bucket: str  # calibration language bucket
    ratio: float
    age_days: float


@dataclass
class Q:
    category: int
    evidence: set[str]
    cands: list[Cand]


def collect(dataset: Path, model: str, depth: int) -> list[Q]:
    conversations = locomo.load(dataset)
    out: list[Q] = []
    with tempfile.TemporaryDirectory() as tmp:
        svc = build_services(Settings(embedder=model, data_dir=Path(tmp)))  # type: ignore[arg-type]
        scopes = locomo._ingest(svc, conversations, progress=True)
        for conv, (scope, id_to_dia) in zip(conversations, scopes, strict=True):
            now = conv.last_session + timedelta(days=1)
            filters = Filters(as_of=now)
            for q in conv.questions:
                terms = analyze(q.text) or analyze(q.text, drop_stopwords=False)
                kw = {
                    c.id: c.score
                    for c in svc.index.search_keyword(scope, terms, limit=depth, filters=filters)
                }
                qvec = svc.embedder.embed_query(q.text)
                vec = {
                    c.id: c.score for c in svc.index.search_vector(scope, qvec, limit=depth, filters=filters)
                }
                vec.update(svc.index.vector_scores(scope, qvec, [i for i in kw if i not in vec]))
                memories = {m.id: m for m in svc.repository.get_many(scope, list({*kw, *vec}))}
                qcjk = is_mostly_cjk(q.text)
                cands = []
                for mid, m in memories.items():
                    bucket = lang_bucket(qcjk, is_mostly_cjk(m.content))
                    age = (now - m.updated_at).total_seconds() / 86400
                    cands.append(Cand(id_to_dia[mid], vec.get(mid), bucket, kw.get(mid, 0.0), age))
                out.append(Q(q.category, set(q.evidence), cands))
    return out


NOW = datetime(2030, 1, 1, tzinfo=UTC)


def datetime_from_age(age_days: float) -> datetime:
    return NOW - timedelta(days=age_days)


def evaluate(qs: list[Q], p: dict[str, Any], cal: Calibration) -> dict[str, float]:
    r5, r10, mrr = [], [], []
    for q in qs:
        scored = []
        for c in q.cands:
            v = 0.0
            if c.cos is not None:
                curve = cal.by_lang.get(c.bucket) or Curve(cal.a, cal.b)
                v = Curve(curve.a / p["temperature"], curve.b / p["temperature"])(c.cos)
            k = keyword_relevance(c.ratio, p["half"])
            if p["fusion"] == "noisy_or":
                rel = fuse(v, k, w_vector=p["wv"], w_keyword=1 - p["wv"])
            else:
                rel = fuse_linear(v, k, w_vector=p["wv"], w_keyword=1 - p["wv"])
            d = decay(
                datetime_from_age(c.age_days),
                NOW,
                half_life_days=p["half_life"],
                floor=p["floor"],
                pinned=False,
            )
            scored.append((rel * d, c.dia))
        scored.sort(reverse=True)
        ranked = [d for _, d in scored]
        r5.append(len(q.evidence & set(ranked[:5])) / len(q.evidence))
        r10.append(len(q.evidence & set(ranked[:10])) / len(q.evidence))
        first = next((i for i, d in enumerate(ranked, 1) if d in q.evidence), None)
        mrr.append(1 / first if first else 0.0)
    n = len(qs)
    return {"recall@5": sum(r5) / n, "recall@10": sum(r10) / n, "mrr": sum(mrr) / n}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument(
        "--dataset", type=Path, default=ROOT.parent / "shared" / "datasets" / "locomo" / "locomo-dev.json"
    )
    ap.add_argument("--model", default="e5")
    ap.add_argument("--depth", type=int, default=50)
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results")
    args = ap.parse_args(argv)
    if not args.dataset.is_file():
        print(f"skipped: dataset {args.dataset} not found")
        return 0
    cache = Path(tempfile.gettempdir()) / f"memvault-tune-{args.model}-{args.depth}.pickle"
    if cache.exists():
        qs = pickle.loads(cache.read_bytes())
    else:
        qs = collect(args.dataset, args.model, args.depth)
        cache.write_bytes(pickle.dumps(qs))
    model_id = {"e5": "multilingual-e5-small", "use": "use-multilingual-v3"}.get(args.model, args.model)
    # the fitted curves without the run-time ranking temperature: the grid varies the temperature
    entry = _calibration_table()[model_id]
    cal = Calibration(
        a=entry["a"],
        b=entry["b"],
        by_lang={k: Curve(v["a"], v["b"]) for k, v in entry.get("by_lang", {}).items()},
    )
    grid = {
        "fusion": ["noisy_or", "linear"],
        "temperature": [1.0, 2.0, 4.0, 8.0],
        "wv": [0.3, 0.5, 0.7],
        "half": [0.25, 0.5],
        "half_life": [30.0, 90.0, 365.0],
        "floor": [0.5, 0.8, 0.9, 1.0],
    }
    rows = []
    for values in itertools.product(*grid.values()):
        p = dict(zip(grid, values, strict=True))
        rows.append({**p, **evaluate(qs, p, cal)})
    rows.sort(key=lambda r: -r["recall@5"])

    def pick(**want: Any) -> dict[str, Any]:
        return next(r for r in rows if all(r[k] == v for k, v in want.items()))

    previous = pick(fusion="noisy_or", temperature=1.0, wv=0.7, half=0.5, half_life=30.0, floor=0.5)
    default = pick(fusion="noisy_or", temperature=2.0, wv=0.3, half=0.25, half_life=365.0, floor=0.9)
    report = {
        "model": args.model,
        "questions": len(qs),
        "depth": args.depth,
        "default": default,
        "top": rows[:15],
        "all": rows,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "fusion_tuning.json").write_text(json.dumps(report, indent=2))
    lines = [
        "# Fusion tuning on the LoCoMo development split",
        "",
        f"`python scripts/tune_fusion.py --model {args.model}`: {len(qs)} questions,"
        f" candidates = top {args.depth} of each retriever, scored offline with memvault.domain.scoring.",
        "",
        "| fusion | vector temperature | w_vector | keyword half | half-life (days) | decay floor |"
        " recall@5 | recall@10 | MRR |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in [previous, default, *rows[:15]]:
        lines.append(
            f"| {r['fusion']} | {r['temperature']} | {r['wv']} | {r['half']} | {r['half_life']:.0f}"
            f" | {r['floor']} | {r['recall@5']:.4f} | {r['recall@10']:.4f} | {r['mrr']:.4f} |"
        )
    note = "\n(first row: the design's defaults; second row: the chosen defaults; then the best 15)\n"
    (args.out / "fusion_tuning.md").write_text("\n".join(lines) + note)
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
