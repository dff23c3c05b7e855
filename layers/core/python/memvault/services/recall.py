"""Recall (DESIGN section 4): both retrievers, absolute fused relevance, decay, boost, min_score,
optional MMR, access tracking."""

from __future__ import annotations

import logging
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from memvault.config import RecallSettings
from memvault.domain.errors import ValidationError
from memvault.domain.models import (
    Filters,
    Memory,
    RecallHit,
    RecallQuery,
    RecallResult,
    Scope,
)
from memvault.domain.prompt import context_block
from memvault.domain.scoring import (
    Calibration,
    boost,
    decay,
    fuse,
    fuse_linear,
    is_mostly_cjk,
    keyword_relevance,
    lang_bucket,
    mmr_order,
    rrf,
)
from memvault.domain.text import analyze
from memvault.ports import Clock, Embedder, MemoryRepository, SearchIndex, Vector

log = logging.getLogger("memvault.recall")

_EMBED_POOL = ThreadPoolExecutor(max_workers=4, thread_name_prefix="memvault-query-embed")


@dataclass
class Scored:
    """One scored candidate (scored from its ScoringRow, before its record is loaded)."""

    id: str
    vector: float
    keyword: float
    relevance: float
    decay: float
    boost: float

    @property
    def score(self) -> float:
        return self.relevance * self.decay * self.boost


@dataclass
class Ranked(Scored):
    """A winning candidate with its record."""

    memory: Memory


class RecallService:
    def __init__(
        self,
        *,
        settings: RecallSettings,
        memory_types: tuple[str, ...],
        repository: MemoryRepository,
        index: SearchIndex,
        embedder: Embedder,
        calibration: Calibration,
        clock: Clock,
    ) -> None:
        self.settings = settings
        self.memory_types = memory_types
        self.repo = repository
        self.index = index
        self.embedder = embedder
        self.calibration = calibration
        self.clock = clock

    def recall(self, scope: Scope, query: RecallQuery, *, max_security_rank: int = 3) -> RecallResult:
        top, degraded, retrievers = self.rank(
            scope, query, limit=query.top_k, max_security_rank=max_security_rank
        )
        now = self.clock.now()
        if query.track_access and top:
            try:
                self.repo.touch(scope, [x.memory.id for x in top], now)
            except Exception:  # access tracking is best effort; it never fails a recall
                log.exception("access tracking failed")
        hits = [
            RecallHit(
                memory=x.memory,
                score=round(x.score, 6),
                relevance=round(x.relevance, 6),
                vector=round(x.vector, 6),
                keyword=round(x.keyword, 6),
                decay=round(x.decay, 6),
                boost=round(x.boost, 6),
            )
            for x in top
        ]
        return RecallResult(
            hits=hits,
            degraded=degraded,
            retrievers=retrievers,
            prompt_block=context_block([h.memory for h in hits]),
        )

    def rank(
        self, scope: Scope, query: RecallQuery, *, limit: int, max_security_rank: int = 3
    ) -> tuple[list[Ranked], bool, list[str]]:
        """The ``limit`` best candidates (``limit`` may exceed the API's top_k: benchmarks use 25),
        whether recall degraded, and the retrievers used."""
        s = self.settings
        for t in query.types:
            if t not in self.memory_types:
                raise ValidationError(f"types: unknown memory type {t!r}", field="types")
        now = self.clock.now()
        filters = Filters(
            types=tuple(query.types),
            tags=tuple(query.tags),
            session_id=query.session_id,
            max_security_rank=max_security_rank,
            as_of=now,
        )
        depth = max(s.candidate_floor, s.candidate_per_k * limit)
        degraded = False
        retrievers: list[str] = []

        # The query embedding (C code, GIL released) runs in a worker thread while the keyword
        # search (SQLite, GIL released) runs here: recall pays the longer of the two, not the sum.
        embedding: Future[Vector] | None = None
        if query.mode != "keyword":
            embedding = _EMBED_POOL.submit(self.embedder.embed_query, query.query)
        keyword_ranks: dict[str, int] = {}
        keyword_ratio: dict[str, float] = {}
        if query.mode != "vector":
            terms = analyze(query.query) or analyze(query.query, drop_stopwords=False)
            for rank, c in enumerate(
                self.index.search_keyword(scope, terms, limit=depth, filters=filters), 1
            ):
                keyword_ranks[c.id] = rank
                keyword_ratio[c.id] = c.score
            retrievers.append("keyword")

        qvec: Vector | None = None
        vector_ranks: dict[str, int] = {}
        cosines: dict[str, float] = {}
        if embedding is not None:
            try:
                qvec = embedding.result()
            except Exception:
                log.exception("query embedding failed; recall degrades to keyword only")
                degraded = True
            if qvec is not None:
                found = self.index.search_vector(scope, qvec, limit=depth, filters=filters)
                vector_ranks = {c.id: rank for rank, c in enumerate(found, 1)}
                cosines = {c.id: c.score for c in found}
                keyword_only = [i for i in keyword_ranks if i not in cosines]
                cosines.update(self.index.vector_scores(scope, qvec, keyword_only))
                retrievers.append("vector")

        ids = list(dict.fromkeys([*keyword_ranks, *vector_ranks]))
        # Score every candidate from its scoring row; parse whole records only for the winners.
        scored: list[Scored] = []
        query_cjk = is_mostly_cjk(query.query)
        for row in self.repo.scoring_rows(scope, ids):
            cosine = cosines.get(row.id)
            v = 0.0
            if cosine is not None:
                v = self.calibration.relevance(cosine, lang_bucket(query_cjk, row.cjk))
            k = keyword_relevance(keyword_ratio.get(row.id, 0.0), s.keyword_half)
            if query.mode == "keyword":
                relevance = k
            elif query.mode == "vector":
                relevance = v
            elif query.mode == "rrf":
                relevance = rrf([keyword_ranks.get(row.id), vector_ranks.get(row.id)])
            elif s.fusion == "linear":
                relevance = fuse_linear(v, k, w_vector=s.w_vector, w_keyword=s.w_keyword)
            else:
                relevance = fuse(v, k, w_vector=s.w_vector, w_keyword=s.w_keyword)
            scored.append(
                Scored(
                    id=row.id,
                    vector=v,
                    keyword=k,
                    relevance=relevance,
                    decay=decay(
                        row.updated_at,
                        now,
                        half_life_days=s.half_life_days,
                        floor=s.decay_floor,
                        pinned=row.pinned,
                    ),
                    boost=boost(row.importance, row.access_count),
                )
            )
        min_score = s.min_score if query.min_score is None else query.min_score
        scored = [x for x in scored if x.relevance >= min_score]
        scored.sort(key=lambda x: (-x.score, x.id))
        pool = scored[:depth] if query.mmr else scored[:limit]
        records = {
            m.id: m for m in self.repo.get_many(scope, [x.id for x in pool], with_embeddings=query.mmr)
        }
        # a record deleted since the candidates were scored drops out
        ranked = [Ranked(**vars(x), memory=records[x.id]) for x in pool if x.id in records]
        if query.mmr and len(ranked) > 1:
            vecs = np.array(
                [x.memory.embedding or [0.0] * self.embedder.dimension for x in ranked], dtype=np.float32
            )
            order = mmr_order([x.score for x in ranked], vecs, k=limit, lambda_=s.mmr_lambda)
            ranked = [ranked[i] for i in order]
        return ranked[:limit], degraded, retrievers
