"""Domain errors. Each carries a machine-readable ``code``; the API maps classes to HTTP in one table."""

from __future__ import annotations


class MemvaultError(Exception):
    """Base class of every error memvault raises on purpose."""

    code = "error"

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field

    def to_dict(self) -> dict[str, str]:
        body = {"code": self.code, "message": self.message}
        if self.field:
            body["field"] = self.field
        return body


class ValidationError(MemvaultError):
    """The input breaks a rule (size, count, format, unknown value)."""

    code = "validation_error"


class NotFoundError(MemvaultError):
    """No such memory in the caller's scope (also returned for another scope's ids)."""

    code = "not_found"


class VersionConflictError(MemvaultError):
    """The memory changed since the version the caller read (optimistic concurrency)."""

    code = "version_conflict"


class IdempotencyConflictError(MemvaultError):
    """The idempotency key was already used with a different request body."""

    code = "idempotency_conflict"


class ForbiddenError(MemvaultError):
    """The caller is authenticated but not allowed to do this."""

    code = "forbidden"


class PoisoningRejectedError(MemvaultError):
    """The content looks like an instruction and the deployment rejects such writes."""

    code = "instruction_like_content"


class UnavailableError(MemvaultError):
    """A dependency is down and no degraded path exists for this call."""

    code = "unavailable"
