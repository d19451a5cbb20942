"""Who is calling: the resolved identity of a request."""

from __future__ import annotations

import dataclasses
import enum

from agentgov.security.roles import Permission, Role, has_permission


class PrincipalKind(enum.Enum):
    ADMIN_KEY = "admin_key"
    TENANT_KEY = "tenant_key"
    USER_KEY = "user_key"
    SESSION_KEY = "session_key"
    USER_TOKEN = "user_token"


@dataclasses.dataclass(frozen=True)
class Principal:
    kind: PrincipalKind
    role: Role
    tenant_id: str | None = None
    user_id: str | None = None
    key_id: str | None = None
    token_id: str | None = None

    def can(self, permission: Permission) -> bool:
        return has_permission(self.role, permission)

    @property
    def actor_label(self) -> str:
        """How audit records name this principal."""
        if self.user_id:
            return f"user:{self.user_id}"
        if self.key_id:
            return f"key:{self.key_id}"
        return self.kind.value
