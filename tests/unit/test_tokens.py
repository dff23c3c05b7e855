"""Behaviour of the token estimator and truncation (memvault.domain.tokens)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memvault.domain.tokens import (
    DIGIT_CHARS_PER_TOKEN,
    LATIN_CHARS_PER_TOKEN,
    MIXED_CHARS_PER_TOKEN,
    estimate_tokens,
    truncate_to_tokens,
)

_FRAGMENTS = st.sampled_from(
    [
        "用户", "喜欢", "狗", "。", "，", "タワー", "안녕", "Python", "ERR_4711", "v2.3.1", "hello",
        "internationalization", "2023", "9fceb02d", " ", "  ", "\n", ".", "-", "🙂", "e\u0301", "a",
    ]
)  # fmt: skip
_TEXTS = st.one_of(st.lists(_FRAGMENTS, max_size=25).map("".join), st.text(max_size=60))


# --- estimate_tokens -------------------------------------------------------------------------


def test_empty_and_blank_text_cost_nothing() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens(" \n\t\u3000") == 0


def test_each_chinese_character_counts_one() -> None:
    assert estimate_tokens("用户喜欢小狗") == 6


def test_kana_hangul_and_cjk_punctuation_count_one_each() -> None:
    assert estimate_tokens("タワー") == 3
    assert estimate_tokens("안녕") == 2
    assert estimate_tokens("小狗。") == 3


def test_short_english_word_is_one_token() -> None:
    assert estimate_tokens("dog") == 1
    assert estimate_tokens("a") == 1


def test_long_english_word_costs_its_length_over_the_divisor_rounded_up() -> None:
    word = "internationalization"  # 20 letters
    assert estimate_tokens(word) == -(-len(word) // LATIN_CHARS_PER_TOKEN)


def test_digit_runs_use_the_digit_divisor() -> None:
    assert estimate_tokens("2023") == -(-4 // DIGIT_CHARS_PER_TOKEN)
    assert estimate_tokens("13800138000") == -(-11 // DIGIT_CHARS_PER_TOKEN)


def test_runs_mixing_letters_and_digits_use_the_mixed_divisor() -> None:
    sha = "9fceb02d0ae598e95dc970b74767f19372d61af8"
    assert estimate_tokens(sha) == len(sha) // MIXED_CHARS_PER_TOKEN


def test_mixed_divisor_is_the_smallest() -> None:
    smallest = min(LATIN_CHARS_PER_TOKEN, DIGIT_CHARS_PER_TOKEN, MIXED_CHARS_PER_TOKEN)
    assert smallest == MIXED_CHARS_PER_TOKEN


def test_punctuation_and_symbols_count_one_each() -> None:
    assert estimate_tokens("!?_") == 3
    assert estimate_tokens("🙂") == 1


def test_identifier_counts_its_parts_and_separator() -> None:
    assert estimate_tokens("ERR_4711") == 1 + 1 + 2


def test_mixed_sentence_adds_up_its_parts() -> None:
    # 我 用 (2) + Python (1) + 写 (1) + ERR (1) + _ (1) + 4711 (2)
    assert estimate_tokens("我用Python写ERR_4711") == 8


def test_english_sentence_lands_near_a_real_tokenizer() -> None:
    # XLM-R SentencePiece gives 12 content tokens; GPT-style BPE gives 11-12.
    assert 10 <= estimate_tokens("The user prefers dark mode in every application they use.") <= 15


def test_accented_word_with_combining_mark_is_one_run() -> None:
    assert estimate_tokens("cafe\u0301") == estimate_tokens("café") == 1


def test_cyrillic_words_count_like_latin_words() -> None:
    assert estimate_tokens("Привет мир") == 2


@given(_TEXTS)
def test_estimate_never_decreases_as_text_grows(text: str) -> None:
    costs = [estimate_tokens(text[:i]) for i in range(len(text) + 1)]
    assert costs == sorted(costs)


@given(_TEXTS)
def test_estimate_is_at_most_one_per_non_space_character(text: str) -> None:
    assert 0 <= estimate_tokens(text) <= sum(1 for c in text if not c.isspace())


# --- truncate_to_tokens ----------------------------------------------------------------------


def test_text_that_fits_is_returned_unchanged() -> None:
    text = "The user likes dogs."
    assert truncate_to_tokens(text, estimate_tokens(text)) == text
    assert truncate_to_tokens(text, 1000) == text


def test_empty_string_when_even_the_suffix_does_not_fit() -> None:
    assert truncate_to_tokens("hello world", 0) == ""
    assert truncate_to_tokens("hello world", -5) == ""
    assert truncate_to_tokens("hello world", 1, suffix="...") == ""


def test_only_the_suffix_when_no_text_fits_beside_it() -> None:
    assert truncate_to_tokens("hello world", 1) == "…"


def test_english_text_is_cut_at_a_word_boundary() -> None:
    assert truncate_to_tokens("The quick brown fox jumps over the lazy dog.", 5) == "The quick brown fox…"


def test_chinese_text_is_cut_after_any_character() -> None:
    assert truncate_to_tokens("用户喜欢小狗，每天都去公园", 5) == "用户喜欢…"


def test_a_single_long_word_is_cut_inside_at_a_token_boundary() -> None:
    assert (
        truncate_to_tokens("internationalization", 3)
        == "internationalizati"[: 2 * LATIN_CHARS_PER_TOKEN] + "…"
    )


def test_trailing_whitespace_is_removed_before_the_suffix() -> None:
    # " [more]" costs 3 ("[", "more", "]"), leaving 2 for "alpha beta "
    assert (
        truncate_to_tokens("alpha beta gamma delta epsilon zeta", 5, suffix=" [more]") == "alpha beta [more]"
    )


def test_empty_suffix_is_allowed() -> None:
    assert truncate_to_tokens("用户喜欢小狗", 2, suffix="") == "用户"


def test_suffix_that_merges_with_the_last_word_still_fits() -> None:
    result = truncate_to_tokens("abcdef abcdef abcdef", 2, suffix="1")
    assert estimate_tokens(result) <= 2
    assert result.endswith("1")


@given(
    _TEXTS, st.integers(min_value=-2, max_value=40), st.sampled_from(["…", "...", "", " [more]", "1", "x"])
)
def test_truncation_never_exceeds_the_budget(text: str, budget: int, suffix: str) -> None:
    result = truncate_to_tokens(text, budget, suffix=suffix)
    assert result == "" or estimate_tokens(result) <= budget


@given(_TEXTS, st.integers(min_value=0, max_value=40))
def test_truncation_keeps_a_prefix_of_the_text(text: str, budget: int) -> None:
    result = truncate_to_tokens(text, budget)
    if result in (text, ""):
        return
    assert result.endswith("…")
    assert text.startswith(result[: -len("…")])


@given(_TEXTS, st.integers(min_value=0, max_value=40))
def test_text_within_budget_is_never_truncated(text: str, budget: int) -> None:
    if estimate_tokens(text) <= budget:
        assert truncate_to_tokens(text, budget) == text


@pytest.mark.parametrize("budget", [2, 3, 4, 6, 10])
def test_truncation_uses_most_of_the_budget_for_prose(budget: int) -> None:
    text = "We scheduled the quarterly planning meeting for next Tuesday at three."
    result = truncate_to_tokens(text, budget)
    # the next word would not have fitted
    assert estimate_tokens(result) >= budget - 2
