"""Roles, permissions and the one permission matrix every route goes through.

Roles are ordered: Developer < Security Analyst < Admin < Super Admin. "Developer+" means Developer and
every role above it; "Security Analyst+" means Security Analyst, Admin and Super Admin. Super Admin is
platform-wide (not bound to a tenant); the other roles act inside one tenant.
"""

from __future__ import annotations

import enum


class Role(enum.Enum):
    DEVELOPER = "Developer"
    SECURITY_ANALYST = "Security Analyst"
    ADMIN = "Admin"
    SUPER_ADMIN = "Super Admin"

    @property
    def rank(self) -> int:
        return _ORDER.index(self)

    def at_least(self, other: Role) -> bool:
        return self.rank >= other.rank

    @classmethod
    def parse(cls, text: str) -> Role:
        """Accept the display name ("Security Analyst") or a snake/kebab form ("security_analyst").

        Raises `ValueError` naming the allowed values.
        """
        wanted = text.strip().lower().replace("_", " ").replace("-", " ")
        for role in cls:
            if role.value.lower() == wanted:
                return role
        raise ValueError(f"unknown role {text!r}; expected one of: {', '.join(r.value for r in cls)}")


_ORDER = [Role.DEVELOPER, Role.SECURITY_ANALYST, Role.ADMIN, Role.SUPER_ADMIN]


class Permission(enum.Enum):
    STATUS_READ = "status:read"
    AGENTS_READ = "agents:read"
    AGENTS_WRITE = "agents:write"
    AGENTS_UPDATE = "agents:update"
    POLICIES_READ = "policies:read"
    POLICIES_WRITE = "policies:write"
    POLICIES_CHECK = "policies:check"
    AUDIT_READ = "audit:read"
    AUDIT_WRITE = "audit:write"
    AUDIT_EXPORT = "audit:export"
    AUDIT_VERIFY = "audit:verify"
    ANOMALIES_READ = "anomalies:read"
    ANOMALIES_REPORT = "anomalies:report"
    ANOMALIES_MANAGE = "anomalies:manage"
    HITL_READ = "hitl:read"
    HITL_REQUEST = "hitl:request"
    HITL_DECIDE = "hitl:decide"
    GUARD_USE = "guard:use"
    GUARD_MANAGE = "guard:manage"
    STATS_READ = "stats:read"
    USERS_MANAGE = "users:manage"
    PROFILE_SELF = "profile:self"
    API_KEYS_OWN = "api_keys:own"
    TENANTS_LIST = "tenants:list"
    TENANTS_CREATE = "tenants:create"
    SIEM_MANAGE = "siem:manage"


#: The lowest role that holds each permission (every higher role holds it too).
MINIMUM_ROLE: dict[Permission, Role] = {
    Permission.STATUS_READ: Role.DEVELOPER,
    Permission.AGENTS_READ: Role.DEVELOPER,
    Permission.AGENTS_WRITE: Role.DEVELOPER,
    Permission.AGENTS_UPDATE: Role.DEVELOPER,
    Permission.POLICIES_READ: Role.DEVELOPER,
    Permission.POLICIES_WRITE: Role.ADMIN,
    Permission.POLICIES_CHECK: Role.DEVELOPER,
    Permission.AUDIT_READ: Role.DEVELOPER,
    Permission.AUDIT_WRITE: Role.DEVELOPER,
    Permission.AUDIT_EXPORT: Role.SECURITY_ANALYST,
    Permission.AUDIT_VERIFY: Role.SECURITY_ANALYST,
    Permission.ANOMALIES_READ: Role.SECURITY_ANALYST,
    Permission.ANOMALIES_REPORT: Role.DEVELOPER,
    Permission.ANOMALIES_MANAGE: Role.ADMIN,
    Permission.HITL_READ: Role.DEVELOPER,
    Permission.HITL_REQUEST: Role.DEVELOPER,
    Permission.HITL_DECIDE: Role.SECURITY_ANALYST,
    Permission.GUARD_USE: Role.DEVELOPER,
    Permission.GUARD_MANAGE: Role.SECURITY_ANALYST,
    Permission.STATS_READ: Role.DEVELOPER,
    Permission.USERS_MANAGE: Role.ADMIN,
    Permission.PROFILE_SELF: Role.DEVELOPER,
    Permission.API_KEYS_OWN: Role.DEVELOPER,
    Permission.TENANTS_LIST: Role.SUPER_ADMIN,
    Permission.TENANTS_CREATE: Role.SUPER_ADMIN,
    Permission.SIEM_MANAGE: Role.SUPER_ADMIN,
}


def has_permission(role: Role, permission: Permission) -> bool:
    return role.at_least(MINIMUM_ROLE[permission])


def permissions_of(role: Role) -> list[Permission]:
    return [p for p in Permission if has_permission(role, p)]
