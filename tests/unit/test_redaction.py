"""Behaviour of secret redaction (memvault.domain.redaction)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memvault.domain.redaction import MARKER_RE, marker, redact

OPENAI_KEY = "sk-" + "Ab3dEfGh1jKlMn0pQrStUvWxYz012345678901234567"
OPENAI_PROJECT_KEY = "sk-proj-AbC123_dEf456-ghI789jkl012mno345pqr"
AWS_KEY_ID = "AKIAIOSFODNN7EXAMPLE"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
GITHUB_TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
GITHUB_PAT = "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz"
SLACK_TOKEN = "xoxb-1234567890-0987654321-AbCdEfGhIjKlMnOp"
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
    ".eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIn0"
    ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)
PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    "MIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM9Oi\n"
    "Z1BjP5CE/Wm/Rr500P8RK8pLrY2E1QIDAQABAoIB\n"
    "-----END RSA PRIVATE KEY-----"
)

# Ordinary sentences that merely look a bit like secrets.
HARMLESS = [
    "sketch the ask-me-anything session",
    "the password policy requires 12 chars",
    "Password: must be at least 12 characters long",
    "Her token of appreciation was a cake.",
    "We set max_tokens=512 and token_count=5 in the config.",
    "The bearer of bad news; Bearer responsibility lies with ops.",
    "Visit https://example.com:8080/path for details.",
    "risk-assessment-framework-for-clients is the doc name",
    "The AKIA prefix marks AWS access keys.",
    "eyJ is how base64 JSON starts",
    "用户喜欢小狗，密码策略要求十二位。",
    "Secrets management is discussed in chapter 4.",
]


def _redacted(text: str) -> str:
    return redact(text)[0]


# --- each built-in kind ----------------------------------------------------------------------


def test_openai_key_is_replaced() -> None:
    assert redact(f"my key is {OPENAI_KEY} ok") == (f"my key is {marker('openai_key')} ok", 1)


def test_openai_project_key_is_replaced() -> None:
    assert _redacted(OPENAI_PROJECT_KEY) == "[REDACTED:openai_key]"


def test_anthropic_key_gets_its_own_kind() -> None:
    assert _redacted("sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123") == "[REDACTED:anthropic_key]"


def test_aws_access_key_ids_are_replaced() -> None:
    text = f"{AWS_KEY_ID} and ASIAABCDEFGHIJKLMNOP"
    assert redact(text) == ("[REDACTED:aws_access_key_id] and [REDACTED:aws_access_key_id]", 2)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"aws_secret_access_key = {AWS_SECRET}", "aws_secret_access_key = [REDACTED:aws_secret_key]"),
        (f"AWS_SECRET_ACCESS_KEY={AWS_SECRET}", "AWS_SECRET_ACCESS_KEY=[REDACTED:aws_secret_key]"),
        (f'"aws_secret_access_key": "{AWS_SECRET}"', '"aws_secret_access_key": "[REDACTED:aws_secret_key]"'),
    ],
)
def test_labelled_aws_secret_key_is_replaced_keeping_the_label(text: str, expected: str) -> None:
    assert redact(text) == (expected, 1)


def test_unlabelled_forty_character_string_is_not_taken_for_an_aws_secret() -> None:
    assert redact(f"checksum {AWS_SECRET}") == (f"checksum {AWS_SECRET}", 0)


def test_private_key_block_is_replaced_whole() -> None:
    assert redact(f"key:\n{PEM}\nafter") == ("key:\n[REDACTED:private_key]\nafter", 1)


def test_private_key_block_without_end_line_is_replaced_through_its_body() -> None:
    text = (
        "-----BEGIN OPENSSH PRIVATE KEY-----\n"
        "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n"
        "AAAAAAABAAAAMwAAAAtzc2gtZW\n"
        "and then the user said hi"
    )
    assert redact(text) == ("[REDACTED:private_key]\nand then the user said hi", 1)


@pytest.mark.parametrize("token", [GITHUB_TOKEN, GITHUB_PAT, "gho_" + "x" * 36])
def test_github_tokens_are_replaced(token: str) -> None:
    assert redact(f"token {token}.") == ("token [REDACTED:github_token].", 1)


def test_slack_token_is_replaced() -> None:
    assert _redacted(f"slack {SLACK_TOKEN}") == "slack [REDACTED:slack_token]"


def test_jwt_is_replaced() -> None:
    assert redact(f"jwt={JWT}") == ("jwt=[REDACTED:jwt]", 1)


def test_bearer_token_is_replaced_keeping_the_scheme() -> None:
    assert redact("Authorization: Bearer abc123def456ghi") == (
        "Authorization: Bearer [REDACTED:bearer_token]",
        1,
    )


def test_bearer_jwt_is_counted_once() -> None:
    assert redact(f"Authorization: Bearer {JWT}") == ("Authorization: Bearer [REDACTED:jwt]", 1)


def test_basic_auth_header_is_replaced() -> None:
    assert (
        _redacted("Authorization: Basic dXNlcjpwYXNzd29yZA==") == "Authorization: Basic [REDACTED:basic_auth]"
    )


def test_password_in_url_is_replaced_keeping_user_and_host() -> None:
    text = "postgres://admin:s3cr3t@db.example.com:5432/app"
    assert redact(text) == ("postgres://admin:[REDACTED:url_password]@db.example.com:5432/app", 1)


def test_password_in_url_without_user_is_replaced() -> None:
    assert _redacted("redis://:hunter2@cache:6379") == "redis://:[REDACTED:url_password]@cache:6379"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("password=hunter2", "password=[REDACTED:password]"),
        ("passwd: hunter2", "passwd: [REDACTED:password]"),
        ("DB_PASSWORD=abc", "DB_PASSWORD=[REDACTED:password]"),
        ("secret=xyz", "secret=[REDACTED:secret]"),
        ("client_secret = 'abc def'", "client_secret = '[REDACTED:secret]'"),
        ("api_key=abc123", "api_key=[REDACTED:api_key]"),
        ("API-KEY: Zm9vYmFy", "API-KEY: [REDACTED:api_key]"),
        ("token=tok_123", "token=[REDACTED:token]"),
        ("access_token=abc", "access_token=[REDACTED:token]"),
        ('{"password": "p@ss w0rd"}', '{"password": "[REDACTED:password]"}'),
        ("https://x.com/cb?token=abc123&next=1", "https://x.com/cb?token=[REDACTED:token]&next=1"),
        ("password=hunter2.", "password=[REDACTED:password]."),
    ],
)
def test_labelled_assignments_keep_the_label_and_replace_the_value(text: str, expected: str) -> None:
    assert redact(text) == (expected, 1)


def test_bare_lower_case_word_after_colon_at_line_end_is_redacted() -> None:
    assert _redacted("password: letmein\nnext line") == "password: [REDACTED:password]\nnext line"


def test_prose_after_password_colon_is_not_redacted() -> None:
    assert redact("Password: must be 12 chars") == ("Password: must be 12 chars", 0)


def test_several_secrets_are_all_counted() -> None:
    text = f"{OPENAI_KEY} {AWS_KEY_ID} {GITHUB_TOKEN} password=x"
    out, count = redact(text)
    assert count == 4
    assert MARKER_RE.sub("", out).split() == ["password="]


def test_a_key_assigned_to_a_label_is_counted_once_under_its_specific_kind() -> None:
    assert redact(f"api_key={OPENAI_KEY}") == ("api_key=[REDACTED:openai_key]", 1)


@pytest.mark.parametrize("text", HARMLESS)
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert redact(text) == (text, 0)


def test_empty_text_is_left_alone() -> None:
    assert redact("") == ("", 0)


# --- extra patterns --------------------------------------------------------------------------


def test_extra_patterns_become_custom_markers() -> None:
    out, count = redact("employee E-12345 and E-99999", extra_patterns=[r"E-\d{5}"])
    assert (out, count) == ("employee [REDACTED:custom] and [REDACTED:custom]", 2)


def test_extra_patterns_run_after_builtin_kinds() -> None:
    assert redact(f"{OPENAI_KEY}", extra_patterns=["sk-"]) == ("[REDACTED:openai_key]", 1)


def test_extra_pattern_matching_nothing_changes_nothing() -> None:
    assert redact("nothing here", extra_patterns=[r"zzz\d+"]) == ("nothing here", 0)


def test_extra_pattern_matching_the_empty_string_is_harmless() -> None:
    assert redact("abc", extra_patterns=["x*"]) == ("abc", 0)


def test_invalid_extra_pattern_raises_value_error_naming_it() -> None:
    with pytest.raises(ValueError, match=r"invalid redaction pattern '\(unclosed'"):
        redact("text", extra_patterns=["(unclosed"])


# --- idempotence -----------------------------------------------------------------------------

_SECRETS = [
    OPENAI_KEY, OPENAI_PROJECT_KEY, AWS_KEY_ID, f"aws_secret_access_key={AWS_SECRET}", PEM, GITHUB_TOKEN,
    GITHUB_PAT, SLACK_TOKEN, JWT, "Bearer abc123def456", "password=hunter2", "passwd: x1", "token='abc'",
    "postgres://u:p4ss@h/db", "Authorization: Basic dXNlcjpwYXNz",
]  # fmt: skip
_PIECES = st.one_of(
    st.sampled_from(_SECRETS),
    st.sampled_from([*HARMLESS, " ", "\n", "=", ":", "@", '"', "'", "[REDACTED:", "]", "[REDACTED:x]"]),
    st.text(max_size=12),
)
_TEXTS = st.lists(_PIECES, max_size=8).map("".join)


@given(_TEXTS)
def test_redact_is_idempotent(text: str) -> None:
    once, _ = redact(text)
    assert redact(once) == (once, 0)


@given(_TEXTS)
def test_count_equals_the_number_of_new_markers(text: str) -> None:
    out, count = redact(text)
    assert count == len(MARKER_RE.findall(out)) - len(MARKER_RE.findall(text))


@given(st.lists(st.sampled_from(_SECRETS), min_size=1, max_size=4))
def test_no_secret_survives_redaction(secrets: list[str]) -> None:
    out, count = redact(" and ".join(secrets))
    assert count == len(secrets)
    for secret in (OPENAI_KEY, AWS_KEY_ID, AWS_SECRET, GITHUB_TOKEN, SLACK_TOKEN, JWT, "hunter2"):
        assert secret not in out
