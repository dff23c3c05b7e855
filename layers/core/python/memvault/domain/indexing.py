"""What of a memory is indexed for keyword search, and how content is hashed for exact dedup."""

from __future__ import annotations

import hashlib
import re
import unicodedata

from memvault.domain.models import Memory
from memvault.domain.text import analyze, date_words

_WS = re.compile(r"\s+")


def content_hash(type_: str, content: str) -> str:
    """sha256 of the type and the normalized content (NFKC, casefolded, whitespace collapsed)."""
    norm = _WS.sub(" ", unicodedata.normalize("NFKC", content).casefold()).strip()
    return hashlib.sha256(f"{type_}\x00{norm}".encode()).hexdigest()


def embedding_text(name: str | None, description: str | None, content: str) -> str:
    """The text a memory is embedded and keyword-indexed by: name, description, content."""
    return "\n".join(p for p in (name, description, content) if p)


def document_text(memory: Memory) -> str:
    return embedding_text(memory.name, memory.description, memory.content)


def document_terms(memory: Memory) -> list[str]:
    """Analyzed keyword terms: name, description, content, tags, entities and the date words of
    ``created_at`` (so "what happened in May 2023" can match by keyword)."""
    terms = analyze(document_text(memory))
    for extra in (*memory.tags, *memory.entities):
        terms.extend(analyze(extra))
    terms.extend(date_words(memory.created_at))
    return terms
