"""Security classification of memory text, and memory-poisoning (prompt-injection) flags.

Classification only ever *raises* a level: :func:`classify` returns the highest of the level the
caller asked for and the level of every rule that matches. Matching runs on
:func:`memvault.domain.text.normalize`-d text (NFKC + case folding), so full-width digits,
upper case and lower case all match alike.

A :class:`ClassificationRule` matches when any of its keywords occurs, or any of its regex
patterns matches (and, if the rule names a ``check``, the matched text passes that check, e.g.
``"luhn"`` for card numbers). Keywords made only of ASCII characters must start at a word start
(``passport`` matches ``passports`` but ``pin`` would not match ``spin``); other keywords (Chinese)
match anywhere.

Pure functions only: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from memvault.domain.models import SecurityLevel
from memvault.domain.text import normalize

__all__ = [
    "CHECKS",
    "DEFAULT_RULES",
    "INSTRUCTION_PATTERNS",
    "SECURITY_LEVELS",
    "ClassificationRule",
    "classify",
    "level_rank",
    "looks_like_instruction",
    "luhn_valid",
]

SECURITY_LEVELS: tuple[str, ...] = tuple(level.value for level in SecurityLevel)
"""Security levels, lowest first (the values of :class:`~memvault.domain.models.SecurityLevel`)."""


def level_rank(level: str) -> int:
    """Position of ``level`` in :data:`SECURITY_LEVELS` (``public`` is 0). Unknown -> ``ValueError``."""
    try:
        return SecurityLevel(level).rank
    except ValueError:
        raise ValueError(f"unknown security level {level!r}; expected one of {SECURITY_LEVELS}") from None


def luhn_valid(text: str) -> bool:
    """True if the digits of ``text`` (other characters ignored) pass the Luhn checksum."""
    digits = [int(c) for c in text if c.isdigit()]
    if not digits:
        return False
    total = 0
    for i, digit in enumerate(reversed(digits)):
        value = digit * 2 if i % 2 == 1 else digit
        total += value - 9 if value > 9 else value
    return total % 10 == 0


CHECKS: dict[str, Callable[[str], bool]] = {"luhn": luhn_valid}
"""Named checks a rule can apply to its pattern matches."""


def _keyword_pattern(keyword: str) -> re.Pattern[str]:
    word = normalize(keyword)
    if word.isascii():
        return re.compile(r"(?<![a-z0-9_])" + re.escape(word))
    return re.compile(re.escape(word))


@dataclass(frozen=True)
class ClassificationRule:
    """Raise text to ``level`` when a keyword or pattern matches.

    ``patterns`` are Python regular expressions, matched case-insensitively against normalized
    text. ``check`` names an entry of :data:`CHECKS` that each pattern match must also pass.
    An unknown level or check, or an invalid pattern, raises ``ValueError`` at construction.
    """

    level: str
    keywords: tuple[str, ...] = ()
    patterns: tuple[str, ...] = ()
    check: str | None = None
    _keyword_res: tuple[re.Pattern[str], ...] = field(init=False, repr=False, compare=False)
    _pattern_res: tuple[re.Pattern[str], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        level_rank(self.level)
        if self.check is not None and self.check not in CHECKS:
            raise ValueError(f"unknown check {self.check!r}; expected one of {sorted(CHECKS)}")
        keyword_res = tuple(_keyword_pattern(k) for k in self.keywords if normalize(k).strip())
        pattern_res: list[re.Pattern[str]] = []
        for pattern in self.patterns:
            try:
                pattern_res.append(re.compile(pattern, re.IGNORECASE))
            except re.error as exc:
                raise ValueError(f"invalid classification pattern {pattern!r}: {exc}") from exc
        object.__setattr__(self, "_keyword_res", keyword_res)
        object.__setattr__(self, "_pattern_res", tuple(pattern_res))

    def matches(self, normalized_text: str) -> bool:
        """True if this rule fires on ``normalized_text`` (already passed through ``normalize``)."""
        if any(k.search(normalized_text) for k in self._keyword_res):
            return True
        if self.check is None:
            return any(p.search(normalized_text) for p in self._pattern_res)
        validate = CHECKS[self.check]
        return any(validate(m.group(0)) for p in self._pattern_res for m in p.finditer(normalized_text))


_CONFIDENTIAL_KEYWORDS = (
    # pay
    "salary", "salaries", "payroll", "薪资", "工资", "薪水", "月薪", "年薪",
    # identity documents and credentials
    "身份证", "passport", "护照", "password", "密码", "[redacted:",
    # health
    "medical", "diagnosis", "diagnosed", "prescription", "病历", "诊断", "病情", "处方",
    # banking
    "bank account", "银行卡", "银行账户", "银行账号",
    # home
    "home address", "家庭住址", "家庭地址",
)  # fmt: skip

DEFAULT_RULES: tuple[ClassificationRule, ...] = (
    ClassificationRule(level="confidential", keywords=_CONFIDENTIAL_KEYWORDS),
    ClassificationRule(
        level="restricted",
        keywords=("[redacted:private_key]", "[redacted:aws_secret_key]"),
        patterns=(
            r"-----begin[a-z0-9 ]*private key-----",
            r"(?<!\d)\d{3}-\d{2}-\d{4}(?!\d)",  # US social security number
            # Chinese resident ID: region, birth date yyyymmdd, sequence, check digit
            r"(?<![0-9a-z])[1-9]\d{5}(?:18|19|20)\d{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])\d{3}[\dx](?![0-9a-z])",
        ),
    ),
    ClassificationRule(
        level="restricted",
        # payment card: 13-19 digits starting 2-6, optional single space/dash separators
        patterns=(r"(?<![\d-])[2-6](?:[ -]?\d){12,18}(?![\d])",),
        check="luhn",
    ),
)


def classify(
    text: str,
    requested: str = "internal",
    rules: Sequence[ClassificationRule] = DEFAULT_RULES,
) -> str:
    """The highest of ``requested`` and the level of every rule matching ``text``.

    Raises ``ValueError`` if ``requested`` is not one of :data:`SECURITY_LEVELS`.
    """
    best = level_rank(requested)
    normalized = normalize(text)
    top = len(SECURITY_LEVELS) - 1
    for rule in rules:
        if best == top:
            break
        rank = level_rank(rule.level)
        if rank > best and rule.matches(normalized):
            best = rank
    return SECURITY_LEVELS[best]


INSTRUCTION_PATTERNS: tuple[re.Pattern[str], ...] = tuple(
    re.compile(p)
    for p in (
        # English override phrases
        r"\b(?:ignore|disregard|forget|override|bypass)\s+(?:all\s+|any\s+|the\s+|of\s+)*"
        r"(?:(?:previous|prior|above|earlier|preceding|former|your|system|original)\s+)+"
        r"(?:instructions?|prompts?|directions?|directives?|rules|guidelines|messages?)\b",
        r"\bforget\s+(?:everything|all)\s+(?:above|before|you\s+(?:were|have\s+been)\s+told)",
        r"\bfrom\s+now\s+on,?\s+(?:you\s+(?:must|will|should|shall|are\s+to)|always|never)\b",
        r"\byou\s+are\s+now\s+(?:a|an|the|my|in|no\s+longer|not\s+bound|free|unrestricted|jailbroken|dan"
        r"|acting|operating|running)\b",
        r"\bsystem\s+prompt\b",
        r"\bnew\s+(?:system\s+)?instructions?\s*:",
        # chat-template role tags
        r"<\s*/?\s*(?:system|assistant|developer)\s*>",
        r"\[/?inst\]",
        r"<<\s*/?sys\s*>>",
        r"<\|(?:im_start|im_end|system|user|assistant|endoftext|eot_id|start_header_id|end_header_id)\|>",
        # Chinese
        r"(?:忽略|无视|忘记|忘掉)(?:掉)?(?:所有|全部)?(?:之前|以上|前面|先前|上面|此前|上述)(?:的)?(?:所有|全部)?(?:的)?"
        r"(?:指令|指示|说明|提示|规则|要求)",
        r"从现在(?:开始|起)[,，]?\s*(?:你)?(?:必须|总是|永远|只能|一律)",
        r"你现在(?:是|扮演|充当)(?![在否不吗])",
        r"系统提示词",
    )
)
"""Phrases typical of prompt injection, matched against normalized (NFKC + case-folded) text."""


def looks_like_instruction(text: str) -> bool:
    """True if ``text`` reads like an instruction to the model rather than a fact to remember.

    Used to flag possible memory poisoning; ordinary preferences ("The user always prefers dark
    mode", "从现在开始用户住在上海") are not flagged.
    """
    normalized = normalize(text)
    return any(p.search(normalized) for p in INSTRUCTION_PATTERNS)
