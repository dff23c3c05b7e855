"""The one text analyzer shared by every keyword index (Chinese and English alike).

Every piece of text that goes into, or is searched against, a keyword index (SQLite FTS5 locally,
OpenSearch on AWS) goes through :func:`analyze` first, so the two backends see the same tokens.
The OpenSearch mapping mirrors these rules with its ``cjk`` analyzer (width folding, lowercasing,
CJK bigrams, English stopwords).

Tokenization rules (applied to ``normalize(text)``):

* **Normalization** -- Unicode NFKC (full-width -> half-width, half-width katakana -> full-width,
  ligatures split) then case folding, so ``"ＥＲＲ"``, ``"Err"`` and ``"err"`` are one word.
* **Words** -- a *word* is a maximal run of letters, digits, combining marks and underscores from
  any non-CJK script (Latin, Cyrillic, Greek, ...). Identifiers stay whole: ``ERR_4711`` ->
  ``err_4711``, ``abc123`` -> ``abc123``, ``2023`` -> ``2023``. Underscores never split a word.
* **Compounds** -- words glued by a single joiner form a *compound*. Joiners are ``.``, ``-``
  (also U+2010/U+2011), and apostrophes (``'`` and ``’``) between two word characters, plus
  ``,`` and ``:`` between two digits. A compound is emitted whole, followed by its parts:
  ``v2.3.1`` -> ``v2.3.1, v2, 3, 1``; ``ticket-123`` -> ``ticket-123, ticket, 123``;
  ``sk-abc`` -> ``sk-abc, sk, abc``; ``example.com`` -> ``example.com, example, com``;
  ``10:30`` -> ``10:30, 10, 30``; ``alice's`` -> ``alice's, alice`` (``s`` is a stopword).
  Curly apostrophes and Unicode hyphens are written as ``'`` and ``-`` in the whole token. So a
  query for the whole id matches exactly, and a query for one part still matches.
* **CJK** -- a maximal run of Han, Hiragana, Katakana or Hangul characters becomes overlapping
  character bigrams (``用户喜欢小狗`` -> ``用户, 户喜, 喜欢, 欢小, 小狗``); a run of a single character
  is kept as a unigram (``狗`` -> ``狗``). Anything else (digits, Latin letters, punctuation,
  spaces) ends a CJK run, so ``2023年5月`` -> ``2023, 年, 5, 月``.
* **Everything else** (spaces, punctuation, symbols, emoji) separates tokens and is dropped.
* Tokens with no letter or digit (e.g. a lone ``___``) are dropped; a word longer than
  :data:`MAX_TOKEN_CHARS` is cut into chunks of that length (as Lucene does), and a compound
  longer than that is emitted as its parts only.
* With ``drop_stopwords=True`` every token in :data:`STOPWORDS` is dropped (parts included).

Pure functions only: no I/O, no third-party dependencies.
"""

from __future__ import annotations

import unicodedata
from bisect import bisect_right
from datetime import datetime

__all__ = [
    "MAX_TOKEN_CHARS",
    "STOPWORDS",
    "analyze",
    "date_words",
    "is_cjk",
    "normalize",
]

MAX_TOKEN_CHARS = 255
"""Longest token emitted (Lucene's ``max_token_length`` default)."""

STOPWORDS: frozenset[str] = frozenset(
    {
        # articles, conjunctions, prepositions
        "a", "an", "the", "and", "or", "but", "if", "then", "so", "as", "of", "to", "in", "on",
        "at", "by", "for", "with", "from",
        # auxiliaries
        "is", "are", "was", "were", "be", "do", "does", "did", "have", "has", "had", "will", "would",
        # pronouns and determiners
        "i", "me", "my", "you", "your", "he", "him", "his", "she", "her", "it", "its", "we", "our",
        "they", "them", "their", "this", "that", "there",
        # question words
        "what", "when", "where", "who", "which", "how", "why",
        # tails of contractions split off at the apostrophe (it's, don't, I'm, we'll, they're, ...)
        "s", "t", "m", "d", "ll", "re", "ve",
    }
)  # fmt: skip
"""Short English stopword list. Deliberately excludes ``may`` (a month), ``us`` (the country),
``not``/``no`` (negation matters for memories) and ``am`` (as in ``9 am``)."""

# (first, last) code points of the scripts that are bigrammed: Han, Hiragana, Katakana, Hangul.
_CJK_RANGES: tuple[tuple[int, int], ...] = (
    (0x1100, 0x11FF),  # Hangul Jamo
    (0x3005, 0x3007),  # 々 〆 〇
    (0x3021, 0x3029),  # Hangzhou numerals
    (0x3031, 0x3035),  # vertical kana repeat marks
    (0x3038, 0x303C),  # 〸〹〺〻〼
    (0x3041, 0x3096),  # Hiragana
    (0x3099, 0x309F),  # kana voicing marks, iteration marks, ゟ
    (0x30A1, 0x30FA),  # Katakana (without the ・ middle dot, U+30FB, which is punctuation)
    (0x30FC, 0x30FF),  # ー ヽ ヾ ヿ
    (0x3131, 0x318E),  # Hangul Compatibility Jamo
    (0x31F0, 0x31FF),  # Katakana Phonetic Extensions
    (0x3400, 0x4DBF),  # CJK Unified Ideographs Extension A
    (0x4E00, 0x9FFF),  # CJK Unified Ideographs
    (0xA960, 0xA97F),  # Hangul Jamo Extended-A
    (0xAC00, 0xD7AF),  # Hangul Syllables
    (0xD7B0, 0xD7FF),  # Hangul Jamo Extended-B
    (0xF900, 0xFAFF),  # CJK Compatibility Ideographs
    (0xFF66, 0xFF9F),  # Halfwidth Katakana
    (0xFFA0, 0xFFDC),  # Halfwidth Hangul
    (0x1AFF0, 0x1AFFF),  # Kana Extended-B
    (0x1B000, 0x1B16F),  # Kana Supplement / Extended-A / Small Kana Extension
    (0x20000, 0x2FA1F),  # CJK Unified Ideographs Extensions B-F, Compatibility Supplement
    (0x30000, 0x323AF),  # CJK Unified Ideographs Extensions G-H
)

_CJK_STARTS = tuple(lo for lo, _ in _CJK_RANGES)
_CJK_ENDS = tuple(hi for _, hi in _CJK_RANGES)

_WORD_JOINERS = frozenset(".-'’\u2010\u2011")  # between any two word characters
_DIGIT_JOINERS = frozenset(",:")  # only between two digits
_CANONICAL_JOINER = {"’": "'", "\u2010": "-", "\u2011": "-"}

_MONTHS = (
    "january", "february", "march", "april", "may", "june",
    "july", "august", "september", "october", "november", "december",
)  # fmt: skip
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_ZH_MONTHS = ("一", "二", "三", "四", "五", "六", "七", "八", "九", "十", "十一", "十二")
_ZH_WEEKDAYS = ("一", "二", "三", "四", "五", "六", "日")


def normalize(text: str) -> str:
    """Fold ``text`` for matching: Unicode NFKC (full-width -> half-width) and case folding.

    NFKC is applied again after case folding so the result is stable (``normalize`` is idempotent).
    """
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())


def is_cjk(ch: str) -> bool:
    """True if the single character ``ch`` is Han, Hiragana, Katakana or Hangul (not punctuation)."""
    cp = ord(ch)
    if cp < 0x1100:
        return False
    i = bisect_right(_CJK_STARTS, cp) - 1
    return i >= 0 and cp <= _CJK_ENDS[i]


def _is_word_char(ch: str) -> bool:
    """Letters, digits, combining marks and ``_`` of non-CJK scripts."""
    if ch == "_" or ch.isalnum():
        return not is_cjk(ch)
    return unicodedata.category(ch).startswith("M") and not is_cjk(ch)


def _has_alnum(token: str) -> bool:
    return any(c.isalnum() for c in token)


def _chunks(word: str) -> list[str]:
    return [word[i : i + MAX_TOKEN_CHARS] for i in range(0, len(word), MAX_TOKEN_CHARS)]


def _cjk_tokens(run: str) -> list[str]:
    if len(run) == 1:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


def _compound_tokens(parts: list[str], joiners: list[str]) -> list[str]:
    """The whole compound first (if it has more than one part), then each part."""
    out: list[str] = []
    if len(parts) > 1:
        whole = parts[0] + "".join(
            _CANONICAL_JOINER.get(j, j) + p for j, p in zip(joiners, parts[1:], strict=True)
        )
        if len(whole) <= MAX_TOKEN_CHARS and _has_alnum(whole):
            out.append(whole)
    for part in parts:
        if _has_alnum(part):
            out.extend(_chunks(part))
    return out


def _joins(text: str, i: int) -> bool:
    """Does the character at ``i`` glue the word ending at ``i - 1`` to the one starting at ``i + 1``?"""
    if i + 1 >= len(text) or not _is_word_char(text[i + 1]):
        return False
    ch = text[i]
    if ch in _WORD_JOINERS:
        return True
    return ch in _DIGIT_JOINERS and text[i - 1].isdigit() and text[i + 1].isdigit()


def analyze(text: str, *, drop_stopwords: bool = True) -> list[str]:
    """Split ``text`` into index tokens, in order (see the module docstring for the rules).

    >>> analyze("用户喜欢小狗")
    ['用户', '户喜', '喜欢', '欢小', '小狗']
    >>> analyze("我用Python写ERR_4711")
    ['我用', 'python', '写', 'err_4711']
    >>> analyze("Upgrade to v2.3.1")
    ['upgrade', 'v2.3.1', 'v2', '3', '1']
    """
    s = normalize(text)
    n = len(s)
    tokens: list[str] = []
    i = 0
    while i < n:
        ch = s[i]
        if is_cjk(ch):
            j = i + 1
            while j < n and is_cjk(s[j]):
                j += 1
            tokens.extend(_cjk_tokens(s[i:j]))
            i = j
        elif _is_word_char(ch):
            parts: list[str] = []
            joiners: list[str] = []
            j = i
            while True:
                start = j
                while j < n and _is_word_char(s[j]):
                    j += 1
                parts.append(s[start:j])
                if j < n and _joins(s, j):
                    joiners.append(s[j])
                    j += 1
                    continue
                break
            tokens.extend(_compound_tokens(parts, joiners))
            i = j
        else:
            i += 1
    if drop_stopwords:
        return [t for t in tokens if t not in STOPWORDS]
    return tokens


def date_words(dt: datetime) -> list[str]:
    """Index tokens for the date of a memory, so keyword search can answer date questions.

    The words are built from ``dt``'s own fields (convert to the wanted time zone first) in English
    and Chinese, then passed through :func:`analyze`, so they are exactly the tokens a question
    produces: "what did X do in May 2023" -> ``may``, ``2023``; "2023年5月8日" -> ``2023``, ``年``,
    ``5``, ``月``, ``8``, ``日``; "五月" -> ``五月``; "星期一" -> ``星期``, ``期一``; "2023-05-08" ->
    ``2023-05-08``, ``2023``, ``05``, ``08``.

    Returned (deduplicated, first-seen order): month name and 3-letter abbreviation, 4-digit year,
    day of month, weekday name, ISO ``yyyy-mm-dd`` and ``yyyy-mm`` with their parts (so zero-padded
    ``05``/``08`` too), and the Chinese ``yyyy年m月d日``, ``五月``, ``星期一``/``周一`` forms
    (Sunday also as ``星期天``). Note that Chinese month numerals overlap as bigrams: ``十二月``
    yields ``十二`` and ``二月``, so a question about ``二月`` also touches December.
    """
    month = _MONTHS[dt.month - 1]
    weekday = _WEEKDAYS[dt.weekday()]
    zh_weekday = _ZH_WEEKDAYS[dt.weekday()]
    phrases = [
        month,
        month[:3],
        f"{dt.year:04d}",
        str(dt.day),
        weekday,
        f"{dt.year:04d}-{dt.month:02d}-{dt.day:02d}",
        f"{dt.year:04d}-{dt.month:02d}",
        f"{dt.year:04d}年{dt.month}月{dt.day}日",
        f"{_ZH_MONTHS[dt.month - 1]}月",
        f"星期{zh_weekday}",
        f"周{zh_weekday}",
    ]
    if zh_weekday == "日":
        phrases.append("星期天")
    seen: dict[str, None] = {}
    for phrase in phrases:
        for token in analyze(phrase):
            seen.setdefault(token, None)
    return list(seen)
