"""System clock and ULID ids (the production implementations of Clock and IdFactory)."""

from __future__ import annotations

from datetime import UTC, datetime

from ulid import ULID


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)


class UlidFactory:
    def new_id(self, at: datetime) -> str:
        return str(ULID.from_datetime(at))
