"""Secret redaction for memory text, applied before anything is stored or indexed.

:func:`redact` replaces each secret with ``[REDACTED:<kind>]`` and counts the replacements. The
built-in kinds, applied in this order (specific before generic):

=====================  ==========================================================================
``private_key``        PEM ``-----BEGIN ... PRIVATE KEY----- ... -----END ... PRIVATE KEY-----``
                       (a block with no END line is redacted through its base64 body)
``url_password``       ``scheme://user:password@host`` -> ``scheme://user:[REDACTED:url_password]@host``
``anthropic_key``      ``sk-ant-...``
``openai_key``         ``sk-...`` / ``sk-proj-...`` (20+ key characters, at least one digit)
``aws_access_key_id``  ``AKIA``/``ASIA`` + 16 upper-case letters or digits
``aws_secret_key``     40-character value labelled ``aws_secret_access_key`` (or similar)
``github_token``       ``ghp_`` / ``gho_`` / ``ghu_`` / ``ghs_`` / ``ghr_`` / ``github_pat_``
``slack_token``        ``xoxb-`` / ``xoxa-`` / ``xoxp-`` / ``xoxr-`` / ``xoxs-``
``jwt``                three base64url segments, the first starting ``eyJ``
``bearer_token``       ``Bearer <token>`` (token of 8+ characters with a digit); ``Bearer`` is kept
``basic_auth``         ``Authorization: Basic <base64>``; the header name is kept
``password`` etc.      ``password=...``, ``passwd: ...``, ``secret=...``, ``api_key=...``,
                       ``token=...`` (kinds ``password``, ``secret``, ``api_key``, ``token``); the
                       label, separator and quotes are kept, only the value is replaced
``custom``             a match of one of the caller's ``extra_patterns``
=====================  ==========================================================================

Labelled assignments: after ``=`` (or inside quotes) any value is redacted. After a bare ``:``
the value is redacted only if it holds a character other than a-z (digit, capital, symbol) or
ends its line, so prose such as ``Password: must be 12 chars`` is left alone while
``password: hunter2`` and a YAML ``password: letmein`` line are redacted.

Existing ``[REDACTED:...]`` markers are never matched again, so ``redact`` is idempotent:
``redact(redact(x)[0]) == (redact(x)[0], 0)``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence

__all__ = ["MARKER_RE", "marker", "redact"]

MARKER_RE = re.compile(r"\[REDACTED:[a-z0-9_]+\]")
"""A replacement marker, as written by :func:`redact`."""

_Replacer = Callable[[re.Match[str]], str]


def marker(kind: str) -> str:
    """The text that replaces a secret of ``kind``."""
    return f"[REDACTED:{kind}]"


def _whole(kind: str) -> _Replacer:
    text = marker(kind)
    return lambda _m: text


def _keep_around(kind: str, group: str = "secret") -> _Replacer:
    """Replace only the named group, keep what the match has around it."""
    text = marker(kind)

    def replace(m: re.Match[str]) -> str:
        start, end = m.span(group)
        whole_start = m.start()
        return m.group(0)[: start - whole_start] + text + m.group(0)[end - whole_start :]

    return replace


_ASSIGNMENT_KINDS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"pass", re.IGNORECASE), "password"),
    (re.compile(r"pwd", re.IGNORECASE), "password"),
    (re.compile(r"api[_-]?key|access[_-]?key", re.IGNORECASE), "api_key"),
    (re.compile(r"secret", re.IGNORECASE), "secret"),
)


def _assignment_kind(label: str) -> str:
    for pattern, kind in _ASSIGNMENT_KINDS:
        if pattern.search(label):
            return kind
    return "token"


def _replace_assignment(m: re.Match[str]) -> str:
    group = next(g for g in ("quoted", "quoted2", "bare") if m.group(g) is not None)
    if group == "bare" and m.group("sep") == ":":
        # A bare value after ':' is prose unless it looks like a secret or ends its line.
        value = m.group("bare")
        rest = m.string[m.end() :].lstrip(" \t")
        at_line_end = rest[:1] in ("", "\n", "\r")
        if value.isascii() and value.isalpha() and value.islower() and not at_line_end:
            return m.group(0)
    start, end = m.span(group)
    offset = m.start()
    whole = m.group(0)
    return whole[: start - offset] + marker(_assignment_kind(m.group("label"))) + whole[end - offset :]


_NOT_MARKER = r"(?!\[REDACTED:)"

# The label's last word decides the kind; anything may precede it (DB_PASSWORD, mypassword).
_LABEL = (
    r"client[_-]?secret|secret[_-]?key|secret|passphrase|password|passwd|pwd"
    r"|api[_-]?key|apikey|access[_-]?key|auth[_-]?token|access[_-]?token|refresh[_-]?token|token"
)

_BUILTIN: tuple[tuple[re.Pattern[str], _Replacer], ...] = (
    (
        re.compile(
            r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY-----"
            r"(?:(?:(?!-----).)*?-----END[A-Z0-9 ]*PRIVATE KEY-----"
            r"|(?:[ \t]*\r?\n[ \t]*(?:[A-Za-z-]+:[^\r\n]*|[A-Za-z0-9+/=]{16,}))*)",
            re.DOTALL,
        ),
        _whole("private_key"),
    ),
    (
        re.compile(
            r"\b[a-z][a-z0-9+.-]{0,30}://[^\s:/?#@\[\]]*:"
            + _NOT_MARKER
            + r"(?P<secret>[^\s/?#@]+)@(?=[^\s@])",
            re.IGNORECASE,
        ),
        _keep_around("url_password"),
    ),
    (re.compile(r"\bsk-ant-[A-Za-z0-9_-]{20,}"), _whole("anthropic_key")),
    (
        re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?(?=[A-Za-z0-9_-]*\d)[A-Za-z0-9_-]{20,}"),
        _whole("openai_key"),
    ),
    (re.compile(r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b"), _whole("aws_access_key_id")),
    (
        re.compile(
            r"\b(?:aws[_-]?secret[_-]?access[_-]?key|aws[_-]?secret[_-]?key|secret[_-]?access[_-]?key)"
            r"[\"']?\s*[:=]\s*[\"']?" + _NOT_MARKER + r"(?P<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])",
            re.IGNORECASE,
        ),
        _keep_around("aws_secret_key"),
    ),
    (
        re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})"),
        _whole("github_token"),
    ),
    (re.compile(r"\bxox[baprs]-[A-Za-z0-9-]{10,}"), _whole("slack_token")),
    (
        re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*"),
        _whole("jwt"),
    ),
    (
        re.compile(
            r"\bBearer\s+" + _NOT_MARKER + r"(?P<secret>(?=[A-Za-z._~+/=-]*\d)[A-Za-z0-9._~+/=-]{8,})",
            re.IGNORECASE,
        ),
        _keep_around("bearer_token"),
    ),
    (
        re.compile(r"\bAuthorization\s*:\s*Basic\s+(?P<secret>[A-Za-z0-9+/]{8,}={0,2})", re.IGNORECASE),
        _keep_around("basic_auth"),
    ),
    (
        re.compile(
            r"(?P<label>" + _LABEL + r")(?![A-Za-z0-9_-])[\"']?"
            r"[ \t]*(?P<sep>[:=])[ \t]*" + _NOT_MARKER + r"(?:"
            r"\"(?P<quoted>" + _NOT_MARKER + r"[^\"\r\n]+)\"|'(?P<quoted2>" + _NOT_MARKER + r"[^'\r\n]+)'"
            r"|(?P<bare>[^\s\"'&,;]*[^\s\"'&,;.:)\]}>]))",
            re.IGNORECASE,
        ),
        _replace_assignment,
    ),
)


def _compile_extra(patterns: Iterable[str]) -> list[re.Pattern[str]]:
    compiled: list[re.Pattern[str]] = []
    for pattern in patterns:
        try:
            compiled.append(re.compile(pattern))
        except re.error as exc:
            raise ValueError(f"invalid redaction pattern {pattern!r}: {exc}") from exc
    return compiled


def _sub_outside_markers(pattern: re.Pattern[str], replace: _Replacer, text: str) -> tuple[str, int]:
    """Apply ``pattern`` to the stretches of ``text`` between existing markers."""
    count = 0

    def counted(m: re.Match[str]) -> str:
        nonlocal count
        if m.group(0) == "":
            return ""
        out = replace(m)
        if out != m.group(0):
            count += 1
        return out

    pieces: list[str] = []
    pos = 0
    for m in MARKER_RE.finditer(text):
        pieces.append(pattern.sub(counted, text[pos : m.start()]))
        pieces.append(m.group(0))
        pos = m.end()
    pieces.append(pattern.sub(counted, text[pos:]))
    return "".join(pieces), count


def redact(text: str, extra_patterns: Sequence[str] = ()) -> tuple[str, int]:
    """Replace secrets in ``text`` with ``[REDACTED:<kind>]``; return the new text and the count.

    ``extra_patterns`` are regular expressions (Python syntax) whose matches become
    ``[REDACTED:custom]``; they run after the built-in kinds. An invalid one raises ``ValueError``.
    """
    extra = _compile_extra(extra_patterns)
    total = 0
    for pattern, replace in _BUILTIN:
        text, n = _sub_outside_markers(pattern, replace, text)
        total += n
    custom = _whole("custom")
    for pattern in extra:
        text, n = _sub_outside_markers(pattern, custom, text)
        total += n
    return text, total
