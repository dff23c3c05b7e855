"""Retrieval benchmark on LoCoMo-format conversations (``memvault bench retrieval``).

One memory per dialogue turn (``"<speaker>: <text>"``, plus ``[image: <caption>]`` when the turn
carries one), the session's date as its time, one scope per conversation. Every question with
evidence is recalled through the real RecallService (SQLite store, real embedder) in each mode,
and scored by evidence recall@k (share of the evidence turns in the top k), any@k (at least one in
the top k) and MRR (first evidence turn), per category and overall, with and without category 5
(adversarial).

Label noise handled (and counted in the output): evidence strings like ``"D8:6; D9:17"`` are split,
``"D:11:26"`` is read as ``D11:26``, ``"D30:05"`` as ``D30:5``; a bare ``"D"`` and ids that name no
turn are dropped; questions left with no evidence are skipped.

Turns are written with ``create_many`` (no dedup) so every dialogue turn stays a separate memory,
with embeddings computed once per model in batches. "Now" for time decay is one day after the
conversation's last session, as for an agent asked right after the last conversation.
"""

from __future__ import annotations

import json
import re
import statistics
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from memvault.adapters.system import UlidFactory
from memvault.domain.indexing import content_hash
from memvault.domain.models import EmbeddingStatus, Memory, RecallQuery, Scope

KS = (1, 5, 10, 25)
MODES = ("keyword", "vector", "hybrid", "rrf")
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
_EVIDENCE = re.compile(r"D:?(\d+):0*(\d+)")


@dataclass
class Turn:
    dia_id: str
    content: str
    at: datetime


@dataclass
class Question:
    text: str
    category: int
    evidence: list[str]


@dataclass
class Conversation:
    sample_id: str
    turns: list[Turn]
    questions: list[Question]
    last_session: datetime
    dropped_evidence: int = 0
    skipped_questions: int = 0


@dataclass
class Scores:
    recall: dict[int, list[float]] = field(default_factory=lambda: defaultdict(list))
    any: dict[int, list[float]] = field(default_factory=lambda: defaultdict(list))
    rr: list[float] = field(default_factory=list)

    def add(self, ranked: list[str], evidence: set[str]) -> None:
        for k in KS:
            found = len(evidence & set(ranked[:k]))
            self.recall[k].append(found / len(evidence))
            self.any[k].append(1.0 if found else 0.0)
        first = next((i for i, d in enumerate(ranked, 1) if d in evidence), None)
        self.rr.append(1.0 / first if first else 0.0)

    def summary(self) -> dict[str, float]:
        out: dict[str, float] = {"n": float(len(self.rr))}
        for k in KS:
            out[f"recall@{k}"] = round(statistics.fmean(self.recall[k]), 4) if self.rr else 0.0
            out[f"any@{k}"] = round(statistics.fmean(self.any[k]), 4) if self.rr else 0.0
        out["mrr"] = round(statistics.fmean(self.rr), 4) if self.rr else 0.0
        return out


def parse_date(text: str) -> datetime:
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


def normalize_evidence(raw: str) -> list[str]:
    return [f"D{a}:{int(b)}" for a, b in _EVIDENCE.findall(raw)]


def load(path: Path) -> list[Conversation]:
    data = json.loads(path.read_text(encoding="utf-8"))
    conversations = []
    for sample in data:
        conv = sample["conversation"]
        turns: list[Turn] = []
        last = datetime(1970, 1, 1, tzinfo=UTC)
        n = 1
        while f"session_{n}" in conv:
            at = parse_date(conv[f"session_{n}_date_time"])
            last = max(last, at)
            for i, t in enumerate(conv[f"session_{n}"]):
                text = f"{t['speaker']}: {t['text']}"
                if t.get("blip_caption"):
                    text += f" [image: {t['blip_caption']}]"
                # turns of a session keep their order: one second apart
                turns.append(Turn(t["dia_id"], text, at + timedelta(seconds=i)))
            n += 1
        known = {t.dia_id for t in turns}
        c = Conversation(sample["sample_id"], turns, [], last)
        for q in sample["qa"]:
            ev: list[str] = []
            for raw in q.get("evidence", []):
                parsed = normalize_evidence(raw)
                c.dropped_evidence += 0 if parsed else 1
                for e in parsed:
                    if e in known:
                        ev.append(e)
                    else:
                        c.dropped_evidence += 1
            if not ev:
                c.skipped_questions += 1
                continue
            c.questions.append(Question(q["question"], int(q["category"]), sorted(set(ev))))
        conversations.append(c)
    return conversations


def run(
    dataset: Path,
    models: list[str],
    *,
    modes: tuple[str, ...] = MODES,
    limit_conversations: int | None = None,
    settings_overrides: dict[str, Any] | None = None,
    progress: bool = True,
) -> dict[str, Any]:
    """Run every mode with every model; the result's ``modes`` key is ``<mode>`` for the default
    model (the first) and ``<mode>/<model>`` for the others."""
    from memvault.bootstrap import build_services
    from memvault.config import Settings

    conversations = load(dataset)[:limit_conversations]
    results: dict[str, Any] = {}
    timings: dict[str, float] = {}
    for mi, model in enumerate(models):
        with tempfile.TemporaryDirectory(prefix="memvault-locomo-") as tmp:
            settings = Settings(embedder=model, data_dir=Path(tmp), **(settings_overrides or {}))
            clock = _Clock()
            svc = build_services(settings, clock=clock)
            started = time.perf_counter()
            scopes = _ingest(svc, conversations, progress)
            timings[f"ingest/{model}"] = round(time.perf_counter() - started, 1)
            for mode in modes:
                started = time.perf_counter()
                overall, no_adv = Scores(), Scores()
                by_cat: defaultdict[int, Scores] = defaultdict(Scores)
                for conv, (scope, id_to_dia) in zip(conversations, scopes, strict=True):
                    clock.now_value = conv.last_session + timedelta(days=1)
                    for q in conv.questions:
                        query = RecallQuery.model_validate(
                            {"query": q.text, "mode": mode, "min_score": 0.0, "track_access": False}
                        )
                        ranked, _, _ = svc.recall.rank(scope, query, limit=max(KS))
                        dia = [id_to_dia[r.memory.id] for r in ranked]
                        ev = set(q.evidence)
                        overall.add(dia, ev)
                        by_cat[q.category].add(dia, ev)
                        if q.category != 5:
                            no_adv.add(dia, ev)
                key = mode if mi == 0 else f"{mode}/{model}"
                results[key] = {
                    "model": svc.embedder.model_id,
                    "overall": overall.summary(),
                    "overall_without_adversarial": no_adv.summary(),
                    "by_category": {CATEGORIES[c]: s.summary() for c, s in sorted(by_cat.items())},
                }
                timings[key] = round(time.perf_counter() - started, 1)
                if progress:
                    print(f"  {key:<18} recall@5 {overall.summary()['recall@5']:.4f}  ({timings[key]} s)")
    return {
        "dataset": str(dataset),
        "conversations": len(conversations),
        "turns": sum(len(c.turns) for c in conversations),
        "questions": sum(len(c.questions) for c in conversations),
        "skipped_questions_without_evidence": sum(c.skipped_questions for c in conversations),
        "dropped_evidence_ids": sum(c.dropped_evidence for c in conversations),
        "default_model": models[0],
        "modes": results,
        "seconds": timings,
    }


class _Clock:
    def __init__(self) -> None:
        self.now_value = datetime.now(UTC)

    def now(self) -> datetime:
        return self.now_value


def _ingest(
    svc: Any, conversations: list[Conversation], progress: bool
) -> list[tuple[Scope, dict[str, str]]]:
    ids = UlidFactory()
    out = []
    for i, conv in enumerate(conversations):
        scope = Scope(tenant_id="bench", agent_id=f"conv-{i}", user_id="")
        vectors = svc.embedder.embed_documents([t.content for t in conv.turns])
        memories, id_to_dia = [], {}
        for turn, vec in zip(conv.turns, vectors, strict=True):
            mid = ids.new_id(turn.at)
            id_to_dia[mid] = turn.dia_id
            memories.append(
                Memory(
                    id=mid,
                    tenant_id=scope.tenant_id,
                    agent_id=scope.agent_id,
                    user_id="",
                    type="episode",
                    content=turn.content,
                    created_at=turn.at,
                    updated_at=turn.at,
                    content_hash=content_hash("episode", turn.content),
                    embedding=[float(x) for x in vec],
                    embedding_model=svc.embedder.model_id,
                    embedding_status=EmbeddingStatus.READY,
                )
            )
        svc.repository.create_many(memories)
        out.append((scope, id_to_dia))
        if progress:
            print(f"  ingested {conv.sample_id}: {len(memories)} turns, {len(conv.questions)} questions")
    return out


def markdown(result: dict[str, Any]) -> str:
    lines = [
        "# Retrieval on LoCoMo",
        "",
        f"Dataset `{result['dataset']}`: {result['conversations']} conversations, {result['turns']} turns"
        f" (one memory each), {result['questions']} questions with evidence"
        f" ({result['skipped_questions_without_evidence']} skipped without evidence,"
        f" {result['dropped_evidence_ids']} malformed or unknown evidence ids dropped).",
        f"Default model: {result['default_model']}. Command: `memvault bench retrieval --dataset PATH`.",
        "",
        "| mode | model | recall@1 | recall@5 | recall@10 | recall@25 | any@5 | MRR | recall@5 w/o adv. |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for mode, r in result["modes"].items():
        o, na = r["overall"], r["overall_without_adversarial"]
        lines.append(
            f"| {mode} | {r['model']} | {o['recall@1']:.3f} | {o['recall@5']:.3f} | {o['recall@10']:.3f} |"
            f" {o['recall@25']:.3f} | {o['any@5']:.3f} | {o['mrr']:.3f} | {na['recall@5']:.3f} |"
        )
    lines += ["", "## recall@5 by category", ""]
    cats = list(CATEGORIES.values())
    lines.append("| mode | " + " | ".join(cats) + " |")
    lines.append("|---" * (len(cats) + 1) + "|")
    for mode, r in result["modes"].items():
        cells = [f"{r['by_category'].get(c, {}).get('recall@5', 0):.3f}" for c in cats]
        lines.append(f"| {mode} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
