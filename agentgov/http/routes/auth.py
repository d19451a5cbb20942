"""Password login, logout and the current user."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field
from quart import Blueprint, Response, request
from quart_schema import document_response, tag

from agentgov.http.auth import Scheme, authorize, forget_keys, principal, public, services
from agentgov.http.errors import ApiError
from agentgov.http.schemas import RequestModel, UserOut
from agentgov.http.validation import json_body
from agentgov.security import passwords, throttle
from agentgov.security.principal import PrincipalKind
from agentgov.security.roles import Permission, Role, permissions_of
from agentgov.security.sessions import create_session, public_user
from agentgov.siem import outbox as siem
from agentgov.siem.events import login_failure
from agentgov.storage.records import User

bp = Blueprint("auth", __name__)

INVALID_LOGIN = "Invalid email or password"


class LoginRequest(RequestModel):
    email: str = Field(min_length=1, max_length=254)
    password: str = Field(min_length=1, max_length=passwords.MAX_LENGTH)
    tenant: str | None = Field(
        default=None, description="Tenant id or name; needed only when the email exists in several tenants"
    )


class LoginResponse(BaseModel):
    access_token: str
    token_type: str
    expires_in: int
    user: UserOut
    api_key: str


async def _candidates(email: str, tenant: str | None) -> list[User]:
    svc = services()
    users = await svc.identity.users_by_email(email)
    if tenant is None:
        return users
    wanted = tenant.strip().casefold()
    matching = []
    for user in users:
        if user.tenant_id == tenant:
            matching.append(user)
            continue
        record = await svc.identity.get_tenant(user.tenant_id) if user.tenant_id else None
        if record is not None and record.name.casefold() == wanted:
            matching.append(user)
    return matching


@bp.post("/auth/login")
@public
@tag(["auth"])
@json_body(LoginRequest)
@document_response(LoginResponse)
async def login(data: LoginRequest) -> Response | dict[str, Any]:
    """Log in with email and password; returns an access token and a session API key.

    Failed attempts are throttled per account and per client address (429 with Retry-After). The error
    never says whether the email exists.
    """
    svc = services()
    address = request.remote_addr or "unknown"
    try:
        await throttle.check(svc.cache, data.email, address)
    except throttle.Throttled as exc:
        siem.record(svc, login_failure("", data.email, address, "throttled"))
        raise ApiError(
            429, "Too many failed logins; try again later", headers={"Retry-After": str(exc.retry_after)}
        ) from None
    verified: list[User] = []
    candidates = await _candidates(data.email, data.tenant)
    for user in candidates:
        if user.password_hash and await passwords.verify_password(user.password_hash, data.password):
            verified.append(user)
    if not verified:
        await passwords.verify_password(passwords.DUMMY_HASH, data.password)  # equal timing for unknown emails
        await throttle.record_failure(svc.cache, data.email, address)
        tenant = (candidates[0].tenant_id or "") if len(candidates) == 1 else ""
        siem.record(svc, login_failure(tenant, data.email, address, "invalid credentials"))
        raise ApiError(401, INVALID_LOGIN)
    if len(verified) > 1:
        raise ApiError(422, "This email exists in several tenants: send 'tenant' (its id or name) as well")
    user = verified[0]
    if not user.is_active:
        await throttle.record_failure(svc.cache, data.email, address)
        siem.record(svc, login_failure(user.tenant_id or "", data.email, address, "inactive user"))
        raise ApiError(401, INVALID_LOGIN)
    await throttle.record_success(svc.cache, data.email, address)
    return await create_session(svc, user)


@bp.post("/auth/logout")
@authorize(Scheme.BEARER, permission=Permission.PROFILE_SELF, tenant_scoped=False)
@tag(["auth"])
async def logout() -> tuple[str, int]:
    """End the session: the access token and its session API key stop working at once, on every process."""
    svc = services()
    who = principal()
    if who.token_id is not None:
        claims = await svc.tokens.verify(_bearer_token())
        await svc.tokens.revoke(claims)
    if who.key_id is not None:
        await svc.identity.revoke_api_key(who.key_id)
        await forget_keys(svc, [who.key_id])
    return "", 204


def _bearer_token() -> str:
    return request.headers.get("Authorization", "").partition(" ")[2].strip()


@bp.get("/auth/me")
@authorize(Scheme.BEARER, permission=Permission.PROFILE_SELF, tenant_scoped=False)
@tag(["auth"])
async def me() -> dict[str, Any]:
    """The current user's profile, tenant and permissions."""
    who = principal()
    if who.kind is not PrincipalKind.USER_TOKEN or who.user_id is None:
        raise ApiError(403, "Only a logged-in user has a profile")
    user = await services().identity.get_user(who.user_id)
    if user is None:
        raise ApiError(401, "Invalid access token: the user no longer exists")
    return {**public_user(user), "permissions": [p.value for p in permissions_of(Role(user.role))]}
