"""One token estimator for all languages, for budgeting prompt context without a tokenizer.

:func:`estimate_tokens` counts:

* each CJK character (Han, kana, Hangul -- see :func:`memvault.domain.text.is_cjk`): 1;
* each run of letters/digits of other scripts (Latin, Cyrillic, ..., with combining marks):
  ``max(1, ceil(len(run) / d))`` where ``d`` is :data:`LATIN_CHARS_PER_TOKEN` (6) for a run of
  letters only, :data:`DIGIT_CHARS_PER_TOKEN` (3) for digits only, and
  :data:`MIXED_CHARS_PER_TOKEN` (2) for a run mixing letters and digits (hashes, UUID chunks,
  base64: tokenizers split these finely);
* every other non-space character (punctuation, CJK punctuation, ``_``, symbols, emoji): 1;
* whitespace: 0.

The divisors were tuned with ``scripts/measure_token_estimator.py`` against a real SentencePiece
tokenizer (results in ``bench/results/token_estimator.md``): English prose lands within ~10% and
slightly over; one token per CJK character over-counts a large-vocabulary tokenizer by about a
third, which errs on the safe side for budgets.

The estimate of a prefix never exceeds the estimate of a longer prefix (because the mixed divisor
is the smallest); :func:`truncate_to_tokens` relies on that.

Pure functions only: no I/O, no third-party dependencies.
"""

from __future__ import annotations

import math
import unicodedata

from memvault.domain.text import is_cjk

__all__ = [
    "DIGIT_CHARS_PER_TOKEN",
    "LATIN_CHARS_PER_TOKEN",
    "MIXED_CHARS_PER_TOKEN",
    "estimate_tokens",
    "truncate_to_tokens",
]

LATIN_CHARS_PER_TOKEN = 6
"""Characters per token in a run of letters only (rounded up per run)."""
DIGIT_CHARS_PER_TOKEN = 3
"""Characters per token in a run of digits only."""
MIXED_CHARS_PER_TOKEN = 2
"""Characters per token in a run mixing letters and digits; must be the smallest divisor."""

_Rates = tuple[float, float, float]  # letters only, digits only, mixed
_DEFAULT_RATES: _Rates = (LATIN_CHARS_PER_TOKEN, DIGIT_CHARS_PER_TOKEN, MIXED_CHARS_PER_TOKEN)


def _is_run_char(ch: str) -> bool:
    if ch.isalnum():
        return not is_cjk(ch)
    return unicodedata.category(ch).startswith("M")


def _run_cost(length: int, has_letter: bool, has_digit: bool, rates: _Rates) -> int:
    """Tokens for a letter/digit run: ``max(1, ceil(length / divisor))``, 0 for no run."""
    if length <= 0:
        return 0
    if has_letter and has_digit:
        divisor = rates[2]
    elif has_digit:
        divisor = rates[1]
    else:
        divisor = rates[0]
    return max(1, math.ceil(length / divisor))


def _prefix_costs(text: str, rates: _Rates = _DEFAULT_RATES) -> list[int]:
    """``costs[i]`` is the estimate for ``text[:i]``; ``len(costs) == len(text) + 1``."""
    costs = [0]
    committed = 0  # tokens of everything before the current run
    run = 0  # length of the current letter/digit run
    has_letter = has_digit = False
    for ch in text:
        if _is_run_char(ch) and (run > 0 or ch.isalnum()):
            run += 1
            if ch.isdigit():
                has_digit = True
            elif ch.isalpha():
                has_letter = True
        else:
            committed += _run_cost(run, has_letter, has_digit, rates)
            run = 0
            has_letter = has_digit = False
            if not ch.isspace():
                committed += 1
        costs.append(committed + _run_cost(run, has_letter, has_digit, rates))
    return costs


def _estimate(text: str, rates: _Rates = _DEFAULT_RATES) -> int:
    return _prefix_costs(text, rates)[-1]


def estimate_tokens(text: str) -> int:
    """Estimated number of LLM tokens in ``text`` (see the module docstring for the rules)."""
    return _estimate(text)


def truncate_to_tokens(text: str, max_tokens: int, suffix: str = "…") -> str:
    """Shorten ``text`` so that its estimate, suffix included, is at most ``max_tokens``.

    Returns ``text`` unchanged if it fits; ``""`` if not even ``suffix`` fits. Otherwise returns the
    longest prefix whose estimate plus the suffix's is within budget, with trailing whitespace
    removed, followed by ``suffix``. A cut that would split a letter/digit word backs off to the
    start of that word, unless the word is the first thing in the text (then it is cut at a token
    boundary within the word). CJK text can be cut after any character. The result's own estimate
    is always at most ``max_tokens``, also when ``suffix`` would merge with the last word.
    """
    costs = _prefix_costs(text)
    if costs[-1] <= max_tokens:
        return text
    budget = max_tokens - estimate_tokens(suffix)
    if budget < 0:
        return ""
    # costs is non-decreasing: binary search for the longest prefix within budget
    lo, hi = 0, len(text)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if costs[mid] <= budget:
            lo = mid
        else:
            hi = mid - 1
    cut = lo
    if 0 < cut < len(text) and _is_run_char(text[cut - 1]) and _is_run_char(text[cut]):
        start = _run_start(text, cut)
        if start > 0:
            cut = start
    result = text[:cut].rstrip() + suffix
    # A suffix that starts with a letter or digit can merge with the last word and change its
    # divisor (``"abc" + "1"``); back off word by word until the joined text fits.
    while cut > 0 and estimate_tokens(result) > max_tokens:
        start = _run_start(text, cut)
        cut = start if start < cut else cut - 1
        result = text[:cut].rstrip() + suffix
    return result


def _run_start(text: str, end: int) -> int:
    """Start of the letter/digit run that ends at ``end`` (``end`` itself if there is none)."""
    start = end
    while start > 0 and _is_run_char(text[start - 1]):
        start -= 1
    return start
