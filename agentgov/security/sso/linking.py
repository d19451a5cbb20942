"""Linking a verified identity to a user: the tenant hint, existing accounts, and just-in-time creation."""

from __future__ import annotations

import logging

from agentgov.logs import fields
from agentgov.security.roles import Role
from agentgov.security.sso.providers import (
    JIT_ROLES,
    SsoError,
)
from agentgov.security.sso.records import (
    VerifiedIdentity,
)
from agentgov.storage.identity import Conflict, IdentityRepo, NewUser
from agentgov.storage.records import Tenant, User

log = logging.getLogger("agentgov.sso")

# --------------------------------------------------------------------------- linking


async def find_tenant(identity_repo: IdentityRepo, hint: str) -> Tenant | None:
    """The tenant named by `hint`: its id or, case-insensitively, its name."""
    return await identity_repo.get_tenant(hint.strip()) or await identity_repo.get_tenant_by_name(hint)


def _jit_role(tenant: Tenant, email: str) -> Role:
    """The role a first sign-in gets in `tenant`. Raises `SsoError` 403 when the tenant does not allow it."""
    settings = tenant.settings or {}
    role_name = settings.get("sso_jit_role")
    if not role_name:
        raise SsoError(403, f"No account for {email} in this tenant; ask an administrator to create it")
    try:
        role = Role.parse(str(role_name))
    except ValueError:
        role = Role.SUPER_ADMIN
    if role not in JIT_ROLES:
        raise SsoError(403, "This tenant's sso_jit_role is not a tenant role; ask an administrator to fix it")
    domains = settings.get("sso_jit_domains") or []
    domain = email.rsplit("@", 1)[1].lower()
    if not isinstance(domains, list) or not ("*" in domains or domain in {str(d).lower() for d in domains}):
        raise SsoError(403, f"No account for {email} in this tenant, and its domain may not sign up by SSO")
    return role


async def link_account(identity_repo: IdentityRepo, identity: VerifiedIdentity, tenant_hint: str | None) -> User:
    """The tenant user the verified identity signs in as, provisioning it just in time if allowed.

    `tenant_hint` (a tenant id or name) limits the search to that tenant; a hint that names no tenant is
    answered like an unknown account, so the public routes never reveal which tenants exist.
    Raises `SsoError` 403 (no account and no provisioning, or blocked), 409 (several tenants, no hint).
    """
    tenant: Tenant | None = None
    if tenant_hint is not None:
        tenant = await find_tenant(identity_repo, tenant_hint)
        if tenant is None:
            raise SsoError(403, f"No account for {identity.email} in this tenant; ask an administrator to create it")
    users = [u for u in await identity_repo.users_by_email(identity.email) if u.tenant_id]
    if tenant is not None:
        users = [u for u in users if u.tenant_id == tenant.id]
    if len(users) > 1:
        raise SsoError(
            409,
            f"{identity.email} has accounts in several tenants; start the sign-in again with tenant=<id or name>",
        )
    if users:
        user: User = users[0]
    elif tenant is None:
        raise SsoError(403, f"No account for {identity.email}; ask your administrator to create one")
    else:
        role = _jit_role(tenant, identity.email)
        try:
            user = await identity_repo.create_user(
                tenant.id,
                NewUser(email=identity.email, role=role.value, password_hash=None, full_name=identity.name),
            )
            log.info("sso account provisioned", extra=fields(tenant_id=tenant.id, provider=identity.provider))
        except Conflict:  # a concurrent first sign-in created it
            user = next(u for u in await identity_repo.users_by_email(identity.email) if u.tenant_id == tenant.id)
    if not user.is_active:
        raise SsoError(403, "This account is blocked")
    return user
