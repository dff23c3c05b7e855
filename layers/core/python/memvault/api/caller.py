"""Who is calling: tenant, allowed agents, roles and clearance, as put in the request context by
the authenticator (the Lambda authorizer on AWS, the API-key middleware of the local server)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from memvault.domain.errors import ForbiddenError, ValidationError
from memvault.domain.models import Scope, SecurityLevel, valid_id

ROLES = ("read", "write", "admin")


@dataclass(frozen=True)
class Caller:
    tenant_id: str
    agents: tuple[str, ...] | None  # None: every agent of the tenant
    roles: tuple[str, ...]
    clearance: SecurityLevel

    def require(self, role: str) -> None:
        if role not in self.roles and "admin" not in self.roles:
            raise ForbiddenError(f"this key lacks the {role!r} role")

    def scope(self, agent_id: str | None, user_id: str | None) -> Scope:
        if not agent_id:
            raise ValidationError("agent_id: required", field="agent_id")
        if not valid_id(agent_id):
            raise ValidationError("agent_id: invalid id", field="agent_id")
        if user_id and not valid_id(user_id):
            raise ValidationError("user_id: invalid id", field="user_id")
        if self.agents is not None and agent_id not in self.agents:
            raise ForbiddenError(f"this key may not act for agent {agent_id!r}", field="agent_id")
        return Scope(tenant_id=self.tenant_id, agent_id=agent_id, user_id=user_id or "")

    def to_context(self) -> dict[str, str]:
        """The flat string map an API Gateway authorizer context carries."""
        return {
            "tenant_id": self.tenant_id,
            "agents": "*" if self.agents is None else ",".join(self.agents),
            "roles": ",".join(self.roles),
            "clearance": self.clearance.value,
        }

    @classmethod
    def from_context(cls, ctx: dict[str, Any] | None) -> Caller:
        if not ctx or not ctx.get("tenant_id"):
            raise ForbiddenError("no authenticated caller in the request context")
        agents = str(ctx.get("agents", "*"))
        return cls(
            tenant_id=str(ctx["tenant_id"]),
            agents=None if agents == "*" else tuple(a for a in agents.split(",") if a),
            roles=tuple(r for r in str(ctx.get("roles", "")).split(",") if r),
            clearance=SecurityLevel(str(ctx.get("clearance", "internal"))),
        )
