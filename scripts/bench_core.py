"""In-process latency benchmark of the core on the embedded SQLite backend, with the real local models.

Measures, for each embedding model and corpus size, with every memory of a size in ONE scope (the
hard case):

1. ``save`` of new, distinct memories one at a time (real embedding + dedup + write);
2. batch ingest throughput: ``save_batch`` of 100-item batches, memories/s;
3. recall latency over a realistic query stream (Chinese and English, some queries repeated so the
   query-embedding LRU cache hit rate is realistic), with cold (first-seen) and warm (repeated)
   queries also reported apart, plus the pieces of a cold recall (query embedding, keyword search,
   vector search, fetch, access tracking) timed on their own;
4. ``snapshot`` latency over varied triggers.

Corpus: N synthetic but realistic memories; a pool of ~1,500 distinct texts rendered from the same
templates is embedded for real, and each memory gets the vector of a pool text of its template plus
gaussian noise (renormalized), while its own text stays distinct (FTS indexes N different docs).
Embedding 100k texts for real with e5 would take about an hour here.

Writes ``<out>/core_latency.md`` and ``<out>/core_latency.json`` and prints the tables.

Usage::

    .venv/bin/python scripts/bench_core.py [--sizes 10000 100000] [--models e5 use] [--out bench/results]
        [--profile-dir DIR]   # also cProfile a few cold recalls, snapshots and saves per run

``--models`` accepts ``e5``, ``use`` and ``hashing`` (the test-only embedder, used by the smoke test).
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import hashlib
import io
import json
import math
import os
import platform
import pstats
import random
import re
import resource
import shutil
import sqlite3
import string
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from memvault.adapters.system import UlidFactory
from memvault.bootstrap import Services, build_embedder, build_services
from memvault.config import Settings
from memvault.domain.indexing import content_hash
from memvault.domain.models import (
    EmbeddingStatus,
    Filters,
    Memory,
    RecallQuery,
    SaveCommand,
    Scope,
    SnapshotRequest,
    Source,
    SourceKind,
)
from memvault.domain.text import analyze
from memvault.ports import Embedder

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "bench" / "results"
MODELS = ("e5", "use", "hashing")
SCOPE = Scope(tenant_id="bench-tenant", agent_id="bench-agent", user_id="bench-user")

# --------------------------------------------------------------------------------------------------
# Targets (DESIGN / issue): PASS/MISS is printed next to the figures.
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    model: str
    metric: str  # "save_ms.p95", "recall_ms.p95", "batch_per_s", ...
    op: str  # "<=" or ">="
    value: float
    min_size: int = 0  # checked only at sizes >= min_size
    note: str = ""

    @property
    def label(self) -> str:
        where = f" at {self.min_size // 1000}k" if self.min_size else ""
        return f"{self.metric} {self.op} {self.value:g}{where}"

    def check(self, result: dict[str, Any]) -> bool | None:
        if result["model"] != self.model or result["size"] < self.min_size:
            return None
        value = metric_value(result, self.metric)
        if value is None or not math.isfinite(value):
            return False
        return value <= self.value if self.op == "<=" else value >= self.value


TARGETS: tuple[Target, ...] = (
    Target("e5", "recall_ms.p95", "<=", 40, 100_000, "realistic query mix (LRU hits included)"),
    Target("e5", "recall_cold_ms.p95", "<=", 40, 100_000, "stricter reading: cold queries only"),
    Target("e5", "snapshot_ms.p95", "<=", 50, 100_000),
    Target("e5", "save_ms.p95", "<=", 60),
    Target("e5", "batch_per_s", ">=", 40),
    Target("use", "save_ms.p95", "<=", 15),
    Target("use", "batch_per_s", ">=", 800),
)


def metric_value(result: dict[str, Any], metric: str) -> float | None:
    value: Any = result
    for part in metric.split("."):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return float(value) if isinstance(value, int | float) else None


# --------------------------------------------------------------------------------------------------
# Synthetic corpus: templates with slots, in English, Chinese and mixed Chinese/English.
# --------------------------------------------------------------------------------------------------

SLOTS: dict[str, tuple[str, ...]] = {
    "person": (
        "Alice",
        "Bob",
        "Carol",
        "Dan",
        "Erin",
        "Frank",
        "Grace",
        "Heidi",
        "Ivan",
        "Judy",
        "Mallory",
        "Oscar",
        "Peggy",
        "Rupert",
        "Sybil",
        "Trent",
        "Victor",
        "Wendy",
        "Priya",
        "Kenji",
    ),
    "person_zh": (
        "小王",
        "李雷",
        "韩梅梅",
        "张伟",
        "王芳",
        "刘洋",
        "陈静",
        "赵磊",
        "老周",
        "小林",
        "孙悦",
        "马超",
    ),
    "project": (
        "atlas",
        "borealis",
        "checkout-v2",
        "helios",
        "ledger-sync",
        "nimbus",
        "orion-api",
        "quill",
        "memvault",
        "polaris",
        "saffron",
        "tundra-etl",
        "zephyr",
        "kestrel",
        "mosaic-ui",
    ),
    "tech": (
        "Postgres 16",
        "DynamoDB",
        "Redis",
        "Kafka",
        "SQLite",
        "FastAPI",
        "React",
        "Go 1.22",
        "Rust",
        "Terraform",
        "Kubernetes",
        "AWS Lambda",
        "OpenSearch",
        "ClickHouse",
        "gRPC",
        "Celery",
        "Next.js",
    ),
    "lang": ("Python", "TypeScript", "Go", "Rust", "Kotlin", "Java", "C++", "Elixir"),
    "editor": ("VS Code", "Neovim", "JetBrains PyCharm", "Emacs", "Zed", "Sublime Text"),
    "ticker": ("AAPL", "NVDA", "TSLA", "MSFT", "AMZN", "SPY", "QQQ", "BTC", "ETH", "SOL", "TLT", "GLD"),
    "ticker_zh": (
        "贵州茅台",
        "宁德时代",
        "腾讯控股",
        "比亚迪",
        "招商银行",
        "中国平安",
        "沪深300",
        "创业板指",
    ),
    "place": (
        "Lisbon",
        "Tokyo",
        "Berlin",
        "Chengdu",
        "Hangzhou",
        "Seattle",
        "Kyoto",
        "Barcelona",
        "Vancouver",
        "Singapore",
        "Reykjavik",
        "Taipei",
    ),
    "place_zh": (
        "杭州",
        "成都",
        "上海",
        "北京",
        "深圳",
        "大理",
        "厦门",
        "西安",
        "青岛",
        "苏州",
        "桂林",
        "重庆",
    ),
    "food": (
        "spicy ramen",
        "sushi",
        "dark chocolate",
        "oat milk lattes",
        "vegan burgers",
        "dim sum",
        "sourdough bread",
        "green tea",
        "espresso",
        "pho",
    ),
    "food_zh": ("火锅", "小笼包", "麻辣烫", "牛肉面", "绿茶", "手冲咖啡", "饺子", "烤鸭", "酸菜鱼", "豆浆"),
    "hobby": (
        "trail running",
        "bouldering",
        "chess",
        "woodworking",
        "photography",
        "piano",
        "cycling",
        "birdwatching",
        "sourdough baking",
        "swimming",
    ),
    "hobby_zh": ("跑步", "游泳", "书法", "摄影", "钓鱼", "骑行", "围棋", "爬山", "弹吉他", "做饭"),
    "weekday": ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"),
    "weekday_zh": ("周一", "周二", "周三", "周四", "周五", "周六", "周日"),
    "month": (
        "January",
        "February",
        "March",
        "April",
        "May",
        "June",
        "July",
        "August",
        "September",
        "October",
        "November",
        "December",
    ),
    "service": ("billing", "checkout", "search", "auth", "notifications", "payments", "ingest", "reporting"),
    "metric": ("p99 latency", "error rate", "CPU usage", "memory usage", "queue depth", "disk IO"),
    "relation": ("sister", "brother", "mother", "father", "daughter", "son", "best friend", "manager"),
    "relation_zh": ("妈妈", "爸爸", "姐姐", "弟弟", "女儿", "儿子", "老婆", "同事"),
    "pet": ("golden retriever", "tabby cat", "border collie", "parrot", "corgi", "rabbit"),
}

NUMERIC_SLOTS: dict[str, Callable[[random.Random], str]] = {
    "num": lambda r: str(r.randint(2, 99)),
    "big": lambda r: f"{r.randint(1, 90) * 1000:,}",
    "pct": lambda r: f"{r.uniform(0.5, 35):.1f}%",
    "price": lambda r: f"{r.uniform(3, 900):.2f}",
    "version": lambda r: f"v{r.randint(1, 9)}.{r.randint(0, 30)}.{r.randint(0, 20)}",
    "err": lambda r: f"ERR_{r.randint(1000, 9999)}",
    "ticket": lambda r: f"{r.choice(('JIRA', 'OPS', 'INC', 'SEC'))}-{r.randint(100, 9999)}",
    "port": lambda r: str(r.randint(1024, 65000)),
    "hour": lambda r: str(r.randint(6, 23)),
    "day": lambda r: str(r.randint(1, 28)),
    "mon": lambda r: str(r.randint(1, 12)),
    "year": lambda r: str(r.choice((2023, 2024, 2025, 2026))),
    "ms": lambda r: str(r.randint(20, 4000)),
    "x": lambda r: str(r.randint(2, 12)),
}

# (topic, memory type, tags) -> templates per language.
TOPICS: dict[str, dict[str, Any]] = {
    "preference": {
        "type": "preference",
        "tags": ("preferences", "style", "ui", "food", "tools"),
        "en": (
            "User prefers {editor} with a dark theme.",
            "User prefers {lang} over {lang} for quick scripts.",
            "The user likes {food} and usually orders it on {weekday}.",
            "Always answer in short bullet points; the user dislikes long paragraphs and filler text.",
            "{person} wants status updates by email, never on Slack, and only after {hour}:00.",
            "User prefers metric units and 24-hour time in every answer.",
            "When writing code for this user, use type hints and keep functions under {num} lines.",
            "The user does not drink coffee after {hour}:00 and prefers {food} instead.",
            "Use {lang} examples first; the user only reads {lang} snippets if asked.",
            "User prefers tabs over spaces in Makefiles and spaces everywhere else.",
            "{person} likes meetings on {weekday} mornings and blocks {weekday} afternoons for focus work.",
            "Prefers concise commit messages in the imperative mood, under {num} characters.",
        ),
        "zh": (
            "用户喜欢{food_zh}，尤其是在{weekday_zh}晚上。",
            "用户希望所有回答都使用简体中文，并且尽量简洁。",
            "{person_zh}不喜欢开长会，会议最好控制在{num}分钟以内。",
            "用户习惯每天早上{hour}点之前处理邮件。",
            "回答代码问题时，用户更喜欢先看结论，再看详细解释。",
            "用户周末喜欢{hobby_zh}，不希望周末收到工作提醒。",
            "用户对花生过敏，推荐餐厅时要避开含花生的菜。",
            "{person_zh}偏好用表格总结对比结果。",
        ),
        "mixed": (
            "用户喜欢用 {editor} 写 {lang}，主题要 dark mode。",
            "回复时请用中文解释，但代码注释用 English。",
            "{person_zh} prefers {lang}，不太喜欢 {lang}。",
            "用户的 terminal 字体是 JetBrains Mono，字号 {num}。",
        ),
    },
    "project": {
        "type": "project",
        "tags": ("project", "infra", "backend", "frontend", "architecture"),
        "en": (
            "Project {project} uses {tech} for storage and {tech} for the job queue.",
            "The {project} API listens on port {port} in staging and behind the load balancer in production.",
            "{project} is owned by {person}; escalate schema changes to them first.",
            "The {service} service in {project} is pinned to {version} until the {month} release.",
            "Staging for {project} is rebuilt every {weekday} at {hour}:00 UTC; never deploy during it.",
            "{project} runs its integration tests against {tech} in Docker; it takes about {num} minutes.",
            "The {project} repository keeps infrastructure code under infra/ and uses {tech}.",
            "Feature flags for {project} live in the config service; the new {service} flow is off.",
            "{project} has a hard dependency on the {service} service for every write request.",
            "The on-call rotation for {project} changes every {weekday}; {person} is primary this week.",
            "Build artifacts of {project} are kept for {num} days in the artifact store.",
            "{project} targets {lang} {version} and must stay compatible with {tech}.",
        ),
        "zh": (
            "{project}项目的数据库用的是{tech}，缓存用的是Redis。",
            "{project}的负责人是{person_zh}，接口变更需要先找他确认。",
            "{project}的测试环境每{weekday_zh}晚上{hour}点重建，期间不要发布。",
            "{project}项目的代码规范要求函数不超过{num}行。",
            "{service}服务的配置文件放在{project}仓库的config目录下。",
            "{project}的发布窗口是每{weekday_zh}下午，紧急修复除外。",
            "{project}项目下个月{day}号要完成迁移。",
            "{project}的前端部分由{person_zh}维护。",
        ),
        "mixed": (
            "{project} 的 {service} service 用 {tech}，部署在 Kubernetes 上。",
            "{project} 的 staging 环境端口是 {port}，不要和 production 搞混。",
            "{project} 的 CI 跑一次大约 {num} 分钟，主要慢在 integration tests。",
            "{project} 现在锁定在 {version}，等 {person} review 之后再升级。",
        ),
    },
    "decision": {
        "type": "decision",
        "tags": ("decision", "architecture", "adr", "process"),
        "en": (
            "We decided to migrate {project} from {tech} to {tech} because of operational cost.",
            "Decision: {project} will use {lang} for the new {service} service; {person} signed off.",
            "We chose to keep {tech} for {project} after the benchmark showed {pct} better throughput.",
            "The team agreed to freeze {project} features during {month} to pay down tech debt.",
            "We will not support {tech} in {project} anymore; the last version with it is {version}.",
            "Decided to split the {service} service out of {project} before the {month} launch.",
            "After the review on {weekday}, we decided that all {project} writes go through the queue.",
            "ADR-{num}: adopt {tech} for event storage in {project}, revisit in {month}.",
            "We agreed with {person} to cap {service} retries at {x} with exponential backoff.",
            "Decision: code reviews for {project} need two approvals when they touch {service}.",
        ),
        "zh": (
            "我们决定把{project}从{tech}迁移到{tech}，主要是为了降低运维成本。",
            "团队决定{project}在{month_zh}前不再加新功能，专心还技术债。",
            "经过讨论，{service}服务的重试次数上限定为{x}次。",
            "{person_zh}拍板：{project}的新模块用{lang}开发。",
            "我们决定每{weekday_zh}做一次{project}的架构评审。",
            "决定保留{tech}，因为压测结果比替代方案好{pct}。",
        ),
        "mixed": (
            "决定 {project} 的 {service} 改用 {tech}，{person} 已经 approve。",
            "ADR-{num}：{project} 的 event store 用 {tech}。",
            "我们决定 {service} retries 最多 {x} 次，用 exponential backoff。",
        ),
    },
    "incident": {
        "type": "episode",
        "tags": ("incident", "oncall", "postmortem", "outage"),
        "en": (
            "Incident {ticket}: {service} returned {err} for {num} minutes after the {version} deploy.",
            "On {weekday} the {service} service's {metric} hit {ms} ms; a missing index was the cause.",
            "{err} in {project} means the upstream {service} token expired; rotate it in the secrets store.",
            "Postmortem {ticket}: a config change disabled {service} health checks (partial outage).",
            "The {project} nightly job failed with {err} because the disk filled up at {pct}.",
            "Rollback of {project} {version} took {num} minutes; next time use the blue-green switch.",
            "{person} fixed {ticket} by raising the {service} connection pool from {x} to {num}.",
            "Alert fatigue: the {metric} alert on {service} fired {num} times last week with no real issue.",
            "During the {month} outage, {service} lost {big} events; they were replayed from Kafka.",
            "Memory leak in the {service} worker of {project}: RSS grew about {num} MB per hour.",
        ),
        "zh": (
            "事故{ticket}：{service}服务在发布{version}之后报错{err}，持续了{num}分钟。",
            "{weekday_zh}凌晨{project}的数据库磁盘占满，导致写入失败。",
            "{service}服务的{metric}突然升高，原因是缺少索引。",
            "{person_zh}排查发现{err}是因为上游的证书过期了。",
            "上次{project}回滚花了{num}分钟，下次要用蓝绿发布。",
            "{month_zh}那次故障丢了{big}条消息，后来从Kafka重放恢复了。",
        ),
        "mixed": (
            "{project} 报 {err}，原因是 {service} 的 token 过期，需要去 secrets manager 轮换。",
            "事故 {ticket}：{service} 的 p99 latency 升到 {ms} ms，加了 index 之后恢复。",
            "{person} 说 {service} 的 connection pool 要从 {x} 调到 {num}。",
        ),
    },
    "trading": {
        "type": "pattern",
        "tags": ("trading", "lesson", "risk", "markets"),
        "en": (
            "Trading lesson: never add to a losing {ticker} position; I lost {pct} doing that in {month}.",
            "Sold {ticker} at {price} after it broke the 50-day moving average; stick to the stop rule.",
            "Do not trade {ticker} in the first {num} minutes after the open; spreads are too wide.",
            "Position sizing rule: risk at most {pct} of the account on a single {ticker} trade.",
            "Earnings week for {ticker}: implied volatility was too high, so selling premium worked better.",
            "Took profit on {ticker} at {price}, up {pct}; the plan said scale out in thirds.",
            "Lesson from {month}: chasing {ticker} after a gap up lost money {x} times in a row.",
            "Keep a trading journal entry for every {ticker} trade with the entry reason and the exit plan.",
            "Hedged the {ticker} exposure with {ticker} puts before the Fed meeting on {weekday}.",
            "Rule: close all {ticker} day trades before {hour}:00 and never hold leveraged ETFs overnight.",
        ),
        "zh": (
            "交易教训：{ticker_zh}亏损时不要补仓，{month_zh}那次亏了{pct}。",
            "{ticker_zh}跌破均线就止损，不要心存侥幸。",
            "单笔交易的风险不要超过总资金的{pct}。",
            "开盘后前{num}分钟不要追涨{ticker_zh}。",
            "在{price}卖出了{ticker_zh}，严格执行了止盈计划。",
            "复盘：连续{x}次追高都亏钱，以后等回调再买。",
        ),
        "mixed": (
            "交易规则：{ticker} 的 stop loss 设在 {pct}，不要随便移动。",
            "在 {price} 卖掉了 {ticker}，按计划 scale out。",
            "{ticker} 财报周 IV 太高，卖 options premium 效果更好。",
        ),
    },
    "personal": {
        "type": "episode",
        "tags": ("personal", "family", "travel", "health"),
        "en": (
            "{person} visited {place} in {month} {year} and loved the food markets.",
            "The user's {relation} {person} has a birthday on {month} {day}.",
            "User adopted a {pet} named {person} in {month}.",
            "User started {hobby} in {year} and practices every {weekday}.",
            "User is training for a half marathon in {place} in {month}; current long run is {num} km.",
            "{person} moved to {place} for a new job at the start of {month}.",
            "The user's {relation} is allergic to shellfish; remember this when suggesting restaurants.",
            "Family trip to {place} planned for {month} {year}; flights booked, hotel still open.",
            "User had knee surgery in {month} and should avoid running for {num} weeks.",
            "User's kids go to swimming lessons every {weekday} at {hour}:00.",
        ),
        "zh": (
            "用户{month_zh}去了{place_zh}旅行，很喜欢那里的{food_zh}。",
            "用户的{relation_zh}生日是{mon}月{day}号。",
            "用户从{year}年开始{hobby_zh}，每{weekday_zh}都会练习。",
            "用户最近搬家到了{place_zh}，通勤大约{num}分钟。",
            "用户的{relation_zh}下个月要来{place_zh}看他。",
            "用户{year}年{mon}月做了体检，医生建议少吃{food_zh}。",
        ),
        "mixed": (
            "用户 {month} 要去 {place} 出差，hotel 还没订。",
            "{person} 的生日是 {mon}月{day}号，记得提前买礼物。",
            "用户每{weekday_zh}去 {hobby} 训练，大约 {num} 公里。",
        ),
    },
}

SLOTS["month_zh"] = tuple(f"{i}月" for i in range(1, 13))

EXTRA: dict[str, tuple[str, ...]] = {
    "en": (
        "This came up again during the {weekday} standup.",
        "{person} confirmed it in the team channel.",
        "Worth remembering before the next {project} release.",
        "It cost us about {num} hours last time.",
        "See ticket {ticket} for the full discussion and the numbers behind it.",
        "The user repeated this twice, so treat it as a firm rule.",
        "Double-check with {person} if anything changes after {month}.",
        "It applies to every environment, including staging and local development setups.",
        "Noted after a long conversation about priorities for the rest of the quarter.",
        "The same thing happened with {service} back in {month}, with a very similar outcome.",
        "There is a short write-up in the wiki under the {project} section.",
        "Keep it in mind when planning anything on a {weekday}.",
    ),
    "zh": (
        "这是{person_zh}在周会上提到的。",
        "下次{project}发布前要再确认一遍。",
        "上次因为这个浪费了大约{num}个小时。",
        "用户强调了两次，要当作硬性规定。",
        "详细讨论记录在工单{ticket}里。",
        "如果{month_zh}以后有变化，需要和{person_zh}再确认。",
        "测试环境和生产环境都适用。",
        "这个结论是跟用户聊了很久之后得出的。",
    ),
}

QUERIES: dict[str, tuple[str, ...]] = {
    "en": (
        "what editor does the user prefer",
        "which database does {project} use",
        "who owns {project}",
        "why did we migrate {project} away from {tech}",
        "what caused {err}",
        "incident {ticket}",
        "lessons from trading {ticker}",
        "position sizing rule for {ticker}",
        "when is {person}'s birthday",
        "trip to {place}",
        "how long does the {project} CI take",
        "what port does {project} listen on",
        "{service} service outage root cause",
        "user food preferences and allergies",
        "what did we decide about {service} retries",
        "stop loss rule",
        "does the user like {food}",
        "{project} release window",
        "what happened in {month}",
        "user's hobbies",
    ),
    "zh": (
        "用户喜欢吃什么",
        "{project}用的什么数据库",
        "{project}的负责人是谁",
        "{err}是什么原因",
        "{ticker_zh}的交易教训",
        "用户的{relation_zh}生日是哪天",
        "用户去{place_zh}旅行的事情",
        "{service}服务的故障原因",
        "我们为什么决定迁移{project}",
        "止损规则是什么",
        "用户周末一般做什么",
        "{project}什么时候发布",
    ),
    "mixed": (
        "{project} 的 staging 端口",
        "{ticker} 的 stop loss 怎么设",
        "{service} retries 上限",
        "用户用什么 editor",
        "{err} 怎么处理",
    ),
}

TRIGGERS: dict[str, tuple[str, ...]] = {
    "en": (
        "Starting a coding session on {project}",
        "Daily trading review before the market opens",
        "User asked to plan a trip to {place}",
        "Resume work on the {project} migration",
        "On-call handover: check recent incidents",
        "New conversation with the user",
        "Weekly planning for {project}",
        "User wants help debugging {err} in {service}",
    ),
    "zh": (
        "开始新的一天，先回顾一下昨天的工作",
        "用户要继续{project}项目的开发",
        "盘前复盘：今天关注{ticker_zh}",
        "用户想安排去{place_zh}的行程",
        "新的对话开始了",
        "值班交接，看看最近的事故",
    ),
    "mixed": ("继续 {project} 的 {service} 开发", "今天 trading plan，关注 {ticker}"),
}

FOCI: tuple[str | None, ...] = (
    None,
    None,
    None,
    "database choice",
    "user preferences",
    "risk rules",
    "recent incidents",
    "用户偏好",
    "交易纪律",
    "deployment",
    "family events",
)


def render(template: str, rng: random.Random) -> str:
    """Fill every ``{slot}`` of ``template``; each occurrence draws anew ("{lang} over {lang}")."""
    out = []
    for literal, name, _, _ in string.Formatter().parse(template):
        out.append(literal)
        if name:
            out.append(NUMERIC_SLOTS[name](rng) if name in NUMERIC_SLOTS else rng.choice(SLOTS[name]))
    return "".join(out)


@dataclass(frozen=True)
class Family:
    """One template: memories of a family share their pool vectors (a real paraphrase cluster)."""

    topic: str
    lang: str
    template: str
    type: str
    tags: tuple[str, ...]


def families() -> list[Family]:
    out = []
    for topic, spec in TOPICS.items():
        for lang in ("en", "zh", "mixed"):
            for template in spec[lang]:
                out.append(Family(topic, lang, template, spec["type"], spec["tags"]))
    return out


LANG_WEIGHTS = {"en": 0.60, "zh": 0.30, "mixed": 0.10}
EXTRA_WEIGHTS = (0.38, 0.27, 0.17, 0.1, 0.05, 0.03)  # 0..5 extra sentences


_CJK = re.compile(r"[\u4e00-\u9fff]")
_NON_CJK_WORD = re.compile(r"[^\W\u4e00-\u9fff]+")


def _word_count(text: str) -> int:
    """Words of a text: non-CJK words, plus one word per two Chinese characters."""
    return len(_NON_CJK_WORD.findall(text)) + (len(_CJK.findall(text)) + 1) // 2


class TextGenerator:
    """Distinct, realistic memory texts (5-80 words; ~60% English, ~30% Chinese, ~10% mixed)."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.families = families()
        self.by_lang = {
            lang: [i for i, f in enumerate(self.families) if f.lang == lang] for lang in LANG_WEIGHTS
        }
        self.seen: set[str] = set()

    def family(self) -> int:
        lang = self.rng.choices(list(LANG_WEIGHTS), weights=list(LANG_WEIGHTS.values()))[0]
        return self.rng.choice(self.by_lang[lang])

    def text(self, family: int) -> str:
        """A new text of ``family``, distinct from every text this generator produced."""
        fam = self.families[family]
        for attempt in range(8):
            parts = [render(fam.template, self.rng)]
            n_extra = self.rng.choices(range(len(EXTRA_WEIGHTS)), weights=EXTRA_WEIGHTS)[0]
            extra_lang = (
                "zh" if fam.lang == "zh" or (fam.lang == "mixed" and self.rng.random() < 0.6) else "en"
            )
            sep = "" if extra_lang == "zh" else " "
            for _ in range(n_extra):
                candidate = render(self.rng.choice(EXTRA[extra_lang]), self.rng)
                if _word_count(sep.join([*parts, candidate])) > 76:
                    break
                parts.append(candidate)
            text = sep.join(parts)
            if attempt >= 4:  # slot space exhausted for this family: add a distinguishing detail
                text += f" (#{self.rng.randint(1000, 999_999)})"
            if text not in self.seen:
                self.seen.add(text)
                return text
        raise RuntimeError("could not generate a distinct text")


# --------------------------------------------------------------------------------------------------
# Pool embedding and corpus loading
# --------------------------------------------------------------------------------------------------


@dataclass
class Pool:
    family: np.ndarray[Any, Any]  # (P,) family index of each pool text
    vectors: np.ndarray[Any, Any]  # (P, d) real embeddings
    by_family: dict[int, np.ndarray[Any, Any]]  # family -> pool row indices
    embed_seconds: float
    cached: bool


def build_pool(
    embedder: Embedder, gen: TextGenerator, size: int, cache_dir: Path | None, *, log: Callable[[str], None]
) -> Pool:
    n_fam = len(gen.families)
    fams = [i % n_fam for i in range(size)]  # every family gets pool texts
    texts = [gen.text(f) for f in fams]
    key = hashlib.sha256(("\x00".join([embedder.model_id, *texts])).encode()).hexdigest()[:16]
    path = cache_dir / f"pool-{embedder.model_id}-{key}.npy" if cache_dir else None
    t0 = time.perf_counter()
    if path is not None and path.exists():
        vectors = np.load(path)
        cached = True
        log(f"  pool: {size} texts loaded from cache {path}")
    else:
        chunks = []
        for i in range(0, size, 32):
            chunks.append(np.asarray(embedder.embed_documents(texts[i : i + 32]), dtype=np.float32))
            if i and i % 320 == 0:
                log(f"  pool: embedded {i}/{size} ({i / (time.perf_counter() - t0):.0f} texts/s)")
        vectors = np.concatenate(chunks) if chunks else np.zeros((0, embedder.dimension), np.float32)
        cached = False
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            np.save(path, vectors)
    seconds = time.perf_counter() - t0
    family = np.asarray(fams, dtype=np.int64)
    # every family has pool texts when size >= families; a tiny pool (tests) lends rows round robin
    by_family = {f: np.flatnonzero(family == f) for f in range(n_fam)}
    by_family = {f: rows if len(rows) else np.asarray([f % max(size, 1)]) for f, rows in by_family.items()}
    return Pool(family, vectors, by_family, seconds, cached)


@dataclass
class CorpusStats:
    size: int = 0
    languages: Counter[str] = field(default_factory=Counter)
    types: Counter[str] = field(default_factory=Counter)
    topics: Counter[str] = field(default_factory=Counter)
    words: list[int] = field(default_factory=list)
    tagged: int = 0
    pinned: int = 0
    last_24h: int = 0
    insert_seconds: float = 0.0
    generate_seconds: float = 0.0

    def summary(self) -> dict[str, Any]:
        w = np.asarray(self.words or [0])
        return {
            "size": self.size,
            "languages": dict(self.languages),
            "types": dict(self.types),
            "topics": dict(self.topics),
            "words": {
                "min": int(w.min()),
                "p50": float(np.median(w)),
                "p95": float(np.percentile(w, 95)),
                "max": int(w.max()),
            },
            "tagged": self.tagged,
            "pinned": self.pinned,
            "created_last_24h": self.last_24h,
            "generate_seconds": round(self.generate_seconds, 2),
            "insert_seconds": round(self.insert_seconds, 2),
            "insert_per_s": round(self.size / self.insert_seconds, 1) if self.insert_seconds else None,
        }


def noisy(vector: np.ndarray[Any, Any], rng: np.random.Generator, sigma: float) -> np.ndarray[Any, Any]:
    out = vector + rng.normal(0.0, sigma, vector.shape).astype(np.float32)
    norm = float(np.linalg.norm(out))
    return out / (norm if norm > 0 else 1.0)


def load_corpus(
    svc: Services,
    scope: Scope,
    size: int,
    pool: Pool,
    gen: TextGenerator,
    *,
    seed: int,
    sigma: float = 0.02,
    chunk: int = 2000,
    pinned: int = 10,
    now: datetime | None = None,
    log: Callable[[str], None] = print,
) -> CorpusStats:
    """Insert ``size`` synthetic memories into ``scope`` with ``repository.create_many``."""
    rng = random.Random(seed)
    nrng = np.random.default_rng(seed)
    ids = UlidFactory()
    now = now or datetime.now(UTC)
    model_id = svc.embedder.model_id
    pin_at = set(rng.sample(range(size), min(pinned, size)))
    stats = CorpusStats(size=size)
    year = timedelta(days=365).total_seconds()
    for start in range(0, size, chunk):
        t0 = time.perf_counter()
        batch: list[Memory] = []
        for i in range(start, min(size, start + chunk)):
            fam_idx = gen.family()
            fam = gen.families[fam_idx]
            text = gen.text(fam_idx)
            rows = pool.by_family[fam_idx]
            base = pool.vectors[rows[rng.randrange(len(rows))]]
            vec = noisy(base, nrng, sigma)
            created = now - timedelta(seconds=rng.uniform(60, year))
            tags = rng.sample(fam.tags, rng.choice((0, 0, 1, 1, 2, 3)))
            stats.languages[fam.lang] += 1
            stats.types[fam.type] += 1
            stats.topics[fam.topic] += 1
            stats.words.append(_word_count(text))
            stats.tagged += bool(tags)
            stats.pinned += i in pin_at
            stats.last_24h += (now - created) <= timedelta(hours=24)
            batch.append(
                Memory(
                    id=ids.new_id(created),
                    tenant_id=scope.tenant_id,
                    agent_id=scope.agent_id,
                    user_id=scope.user_id,
                    type=fam.type,
                    content=text,
                    tags=tags,
                    importance=round(rng.uniform(0.2, 0.9), 2),
                    pinned=i in pin_at,
                    source=Source(kind=SourceKind.IMPORT),
                    created_at=created,
                    updated_at=created,
                    content_hash=content_hash(fam.type, text),
                    embedding=vec.tolist(),
                    embedding_model=model_id,
                    embedding_status=EmbeddingStatus.READY,
                )
            )
        t1 = time.perf_counter()
        svc.repository.create_many(batch)  # type: ignore[attr-defined]
        t2 = time.perf_counter()
        stats.generate_seconds += t1 - t0
        stats.insert_seconds += t2 - t1
        done = min(size, start + chunk)
        if done % 20_000 == 0 or done == size:
            log(
                f"  corpus: {done}/{size} inserted "
                f"({done / (stats.generate_seconds + stats.insert_seconds):.0f}/s)"
            )
    return stats


# --------------------------------------------------------------------------------------------------
# Measurement
# --------------------------------------------------------------------------------------------------


def stats_ms(samples: Sequence[float]) -> dict[str, float]:
    """p50/p95/p99/mean/min/max of samples given in seconds, in milliseconds."""
    if not samples:
        return {"p50": math.nan, "p95": math.nan, "p99": math.nan, "mean": math.nan, "n": 0}
    a = np.asarray(samples, dtype=np.float64) * 1000.0
    return {
        "p50": round(float(np.percentile(a, 50)), 3),
        "p95": round(float(np.percentile(a, 95)), 3),
        "p99": round(float(np.percentile(a, 99)), 3),
        "mean": round(float(a.mean()), 3),
        "min": round(float(a.min()), 3),
        "max": round(float(a.max()), 3),
        "n": len(a),
    }


def rss_mb() -> float:
    """Current resident set size (VmRSS), falling back to the peak where /proc is absent."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    return peak_rss_mb()


def peak_rss_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


@dataclass
class Params:
    pool_size: int = 1500
    sigma: float = 0.02
    chunk: int = 2000
    pinned: int = 10
    warmup: int = 10
    save_n: int = 200
    batch_size: int = 100
    batches: int = 5
    recall_unique: int = 130
    recall_repeats: int = 70
    snapshot_n: int = 100
    snapshot_distinct: int = 40
    profile_n: int = 20
    embed_threads: int = 1
    seed: int = 20261122


def _save_commands(gen: TextGenerator, n: int, rng: random.Random) -> list[SaveCommand]:
    out = []
    for _ in range(n):
        f = gen.family()
        fam = gen.families[f]
        out.append(
            SaveCommand(
                type=fam.type,
                content=gen.text(f),
                tags=rng.sample(fam.tags, rng.choice((0, 1, 2))),
                importance=round(rng.uniform(0.3, 0.9), 2),
            )
        )
    return out


def _distinct(templates: dict[str, tuple[str, ...]], n: int, rng: random.Random) -> list[str]:
    langs = list(LANG_WEIGHTS)
    weights = [0.55, 0.35, 0.10]
    out: list[str] = []
    seen: set[str] = set()
    tries = 0
    while len(out) < n:
        tries += 1
        lang = rng.choices(langs, weights=weights)[0]
        text = render(rng.choice(templates[lang]), rng)
        if tries > 50 * n:  # template space exhausted: vary with a number
            text = f"{text} {rng.randint(1, 10_000)}"
        if text not in seen:
            seen.add(text)
            out.append(text)
    return out


def _timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    t0 = time.perf_counter()
    value = fn()
    return time.perf_counter() - t0, value


def _profile(fn: Callable[[], Any], path: Path, title: str) -> None:
    prof = cProfile.Profile()
    prof.enable()
    fn()
    prof.disable()
    buf = io.StringIO()
    buf.write(f"# {title}\n")
    for key in ("cumulative", "tottime"):
        buf.write(f"\n## sorted by {key}\n")
        pstats.Stats(prof, stream=buf).strip_dirs().sort_stats(key).print_stats(30)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(buf.getvalue())


class TimedEmbedder:
    """Wraps the model and adds up the time spent in it, so a call's embedding time can be split off."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.seconds = 0.0

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    def embed_documents(self, texts: Sequence[str]) -> Any:
        t0 = time.perf_counter()
        try:
            return self.inner.embed_documents(texts)
        finally:
            self.seconds += time.perf_counter() - t0

    def embed_query(self, text: str) -> Any:
        t0 = time.perf_counter()
        try:
            return self.inner.embed_query(text)
        finally:
            self.seconds += time.perf_counter() - t0


def run_one(
    model: str,
    size: int,
    inner: Embedder,
    pool: Pool,
    params: Params,
    *,
    workdir: Path,
    profile_dir: Path | None = None,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Build a corpus of ``size`` memories in one scope and measure every operation once."""
    from memvault.adapters.embedders.cache import CachedEmbedder

    settings = Settings(embedder=model, data_dir=workdir, embed_threads=params.embed_threads)  # type: ignore[arg-type]
    timed = TimedEmbedder(inner)
    cached = CachedEmbedder(timed, size=settings.recall.query_cache_size)
    svc = build_services(settings, embedder=cached)
    scope = SCOPE
    seed = params.seed + size
    gen = TextGenerator(seed)
    rng = random.Random(seed + 1)
    result: dict[str, Any] = {"model": model, "model_id": inner.model_id, "size": size}
    result["loadavg_start"] = round(os.getloadavg()[0], 2)

    def split(fn: Callable[[], Any]) -> tuple[float, float, Any]:
        """(total seconds, seconds spent in the model, value) of one call."""
        e0 = timed.seconds
        dt, value = _timed(fn)
        return dt, timed.seconds - e0, value

    t_start = time.perf_counter()

    log(f"[{model} {size}] building corpus")
    corpus = load_corpus(
        svc,
        scope,
        size,
        pool,
        gen,
        seed=seed,
        sigma=params.sigma,
        chunk=params.chunk,
        pinned=params.pinned,
        log=log,
    )
    result["corpus"] = corpus.summary()

    # First vector search loads the scope's matrix from SQLite (a cold-start cost, reported apart).
    index = svc.index
    filters = Filters(as_of=datetime.now(UTC))
    probe = np.asarray(pool.vectors[0], dtype=np.float32)
    result["index_load_ms"] = round(
        _timed(lambda: index.search_vector(scope, probe, limit=50, filters=filters))[0] * 1000, 1
    )

    # 1. save, one at a time
    log(f"[{model} {size}] save x{params.save_n}")
    cmds = _save_commands(gen, params.warmup + params.save_n, rng)
    for c in cmds[: params.warmup]:
        svc.memories.save(scope, c)
    save_times: list[float] = []
    save_embed: list[float] = []
    actions: Counter[str] = Counter()
    for c in cmds[params.warmup :]:
        dt, emb, res = split(lambda c=c: svc.memories.save(scope, c))
        save_times.append(dt)
        save_embed.append(emb)
        actions[res.action] += 1
    result["save_ms"] = stats_ms(save_times)
    result["save_embed_ms"] = stats_ms(save_embed)
    result["save_rest_ms"] = stats_ms([t - e for t, e in zip(save_times, save_embed, strict=True)])
    result["save_actions"] = dict(actions)

    # 2. batch ingest
    log(f"[{model} {size}] save_batch {params.batches}x{params.batch_size}")
    svc.memories.save_batch(scope, _save_commands(gen, min(10, params.batch_size), rng))  # warm-up
    batch_times, batch_embed = [], []
    for _ in range(params.batches):
        batch = _save_commands(gen, params.batch_size, rng)
        dt, emb, _ = split(lambda b=batch: svc.memories.save_batch(scope, b))
        batch_times.append(dt)
        batch_embed.append(emb)
    total = sum(batch_times)
    result["batch_per_s"] = round(params.batches * params.batch_size / total, 2) if total > 0 else math.nan
    result["batch_ms"] = stats_ms(batch_times)
    result["batch_embed_ms"] = stats_ms(batch_embed)
    result["batch_embed_share"] = round(sum(batch_embed) / total, 3) if total > 0 else math.nan

    # 3. recall: a stream of queries, some repeated (LRU hits), cold and warm reported apart
    log(f"[{model} {size}] recall x{params.recall_unique + params.recall_repeats}")
    queries = _distinct(QUERIES, params.warmup + params.recall_unique + params.profile_n, rng)
    warm_q, unique_q, prof_q = (
        queries[: params.warmup],
        queries[params.warmup : params.warmup + params.recall_unique],
        queries[params.warmup + params.recall_unique :],
    )
    stream = unique_q + [rng.choice(unique_q) for _ in range(params.recall_repeats)]
    rng.shuffle(stream)
    for q in warm_q:
        svc.recall.recall(scope, RecallQuery(query=q))
    h0, m0 = cached.hits, cached.misses
    all_t, cold_t, warm_t, cold_rest = [], [], [], []
    hit_counts = []
    for q in stream:
        before = cached.misses
        dt, emb, res = split(lambda q=q: svc.recall.recall(scope, RecallQuery(query=q)))
        all_t.append(dt)
        if cached.misses > before:
            cold_t.append(dt)
            cold_rest.append(dt - emb)
        else:
            warm_t.append(dt)
        hit_counts.append(len(res.hits))
    hits, misses = cached.hits - h0, cached.misses - m0
    result["recall_ms"] = stats_ms(all_t)
    result["recall_cold_ms"] = stats_ms(cold_t)
    result["recall_cold_rest_ms"] = stats_ms(cold_rest)
    result["recall_warm_ms"] = stats_ms(warm_t)
    result["recall_mean_hits"] = round(float(np.mean(hit_counts)), 2) if hit_counts else 0.0
    result["cache_hit_rate"] = round(hits / (hits + misses), 4) if hits + misses else 0.0

    # pieces of a cold recall, timed on their own on the same unique queries
    rs = settings.recall
    depth = max(rs.candidate_floor, rs.candidate_per_k * 5)
    parts: dict[str, list[float]] = {
        k: [] for k in ("query_embed", "keyword_search", "vector_search", "fetch", "touch")
    }
    for q in unique_q:
        f = Filters(as_of=datetime.now(UTC))
        dt, qvec = _timed(lambda q=q: inner.embed_query(q))
        parts["query_embed"].append(dt)
        terms = analyze(q) or analyze(q, drop_stopwords=False)
        dt, kw = _timed(lambda t=terms, f=f: index.search_keyword(scope, t, limit=depth, filters=f))
        parts["keyword_search"].append(dt)
        dt, vh = _timed(lambda v=qvec, f=f: index.search_vector(scope, v, limit=depth, filters=f))
        parts["vector_search"].append(dt)
        ids = list(dict.fromkeys([c.id for c in kw] + [c.id for c in vh]))
        parts["fetch"].append(_timed(lambda i=ids: svc.repository.get_many(scope, i))[0])
        parts["touch"].append(_timed(lambda i=ids: svc.repository.touch(scope, i[:5], datetime.now(UTC)))[0])
    result["query_embed_ms"] = stats_ms(parts["query_embed"])
    result["recall_parts_ms"] = {k: stats_ms(v) for k, v in parts.items()}

    # 4. snapshot
    log(f"[{model} {size}] snapshot x{params.snapshot_n}")
    triggers = _distinct(TRIGGERS, params.warmup + params.snapshot_distinct + params.profile_n, rng)
    warm_tr = triggers[: params.warmup]
    main_tr = triggers[params.warmup : params.warmup + params.snapshot_distinct]
    prof_tr = triggers[params.warmup + params.snapshot_distinct :]
    for t in warm_tr:
        svc.snapshot.snapshot(scope, SnapshotRequest(trigger=t))
    requests = [
        SnapshotRequest(trigger=rng.choice(main_tr), focus=rng.choice(FOCI)) for _ in range(params.snapshot_n)
    ]
    h0, m0 = cached.hits, cached.misses
    snap_t, snap_rest, items = [], [], []
    for req in requests:
        dt, emb, snap = split(lambda r=req: svc.snapshot.snapshot(scope, r))
        snap_t.append(dt)
        snap_rest.append(dt - emb)
        items.append(len(snap.items))
    hits, misses = cached.hits - h0, cached.misses - m0
    result["snapshot_ms"] = stats_ms(snap_t)
    result["snapshot_rest_ms"] = stats_ms(snap_rest)
    result["snapshot_mean_items"] = round(float(np.mean(items)), 2) if items else 0.0
    result["snapshot_cache_hit_rate"] = round(hits / (hits + misses), 4) if hits + misses else 0.0

    result["loadavg_end"] = round(os.getloadavg()[0], 2)
    result["rss_mb"] = rss_mb()
    result["rss_peak_mb"] = peak_rss_mb()
    result["db_mb"] = round(settings.database_path.stat().st_size / 2**20, 1)

    if profile_dir is not None:
        log(f"[{model} {size}] profiling cold recalls, snapshots, saves, a batch")
        base = profile_dir / f"{model}_{size}"
        _profile(
            lambda: [svc.recall.recall(scope, RecallQuery(query=q)) for q in prof_q],
            Path(f"{base}_recall.txt"),
            f"{len(prof_q)} cold recalls, {model}, {size}",
        )
        _profile(
            lambda: [svc.snapshot.snapshot(scope, SnapshotRequest(trigger=t)) for t in prof_tr],
            Path(f"{base}_snapshot.txt"),
            f"{len(prof_tr)} cold snapshots, {model}, {size}",
        )
        pcmds = _save_commands(gen, params.profile_n, rng)
        _profile(
            lambda: [svc.memories.save(scope, c) for c in pcmds],
            Path(f"{base}_save.txt"),
            f"{len(pcmds)} saves, {model}, {size}",
        )
        bcmds = _save_commands(gen, params.batch_size, rng)
        _profile(
            lambda: svc.memories.save_batch(scope, bcmds),
            Path(f"{base}_batch.txt"),
            f"one save_batch of {len(bcmds)}, {model}, {size}",
        )

    result["wall_seconds"] = round(time.perf_counter() - t_start, 1)
    svc.repository.db.close()  # type: ignore[attr-defined]
    return result


# --------------------------------------------------------------------------------------------------
# Orchestration and reporting
# --------------------------------------------------------------------------------------------------


def machine_info() -> dict[str, Any]:
    return {
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "sqlite": sqlite3.sqlite_version,
        "platform": platform.platform(),
        "loadavg_start": [round(x, 2) for x in os.getloadavg()],
    }


def corpus_description(params: Params) -> dict[str, Any]:
    return {
        "synthetic": True,
        "how": (
            "N synthetic agent-memory texts (preferences, project facts, decisions, incidents, trading "
            "lessons, personal events) rendered from templates with random slot values; ~60% English, "
            "~30% Chinese, ~10% mixed; 5-80 words; created_at uniform over the last 365 days; 0-3 tags; "
            f"{params.pinned} pinned. Every text is distinct (FTS indexes N different documents). A pool of "
            f"{params.pool_size} distinct texts from the same templates is embedded for real with the model; "
            f"each memory gets the vector of a random pool text of its template plus gaussian noise "
            f"(sigma {params.sigma} per dimension) renormalized. Inserted with repository.create_many in "
            f"chunks of {params.chunk}. All memories of a size are in ONE scope."
        ),
        "pool_size": params.pool_size,
        "noise_sigma": params.sigma,
        "chunk": params.chunk,
        "pinned": params.pinned,
        "templates": len(families()),
        "seed": params.seed,
        "measured": {
            "save": f"{params.save_n} single saves of new distinct memories (real embedding, the time "
            "inside the model measured in the call and split off), after "
            f"{params.warmup} warm-up saves",
            "batch": f"{params.batches} save_batch calls of {params.batch_size} new memories "
            "(real embedding)",
            "recall": f"{params.recall_unique + params.recall_repeats} recalls (top_k 5, hybrid): "
            f"{params.recall_unique} distinct queries + {params.recall_repeats} repeats, shuffled; "
            "cold = query-embedding cache miss, warm = hit",
            "snapshot": f"{params.snapshot_n} snapshots over {params.snapshot_distinct} distinct "
            "triggers with "
            "varied focus",
            "recall_parts": "the pieces of a cold recall timed alone on the distinct queries: uncached query "
            "embedding, keyword search (analyze + FTS5), vector search (numpy), fetch "
            "(get_many of the union), touch (access tracking write)",
        },
    }


def run(
    models: Sequence[str],
    sizes: Sequence[int],
    out_dir: Path | None,
    params: Params | None = None,
    *,
    cache_dir: Path | None = None,
    profile_dir: Path | None = None,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    params = params or Params()
    report: dict[str, Any] = {
        "generated_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": machine_info(),
        "corpus": corpus_description(params),
        "params": asdict(params),
        "results": [],
        "targets": {},
        "pools": {},
    }
    for model in models:
        log(f"== model {model}")
        settings = Settings(embedder=model, embed_threads=params.embed_threads)  # type: ignore[arg-type]
        inner = build_embedder(settings).inner  # type: ignore[attr-defined]
        # warm the model (first calls are slow) before anything is timed
        for i in range(params.warmup):
            inner.embed_query(f"warm-up query {i}")
            inner.embed_documents([f"warm-up passage {i}"])
        pool = build_pool(inner, TextGenerator(params.seed), params.pool_size, cache_dir, log=log)
        report["pools"][model] = {
            "texts": params.pool_size,
            "embed_seconds": round(pool.embed_seconds, 1),
            "cached": pool.cached,
        }
        log(f"  pool ready in {pool.embed_seconds:.1f}s (cached={pool.cached})")
        for size in sizes:
            workdir = Path(tempfile.mkdtemp(prefix=f"memvault-bench-{model}-{size}-"))
            try:
                result = run_one(
                    model, size, inner, pool, params, workdir=workdir, profile_dir=profile_dir, log=log
                )
            finally:
                shutil.rmtree(workdir, ignore_errors=True)
            report["results"].append(result)
            log(format_result_line(result))
            gc.collect()
        del inner, pool
        gc.collect()
    report["machine"]["loadavg_end"] = [round(x, 2) for x in os.getloadavg()]
    report["targets"] = evaluate_targets(report["results"])
    if out_dir is not None:
        write_report(report, out_dir)
    return report


def evaluate_targets(results: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for t in TARGETS:
        checks = []
        for r in results:
            ok = t.check(r)
            if ok is not None:
                checks.append({"size": r["size"], "value": metric_value(r, t.metric), "pass": ok})
        out[f"{t.model}: {t.label}"] = {
            "model": t.model,
            "metric": t.metric,
            "op": t.op,
            "threshold": t.value,
            "min_size": t.min_size,
            "note": t.note,
            "checks": checks,
            "pass": all(c["pass"] for c in checks) if checks else None,
        }
    return out


def _verdict(result: dict[str, Any], metric: str) -> str:
    found = [t for t in TARGETS if t.model == result["model"] and t.metric == metric]
    marks = []
    for t in found:
        ok = t.check(result)
        if ok is not None:
            marks.append(f"{t.op} {t.value:g}: {'PASS' if ok else 'MISS'}")
    return "; ".join(marks) or "-"


def _f(x: Any, digits: int = 1) -> str:
    if x is None:
        return "-"
    if isinstance(x, float) and not math.isfinite(x):
        return "n/a"
    return f"{x:.{digits}f}" if isinstance(x, float) else str(x)


def format_result_line(r: dict[str, Any]) -> str:
    return (
        f"  -> {r['model']} {r['size']}: save p95 {_f(r['save_ms']['p95'])} ms, "
        f"batch {_f(r['batch_per_s'])}/s, "
        f"recall p95 {_f(r['recall_ms']['p95'])} ms (cold {_f(r['recall_cold_ms']['p95'])}), "
        f"snapshot p95 {_f(r['snapshot_ms']['p95'])} ms, rss {r['rss_mb']} MB, {r['wall_seconds']} s"
    )


def render_markdown(report: dict[str, Any]) -> str:
    m = report["machine"]
    lines = [
        "# Core latency benchmark (embedded SQLite backend, local models)",
        "",
        f"Generated {report['generated_at']} by `scripts/bench_core.py`. Machine: {m['cores']} cores, "
        f"Python {m['python']}, numpy {m['numpy']}, SQLite {m['sqlite']}; load average "
        f"{m['loadavg_start']} at start, {m.get('loadavg_end', '-')} at end (shared, noisy machine). "
        f"Embedding threads: {report['params']['embed_threads']}.",
        "",
        "**The corpus is synthetic** (vectors are not real embeddings of each text): "
        + report["corpus"]["how"],
        "",
        "Measured: " + "; ".join(f"{k}: {v}" for k, v in report["corpus"]["measured"].items()) + ".",
        "",
        "## Latency (ms)",
        "",
        "| model | size | operation | n | p50 | p95 | p99 | mean | target |",
        "|---|---:|---|---:|---:|---:|---:|---:|---|",
    ]
    rows = (
        ("save", "save_ms"),
        ("· model time inside save", "save_embed_ms"),
        ("· save minus model time", "save_rest_ms"),
        ("recall (query mix)", "recall_ms"),
        ("recall, cold queries", "recall_cold_ms"),
        ("· cold recall minus its query embedding", "recall_cold_rest_ms"),
        ("recall, repeated queries (LRU hit)", "recall_warm_ms"),
        ("embed query alone (uncached)", "query_embed_ms"),
        ("snapshot", "snapshot_ms"),
        ("· snapshot minus model time", "snapshot_rest_ms"),
        ("save_batch (100 items)", "batch_ms"),
        ("· model time inside save_batch", "batch_embed_ms"),
    )
    for r in report["results"]:
        for label, key in rows:
            s = r[key]
            lines.append(
                f"| {r['model']} | {r['size']:,} | {label} | {s['n']} | {_f(s['p50'])} | {_f(s['p95'])} | "
                f"{_f(s['p99'])} | {_f(s['mean'])} | {_verdict(r, key + '.p95')} |"
            )
    lines += [
        "",
        "## Throughput, memory, cache",
        "",
        "| model | size | batch ingest (memories/s) | target | RSS now (MB) | RSS peak (MB) | DB (MB) "
        "| recall LRU hit rate | snapshot LRU hit rate | model share of batch | index load (ms) "
        "| corpus insert (/s) | load avg (start, end) | run (s) |",
        "|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|",
    ]
    for r in report["results"]:
        lines.append(
            f"| {r['model']} | {r['size']:,} | {_f(r['batch_per_s'])} | {_verdict(r, 'batch_per_s')} | "
            f"{r['rss_mb']} | {r['rss_peak_mb']} | {r['db_mb']} | {r['cache_hit_rate']:.0%} | "
            f"{r['snapshot_cache_hit_rate']:.0%} | {r['batch_embed_share']:.0%} | {r['index_load_ms']} | "
            f"{_f(r['corpus']['insert_per_s'], 0)} | {r['loadavg_start']}, {r['loadavg_end']} | "
            f"{r['wall_seconds']} |"
        )
    lines += [
        "",
        "RSS now = VmRSS after the run of that row (process-wide: models and earlier runs included); "
        "RSS peak = getrusage maxrss so far in the process. Index load = the first vector search of the "
        "scope, which loads its vectors from SQLite into memory (cold start, not in the figures above). "
        "Model share = time inside the embedding model / save_batch time.",
        "",
        "## Where a cold recall's time goes (each piece timed alone, ms)",
        "",
        "| model | size | piece | p50 | p95 | mean |",
        "|---|---:|---|---:|---:|---:|",
    ]
    for r in report["results"]:
        for piece, s in r["recall_parts_ms"].items():
            lines.append(
                f"| {r['model']} | {r['size']:,} | {piece} | "
                f"{_f(s['p50'])} | {_f(s['p95'])} | {_f(s['mean'])} |"
            )
        s = r["recall_cold_ms"]
        lines.append(
            f"| {r['model']} | {r['size']:,} | **whole cold recall** | "
            f"{_f(s['p50'])} | {_f(s['p95'])} | {_f(s['mean'])} |"
        )
    lines += ["", "## Targets", "", "| target | note | result |", "|---|---|---|"]
    for name, t in report["targets"].items():
        checks = ", ".join(
            f"{c['size']:,}: {_f(c['value'])} {'PASS' if c['pass'] else 'MISS'}" for c in t["checks"]
        )
        verdict = "not measured" if t["pass"] is None else ("PASS" if t["pass"] else "MISS")
        lines.append(f"| {name} | {t['note'] or '-'} | **{verdict}** {checks} |")
    lines += ["", "## Pools and save outcomes", ""]
    for model, p in report["pools"].items():
        lines.append(
            f"- {model}: {p['texts']} pool texts embedded in {p['embed_seconds']} s (cached: {p['cached']})"
        )
    for r in report["results"]:
        lines.append(
            f"- {r['model']} {r['size']:,}: save actions {r['save_actions']}; recall mean hits "
            f"{r['recall_mean_hits']}; snapshot mean items {r['snapshot_mean_items']}; corpus languages "
            f"{r['corpus']['languages']}, words {r['corpus']['words']}"
        )
    return "\n".join(lines) + "\n"


def _jsonable(x: Any) -> Any:
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {k: _jsonable(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_jsonable(v) for v in x]
    return x


def write_report(report: dict[str, Any], out_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    md = render_markdown(report)
    (out_dir / "core_latency.md").write_text(md)
    (out_dir / "core_latency.json").write_text(
        json.dumps(_jsonable(report), indent=2, ensure_ascii=False) + "\n"
    )
    print(md)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--models", nargs="+", choices=MODELS, default=["e5", "use"])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument(
        "--cache-dir",
        type=Path,
        default=Path(tempfile.gettempdir()) / "memvault-bench-cache",
        help="where embedded pools are cached between runs",
    )
    parser.add_argument("--no-cache", action="store_true", help="embed the pool even if it is cached")
    parser.add_argument(
        "--embed-threads", type=int, default=1, help="Settings.embed_threads for the models (default 1)"
    )
    parser.add_argument(
        "--profile-dir",
        type=Path,
        default=None,
        help="also write cProfile reports of a few cold recalls, snapshots and saves here",
    )
    args = parser.parse_args(argv)

    def log(msg: str) -> None:
        print(f"{time.strftime('%H:%M:%S')} {msg}", flush=True)

    run(
        args.models,
        args.sizes,
        args.out,
        Params(embed_threads=args.embed_threads),
        cache_dir=None if args.no_cache else args.cache_dir,
        profile_dir=args.profile_dir,
        log=log,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
