"""User management (Admin within a tenant, Super Admin anywhere) and the caller's own profile.

An Admin sees and changes only its own tenant's users (another tenant's user is a 404), cannot grant
Super Admin, and cannot demote, block or delete the tenant's last active Admin (409). Blocking or deleting a
user revokes their access tokens and API keys at once.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field
from quart import Blueprint
from quart_schema import document_response, tag

from agentgov.http.auth import Scheme, authorize, forget_keys, principal, services
from agentgov.http.errors import ApiError, not_found
from agentgov.http.ids import parse_uuid
from agentgov.http.schemas import DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, Email, RequestModel, UserOut, page
from agentgov.http.siem_events import record_change
from agentgov.http.validation import json_body, query
from agentgov.security import passwords
from agentgov.security.roles import Permission, Role
from agentgov.security.sessions import public_user
from agentgov.storage.identity import Conflict, LastAdmin, NewUser
from agentgov.storage.records import User

bp = Blueprint("users", __name__)
_USER_AUTH = (Scheme.BEARER, Scheme.API_KEY)
TENANT_ROLES = [Role.DEVELOPER.value, Role.SECURITY_ANALYST.value, Role.ADMIN.value]


class UserCreate(RequestModel):
    email: Email
    password: str = Field(max_length=passwords.MAX_LENGTH)
    role: str = Field(default=Role.DEVELOPER.value, description=f"One of {', '.join(TENANT_ROLES)}")
    full_name: str = Field(default="", max_length=200)
    tenant_id: str | None = Field(default=None, description="Super Admin only: the tenant to create the user in")


class UserUpdate(RequestModel):
    email: Email | None = None
    full_name: str | None = Field(default=None, max_length=200)


class RoleChange(RequestModel):
    role: str


class PasswordReset(RequestModel):
    new_password: str = Field(max_length=passwords.MAX_LENGTH)


class PasswordChange(RequestModel):
    current_password: str = Field(max_length=passwords.MAX_LENGTH)
    new_password: str = Field(max_length=passwords.MAX_LENGTH)


class UsersQuery(BaseModel):
    role: str | None = None
    search: str | None = Field(default=None, max_length=200)
    is_active: bool | None = None
    limit: int = Field(default=DEFAULT_PAGE_SIZE, ge=1, le=MAX_PAGE_SIZE)
    offset: int = Field(default=0, ge=0)
    tenant_id: str | None = Field(default=None, description="Super Admin only: whose users to list")


def _tenant_role(text: str, field: str = "role") -> str:
    try:
        role = Role.parse(text)
    except ValueError as exc:
        raise ApiError(422, f"Invalid request body: {field}: {exc}") from None
    if role is Role.SUPER_ADMIN:
        raise ApiError(403, "Forbidden: Super Admin cannot be granted through the API")
    return role.value


def _check_password(password: str, email: str | None, field: str) -> None:
    try:
        passwords.check_policy(password, email)
    except passwords.WeakPassword as exc:
        raise ApiError(
            422,
            f"Invalid request body: {field}: {exc}",
            errors=[{"field": field, "message": str(exc), "type": "weak_password"}],
        ) from None


def _scope() -> str | None:
    """The tenant the caller manages (None: Super Admin, any tenant)."""
    return principal().tenant_id


async def _user_or_404(user_id: str) -> User:
    user_id = parse_uuid(user_id, "user_id")
    user = await services().identity.get_tenant_user(_scope(), user_id)
    if user is None or (user.tenant_id == "" and principal().role is not Role.SUPER_ADMIN):
        raise not_found("User")
    return user


async def _end_access(user_id: str) -> None:
    """End every token and API key of the user at once: the keys are revoked (a new password or a block is
    not undone by an old key) and dropped from the verification cache."""
    svc = services()
    await svc.tokens.revoke_user(user_id)
    await forget_keys(svc, await svc.identity.revoke_user_keys(user_id))


# -- own profile -------------------------------------------------------------------------------------


async def _me() -> User:
    who = principal()
    if who.user_id is None:
        raise ApiError(403, "Only a user has a profile; log in or use a user API key")
    user = await services().identity.get_user(who.user_id)
    if user is None:
        raise ApiError(401, "The user no longer exists")
    return user


@bp.get("/users/me")
@authorize(*_USER_AUTH, permission=Permission.PROFILE_SELF, tenant_scoped=False)
@tag(["users"])
@document_response(UserOut)
async def get_me() -> dict[str, Any]:
    """Own profile."""
    return public_user(await _me())


@bp.put("/users/me")
@authorize(*_USER_AUTH, permission=Permission.PROFILE_SELF, tenant_scoped=False)
@tag(["users"])
@json_body(UserUpdate)
@document_response(UserOut)
async def update_me(data: UserUpdate) -> dict[str, Any]:
    """Update own email and/or full name."""
    user = await _me()
    try:
        updated = await services().identity.update_user(user.id, email=data.email, full_name=data.full_name)
    except Conflict as exc:
        raise ApiError(409, str(exc)) from None
    return public_user(updated)


@bp.post("/users/me/change-password")
@authorize(*_USER_AUTH, permission=Permission.PROFILE_SELF, tenant_scoped=False)
@tag(["users"])
@json_body(PasswordChange)
async def change_password(data: PasswordChange) -> tuple[str, int]:
    """Change own password (the current one is required). Every session of the user ends; log in again."""
    user = await _me()
    if not user.password_hash or not await passwords.verify_password(user.password_hash, data.current_password):
        raise ApiError(403, "Current password is wrong")
    _check_password(data.new_password, user.email, "new_password")
    await services().identity.set_password_hash(user.id, await passwords.hash_password(data.new_password))
    await _end_access(user.id)
    record_change(user.tenant_id, "user.password_changed", f"{user.email} changed their password", user_id=user.id)
    return "", 204


# -- administration ------------------------------------------------------------------------------------


@bp.post("/users")
@authorize(*_USER_AUTH, permission=Permission.USERS_MANAGE, tenant_scoped=False)
@tag(["users"])
@json_body(UserCreate)
@document_response(UserOut, 201)
async def create_user(data: UserCreate) -> tuple[dict[str, Any], int]:
    """Create a user in the caller's tenant (Super Admin: in `tenant_id`)."""
    svc = services()
    tenant = _scope()
    if tenant is None:
        if not data.tenant_id or await svc.identity.get_tenant(data.tenant_id) is None:
            raise ApiError(422, "Invalid request body: tenant_id: a Super Admin must name an existing tenant")
        tenant = data.tenant_id
    elif data.tenant_id not in (None, tenant):
        raise ApiError(403, "Forbidden: an Admin creates users in its own tenant only")
    role = _tenant_role(data.role)
    _check_password(data.password, data.email, "password")
    new = NewUser(
        email=data.email,
        role=role,
        password_hash=await passwords.hash_password(data.password),
        full_name=data.full_name,
    )
    try:
        user = await svc.identity.create_user(tenant, new)
    except Conflict as exc:
        raise ApiError(409, str(exc)) from None
    record_change(tenant, "user.created", f"user {user.email} created as {user.role}", user_id=user.id, role=user.role)
    return public_user(user), 201


@bp.get("/users")
@authorize(*_USER_AUTH, permission=Permission.USERS_MANAGE, tenant_scoped=False)
@tag(["users"])
@query(UsersQuery)
async def list_users(query: UsersQuery) -> dict[str, Any]:
    """List users, filtered by role, search (email or name), is_active; `limit` at most 200."""
    tenant = _scope() or query.tenant_id
    if tenant is None:
        raise ApiError(422, "Invalid query parameters: tenant_id: a Super Admin must name the tenant")
    if _scope() is not None and query.tenant_id not in (None, tenant):
        raise ApiError(403, "Forbidden: an Admin lists its own tenant's users only")
    role = None if query.role is None else _tenant_role(query.role, "role")
    users, total = await services().identity.list_users(
        tenant, role=role, search=query.search, is_active=query.is_active, limit=query.limit, offset=query.offset
    )
    return page([public_user(u) for u in users], total, query.limit, query.offset)


@bp.get("/users/<user_id>")
@authorize(*_USER_AUTH, permission=Permission.USERS_MANAGE, tenant_scoped=False)
@tag(["users"])
@document_response(UserOut)
async def get_user(user_id: str) -> dict[str, Any]:
    return public_user(await _user_or_404(user_id))


@bp.put("/users/<user_id>")
@authorize(*_USER_AUTH, permission=Permission.USERS_MANAGE, tenant_scoped=False)
@tag(["users"])
@json_body(UserUpdate)
@document_response(UserOut)
async def update_user(user_id: str, data: UserUpdate) -> dict[str, Any]:
    user = await _user_or_404(user_id)
    try:
        updated = await services().identity.update_user(user.id, email=data.email, full_name=data.full_name)
    except Conflict as exc:
        raise ApiError(409, str(exc)) from None
    record_change(user.tenant_id, "user.updated", f"user {updated.email} updated", user_id=user.id)
    return public_user(updated)


@bp.post("/users/<user_id>/reset-password")
@authorize(*_USER_AUTH, permission=Permission.USERS_MANAGE, tenant_scoped=False)
@tag(["users"])
@json_body(PasswordReset)
async def reset_password(user_id: str, data: PasswordReset) -> tuple[str, int]:
    """Set a new password for a user; their sessions end."""
    user = await _user_or_404(user_id)
    _check_password(data.new_password, user.email, "new_password")
    await services().identity.set_password_hash(user.id, await passwords.hash_password(data.new_password))
    await _end_access(user.id)
    record_change(user.tenant_id, "user.password_reset", f"password of {user.email} reset", user_id=user.id)
    return "", 204


async def _change(user_id: str, *, role: str | None = None, is_active: bool | None = None) -> dict[str, Any]:
    user = await _user_or_404(user_id)
    try:
        updated = await services().identity.change_user(user.id, role=role, is_active=is_active)
    except LastAdmin as exc:
        raise ApiError(409, f"Conflict: {exc}; make another user Admin first") from None
    if is_active is False:
        await _end_access(user.id)
    else:
        await forget_keys(services(), await services().identity.key_ids_of_user(user.id))
    if role is not None:
        name, summary = "user.role_changed", f"role of {user.email} changed from {user.role} to {role}"
    else:
        name = "user.blocked" if is_active is False else "user.unblocked"
        summary = f"user {user.email} {name.split('.')[1]}"
    record_change(user.tenant_id, name, summary, user_id=user.id, role=updated.role, is_active=updated.is_active)
    return public_user(updated)


@bp.put("/users/<user_id>/role")
@authorize(*_USER_AUTH, permission=Permission.USERS_MANAGE, tenant_scoped=False)
@tag(["users"])
@json_body(RoleChange)
@document_response(UserOut)
async def change_role(user_id: str, data: RoleChange) -> dict[str, Any]:
    """Change a user's role (Developer, Security Analyst, Admin)."""
    return await _change(user_id, role=_tenant_role(data.role))


@bp.post("/users/<user_id>/block")
@authorize(*_USER_AUTH, permission=Permission.USERS_MANAGE, tenant_scoped=False)
@tag(["users"])
@document_response(UserOut)
async def block_user(user_id: str) -> dict[str, Any]:
    """Block a user: they cannot log in and their tokens and keys stop working at once."""
    return await _change(user_id, is_active=False)


@bp.post("/users/<user_id>/unblock")
@authorize(*_USER_AUTH, permission=Permission.USERS_MANAGE, tenant_scoped=False)
@tag(["users"])
@document_response(UserOut)
async def unblock_user(user_id: str) -> dict[str, Any]:
    """Unblock a user: they can log in again. API keys the block revoked stay revoked."""
    return await _change(user_id, is_active=True)


@bp.delete("/users/<user_id>")
@authorize(*_USER_AUTH, permission=Permission.USERS_MANAGE, tenant_scoped=False)
@tag(["users"])
async def delete_user(user_id: str) -> tuple[str, int]:
    """Delete a user and revoke their keys and tokens."""
    user = await _user_or_404(user_id)
    svc = services()
    try:
        keys = await svc.identity.delete_user(user.id)
    except LastAdmin as exc:
        raise ApiError(409, f"Conflict: {exc}; make another user Admin first") from None
    await svc.tokens.revoke_user(user.id)
    await forget_keys(svc, keys)
    record_change(user.tenant_id, "user.deleted", f"user {user.email} deleted", user_id=user.id, keys_revoked=len(keys))
    return "", 204
