"""Behaviour of the shared text analyzer (memvault.domain.text)."""

from __future__ import annotations

import unicodedata
from datetime import datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memvault.domain.text import (
    MAX_TOKEN_CHARS,
    STOPWORDS,
    analyze,
    date_words,
    is_cjk,
    normalize,
)

# Text built from the pieces the analyzer treats specially, so properties hit the interesting paths.
_FRAGMENTS = st.sampled_from(
    [
        "用户", "喜欢", "狗", "东京タワー", "안녕", "Python", "ERR_4711", "v2.3.1", "ticket-123",
        "alice's", "Alice’s", "10:30", "1,000", "the", "THE", " ", "  ", "\n", ".", "-", "'", ",",
        ":", "_", "Ｆｕｌｌ", "１２３", "é", "e\u0301", "Привет", "!", "🙂", "a", "i", "x",
    ]
)  # fmt: skip
_MIXED_TEXT = st.lists(_FRAGMENTS, max_size=20).map("".join)
_ANY_TEXT = st.one_of(_MIXED_TEXT, st.text(max_size=60))


# --- normalize -------------------------------------------------------------------------------


def test_full_width_letters_and_digits_become_half_width_lower_case() -> None:
    assert normalize("ＥＲＲ＿４７１１") == "err_4711"


def test_upper_case_is_folded_to_lower_case() -> None:
    assert normalize("Dark MODE") == "dark mode"


def test_ideographic_space_becomes_an_ordinary_space() -> None:
    assert normalize("小狗\u3000cat") == "小狗 cat"


@given(_ANY_TEXT)
def test_normalize_is_idempotent(text: str) -> None:
    once = normalize(text)
    assert normalize(once) == once


# --- is_cjk ----------------------------------------------------------------------------------


@pytest.mark.parametrize("ch", ["狗", "の", "タ", "ー", "한", "々", "𠀀"])
def test_han_kana_and_hangul_are_cjk(ch: str) -> None:
    assert is_cjk(ch)


@pytest.mark.parametrize("ch", ["a", "1", "。", "，", "・", "「", " ", "é", "п"])
def test_latin_digits_and_cjk_punctuation_are_not_cjk(ch: str) -> None:
    assert not is_cjk(ch)


_CJK_NAME_PREFIXES = ("CJK UNIFIED IDEOGRAPH", "HIRAGANA LETTER", "KATAKANA LETTER", "HANGUL SYLLABLE")


@given(st.characters())
def test_is_cjk_agrees_with_unicode_character_names(ch: str) -> None:
    name = unicodedata.name(ch, "")
    if name.startswith(_CJK_NAME_PREFIXES):
        assert is_cjk(ch)
    if name.startswith(("LATIN", "DIGIT", "CYRILLIC", "GREEK", "IDEOGRAPHIC", "FULLWIDTH", "SPACE")):
        assert not is_cjk(ch)


# --- analyze: CJK ----------------------------------------------------------------------------


def test_chinese_sentence_becomes_overlapping_bigrams() -> None:
    assert analyze("用户喜欢小狗") == ["用户", "户喜", "喜欢", "欢小", "小狗"]


def test_two_character_chinese_word_is_one_token() -> None:
    assert analyze("小狗") == ["小狗"]


def test_single_chinese_character_is_kept_as_a_unigram() -> None:
    assert analyze("狗") == ["狗"]


def test_cjk_punctuation_splits_runs() -> None:
    assert analyze("小狗，猫。") == ["小狗", "猫"]


def test_japanese_kana_and_kanji_are_bigrammed_together() -> None:
    assert analyze("東京タワー") == ["東京", "京タ", "タワ", "ワー"]


def test_korean_hangul_words_are_bigrammed() -> None:
    assert analyze("안녕하세요") == ["안녕", "녕하", "하세", "세요"]


def test_half_width_katakana_is_widened_before_bigramming() -> None:
    assert analyze("ﾀﾜｰ") == analyze("タワー") == ["タワ", "ワー"]


def test_mixed_chinese_and_identifiers_give_bigrams_and_whole_words() -> None:
    assert analyze("我用Python写ERR_4711") == ["我用", "python", "写", "err_4711"]


def test_digits_end_a_cjk_run() -> None:
    assert analyze("2023年5月8日") == ["2023", "年", "5", "月", "8", "日"]


# --- analyze: words, identifiers and compounds -----------------------------------------------


def test_english_words_are_lower_cased_and_stopwords_dropped() -> None:
    assert analyze("The user always prefers Dark Mode") == ["user", "always", "prefers", "dark", "mode"]


def test_stopwords_are_kept_when_asked() -> None:
    assert analyze("The user is here", drop_stopwords=False) == ["the", "user", "is", "here"]


def test_underscore_identifier_is_kept_whole() -> None:
    assert analyze("ERR_4711") == ["err_4711"]


def test_dotted_version_is_kept_whole_and_split_into_parts() -> None:
    assert analyze("v2.3.1") == ["v2.3.1", "v2", "3", "1"]


def test_hyphenated_id_is_kept_whole_and_split_into_parts() -> None:
    assert analyze("ticket-123") == ["ticket-123", "ticket", "123"]


def test_key_like_prefix_is_kept_whole_and_split_into_parts() -> None:
    assert analyze("sk-abc") == ["sk-abc", "sk", "abc"]


def test_domain_name_is_kept_whole_and_split_into_parts() -> None:
    assert analyze("alice@example.com") == ["alice", "example.com", "example", "com"]


def test_time_and_thousands_separators_join_digits_only() -> None:
    assert analyze("10:30 1,000 note:see a,b") == [
        "10:30",
        "10",
        "30",
        "1,000",
        "1",
        "000",
        "note",
        "see",
        "b",
    ]


def test_curly_apostrophe_is_written_as_straight_and_possessive_s_is_a_stopword() -> None:
    assert analyze("Alice’s dog") == analyze("Alice's dog") == ["alice's", "alice", "dog"]


def test_stopword_parts_of_a_compound_are_dropped_but_the_whole_is_kept() -> None:
    assert analyze("state-of-the-art") == ["state-of-the-art", "state", "art"]


def test_trailing_and_doubled_joiners_do_not_glue_words() -> None:
    assert analyze("end. next--thing -5") == ["end", "next", "thing", "5"]


def test_full_width_identifier_matches_its_ascii_form() -> None:
    assert analyze("ＥＲＲ＿４７１１") == analyze("err_4711")


def test_cyrillic_and_accented_words_are_whole_words() -> None:
    assert analyze("Привет naïve café") == ["привет", "naïve", "café"]


def test_tokens_without_letters_or_digits_are_dropped() -> None:
    assert analyze("___ _ a_b -- !!") == ["a_b"]


def test_overlong_word_is_cut_into_max_length_chunks() -> None:
    word = "x" * (MAX_TOKEN_CHARS + 10)
    assert analyze(word) == ["x" * MAX_TOKEN_CHARS, "x" * 10]


def test_overlong_compound_is_emitted_as_its_parts_only() -> None:
    left, right = "a" * 200, "b" * 100
    assert analyze(f"{left}-{right}") == [left, right]


def test_empty_and_blank_text_give_no_tokens() -> None:
    assert analyze("") == []
    assert analyze(" \n\t ") == []


def test_may_is_not_a_stopword_because_it_is_a_month() -> None:
    assert "may" not in STOPWORDS
    assert analyze("in May") == ["may"]


def test_stopword_list_is_short_and_lower_case() -> None:
    assert 40 <= len(STOPWORDS) <= 80
    assert all(w == normalize(w) and w.isalpha() for w in STOPWORDS)


@given(_ANY_TEXT, st.booleans())
def test_analyze_never_returns_empty_or_blank_tokens(text: str, drop: bool) -> None:
    for token in analyze(text, drop_stopwords=drop):
        assert token
        assert not any(c.isspace() for c in token)
        assert len(token) <= MAX_TOKEN_CHARS


@given(_ANY_TEXT)
def test_analyze_never_returns_stopwords_by_default(text: str) -> None:
    assert not set(analyze(text)) & STOPWORDS


@given(_ANY_TEXT)
def test_analyze_sees_through_normalization(text: str) -> None:
    assert analyze(normalize(text)) == analyze(text)


@given(_ANY_TEXT)
def test_reanalyzing_the_tokens_yields_no_new_tokens(text: str) -> None:
    tokens = analyze(text)
    assert set(analyze(" ".join(tokens))) <= set(tokens)


# --- date_words ------------------------------------------------------------------------------


def test_date_words_cover_english_names_year_and_day() -> None:
    words = date_words(datetime(2023, 5, 8, 14, 30))
    assert {"may", "2023", "8", "monday"} <= set(words)


def test_date_words_include_three_letter_month_abbreviation() -> None:
    assert "sep" in date_words(datetime(2024, 9, 1))
    assert "september" in date_words(datetime(2024, 9, 1))


def test_date_words_include_chinese_forms_as_analyzed_tokens() -> None:
    words = set(date_words(datetime(2023, 5, 8)))
    assert {"年", "5", "月", "日", "五月", "周一", "星期", "期一"} <= words


def test_date_words_include_iso_date_and_zero_padded_parts() -> None:
    words = set(date_words(datetime(2023, 5, 8)))
    assert {"2023-05-08", "2023-05", "05", "08"} <= words


def test_sunday_is_also_written_as_xingqitian() -> None:
    words = set(date_words(datetime(2023, 12, 31)))
    assert {"sunday", "周日", "期日", "期天", "十二", "二月"} <= words


def test_date_words_are_unique() -> None:
    words = date_words(datetime(2023, 5, 5))
    assert len(words) == len(set(words))


def test_an_english_date_question_matches_the_date_words() -> None:
    words = set(date_words(datetime(2023, 5, 8)))
    assert set(analyze("What did X do in May 2023?")) - words == {"x"}


def test_a_chinese_date_question_matches_the_date_words() -> None:
    words = set(date_words(datetime(2023, 5, 8)))
    assert set(analyze("2023年5月")) <= words
    assert set(analyze("五月")) <= words


@given(st.datetimes(min_value=datetime(1900, 1, 1), max_value=datetime(2100, 1, 1)))
def test_date_words_are_already_analyzed_tokens(dt: datetime) -> None:
    words = date_words(dt)
    assert words
    assert set(analyze(" ".join(words))) <= set(words)


def test_date_words_use_the_datetime_fields_as_given() -> None:
    late = datetime(2023, 5, 8, 23, 30)
    assert "8" in date_words(late)
    assert "9" in date_words(late + timedelta(hours=1))
