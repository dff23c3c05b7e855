"""Start-of-run snapshot (DESIGN section 5): pinned, then up to 3 relevant to trigger + focus, then up
to 5 created in the last 24 hours; deduplicated and trimmed to the token budget (drop the lowest
priority first, then shorten content; the budget is never exceeded)."""

from __future__ import annotations

from datetime import timedelta

from memvault.config import SnapshotSettings
from memvault.domain.models import (
    Filters,
    Memory,
    RecallQuery,
    Scope,
    Snapshot,
    SnapshotItem,
    SnapshotReason,
    SnapshotRequest,
)
from memvault.domain.prompt import SNAPSHOT_HEADING, SNAPSHOT_PREAMBLE, memory_line, snapshot_block
from memvault.domain.tokens import estimate_tokens, truncate_to_tokens
from memvault.ports import Clock, MemoryRepository
from memvault.services.recall import RecallService

MIN_ITEM_TOKENS = 12


class SnapshotService:
    def __init__(
        self, *, settings: SnapshotSettings, repository: MemoryRepository, recall: RecallService, clock: Clock
    ) -> None:
        self.settings = settings
        self.repo = repository
        self.recall_service = recall
        self.clock = clock

    def snapshot(self, scope: Scope, request: SnapshotRequest, *, max_security_rank: int = 3) -> Snapshot:
        s = self.settings
        now = self.clock.now()
        filters = Filters(session_id=request.session_id, max_security_rank=max_security_rank, as_of=now)
        chosen: list[tuple[Memory, SnapshotReason]] = []
        seen: set[str] = set()

        def add(memories: list[Memory], reason: SnapshotReason) -> None:
            for m in memories:
                if m.id not in seen:
                    seen.add(m.id)
                    chosen.append((m, reason))

        add(self.repo.pinned(scope, filters, s.max_pinned), "pinned")
        if s.relevant:
            query = " ".join(x for x in (request.trigger, request.focus) if x)
            result = self.recall_service.recall(
                scope,
                RecallQuery(query=query, session_id=request.session_id, top_k=s.relevant, track_access=False),
                max_security_rank=max_security_rank,
            )
            add([h.memory for h in result.hits], "relevant")
        if s.recent:
            since = now - timedelta(hours=s.recent_hours)
            add(self.repo.recent(scope, since, filters, s.recent), "recent")
        return self._fit(chosen, request.token_budget)

    def _fit(self, chosen: list[tuple[Memory, SnapshotReason]], budget: int) -> Snapshot:
        """Lines of the block are separated by newlines, so the block's estimate is the sum of its
        lines' estimates: each line is estimated once, and again only when it is shortened."""
        header = estimate_tokens(SNAPSHOT_HEADING) + estimate_tokens(SNAPSHOT_PREAMBLE)
        texts = [m.content for m, _ in chosen]
        cost = [estimate_tokens(memory_line(m, m.content)) for m, _ in chosen]
        floor = [
            min(cost[i], estimate_tokens(memory_line(m, truncate_to_tokens(m.content, MIN_ITEM_TOKENS))))
            for i, (m, _) in enumerate(chosen)
        ]
        # 1. Drop the lowest-priority items (the list is in priority order: pinned first) while
        #    even their shortest forms cannot fit.
        n = len(chosen)
        while n > 0 and header + sum(floor[:n]) > budget:
            n -= 1
        # 2. Shorten content, longest first, until the block fits.
        while n > 0 and header + sum(cost[:n]) > budget:
            over = header + sum(cost[:n]) - budget
            i = max(range(n), key=lambda j: cost[j])
            target = max(MIN_ITEM_TOKENS, estimate_tokens(texts[i]) - over - 2)
            shorter = truncate_to_tokens(texts[i], target)
            if shorter == texts[i] or not shorter:
                n -= 1  # cannot shorten further: drop the lowest-priority item
                continue
            texts[i] = shorter
            cost[i] = estimate_tokens(memory_line(chosen[i][0], shorter))
        lines = [memory_line(m, texts[i]) for i, (m, _) in enumerate(chosen[:n])]
        block = snapshot_block(lines)
        items = [
            SnapshotItem(memory=m, reason=reason, text=texts[i], tokens=cost[i])
            for i, (m, reason) in enumerate(chosen[:n])
        ]
        tokens = header + sum(cost[:n]) if n else 0
        return Snapshot(items=items, prompt_block=block, tokens=tokens, token_budget=budget)
