"""Tenants, login sessions, users and API keys."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from urllib.parse import urlencode

from agentgov_client._core import ClientCore
from agentgov_client._flow import Call, Flow
from agentgov_client._ops._common import (
    DEFAULT_PAGE_SIZE,
    UNSET,
    Pager,
    body,
    changes,
    iso_time,
    model,
    nothing,
    page_of,
    page_query,
    raw_object,
    seg,
)
from agentgov_client.models import ApiKey, CreatedApiKey, CreatedTenant, LoginResult, Page, Tenant, User

# -- tenants -------------------------------------------------------------------------------------------


def create_tenant(
    core: ClientCore, name: str, *, admin_email: str | None = None, admin_password: str | None = None
) -> Flow[CreatedTenant]:
    """``POST /tenants`` with the provisioning key (``admin_key``): a tenant, optionally with its first Admin
    user (give `admin_email` and `admin_password` together). The answer carries the tenant's API key, shown
    once. Raises `AuthenticationError` without a valid admin key, `ConflictError` for a taken name,
    `ValidationError` (e.g. a weak password). Not retried."""
    payload = body(name=name, admin_email=admin_email, admin_password=admin_password)
    return core.execute(Call("POST", "/tenants", model(CreatedTenant), json=payload, auth="admin"))


def list_tenants(core: ClientCore, *, limit: int = 50, offset: int = 0) -> Flow[Page[Tenant]]:
    """``GET /tenants`` (Super Admin): every tenant, oldest first. Raises `PermissionDeniedError` for anyone
    else. Retried."""
    return core.execute(Call("GET", "/tenants", page_of(Tenant), params=page_query("offset", offset, limit)))


def iter_tenants(core: ClientCore, *, page_size: int = DEFAULT_PAGE_SIZE) -> Pager[Tenant]:
    """Every tenant, page after page (see `list_tenants`)."""
    return Pager(lambda offset, limit: list_tenants(core, limit=limit, offset=offset), page_size)


# -- sessions ------------------------------------------------------------------------------------------


def login(
    core: ClientCore, email: str, password: str, *, tenant: str | None = None, use_session: bool = True
) -> Flow[LoginResult]:
    """``POST /auth/login``: an access token and a session API key. With `use_session` (default) the client
    sends them on every later request (until `logout`). `tenant` (id or name) is needed only when the email
    and password match users of several tenants. Raises `AuthenticationError` (wrong email or password, or a
    blocked user), `RateLimitError` after repeated failures (`retry_after`), `ValidationError`. Not retried."""
    result: LoginResult = yield from core.execute(
        Call("POST", "/auth/login", model(LoginResult), json=body(email=email, password=password, tenant=tenant))
    )
    if use_session:
        core.use_session(result.access_token, result.api_key)
    return result


def sso_providers(core: ClientCore) -> Flow[list[dict[str, Any]]]:
    """``GET /auth/sso/providers``: the identity providers the service knows (``id``, ``name``, ``enabled``).
    Retried."""
    answer: dict[str, Any] = yield from core.execute(Call("GET", "/auth/sso/providers", raw_object))
    return list(answer.get("providers") or [])


def sso_login_url(core: ClientCore, provider: str, *, redirect: str | None = None, tenant: str | None = None) -> str:
    """The ``GET /auth/sso/login`` URL to open in the user's browser (the sign-in is a browser flow: the
    service redirects to the provider, then to your frontend with a one-time ``sso_code``). No request."""
    query = urlencode({k: v for k, v in {"provider": provider, "redirect": redirect, "tenant": tenant}.items() if v})
    return f"{core.base_url}/api/v1/auth/sso/login?{query}"


def sso_exchange(core: ClientCore, code: str, *, use_session: bool = True) -> Flow[LoginResult]:
    """``POST /auth/sso/exchange``: trade the one-time ``sso_code`` of a finished single sign-on for a login
    session (as `login`, and used the same way with `use_session`). Raises `AuthenticationError` or
    `ValidationError` for a code that is unknown, used or expired. Not retried."""
    result: LoginResult = yield from core.execute(
        Call("POST", "/auth/sso/exchange", model(LoginResult), json=body(code=code))
    )
    if use_session:
        core.use_session(result.access_token, result.api_key)
    return result


def logout(core: ClientCore) -> Flow[None]:
    """``POST /auth/logout`` (bearer token): end the session; its token and session key stop working at once.
    The client stops sending the credentials `login` gave it. Not retried."""
    yield from core.execute(Call("POST", "/auth/logout", nothing))
    core.forget_session()


def me(core: ClientCore) -> Flow[User]:
    """``GET /auth/me`` (bearer token): the logged-in user's profile with its `permissions`. Retried."""
    return core.execute(Call("GET", "/auth/me", model(User)))


# -- own profile ---------------------------------------------------------------------------------------


def get_my_profile(core: ClientCore) -> Flow[User]:
    """``GET /users/me`` (a user's token or API key): own profile. Retried."""
    return core.execute(Call("GET", "/users/me", model(User)))


def update_my_profile(core: ClientCore, *, email: str | None = None, full_name: str | None = None) -> Flow[User]:
    """``PUT /users/me``: change own email and/or full name. Raises `ConflictError` for a taken email."""
    return core.execute(Call("PUT", "/users/me", model(User), json=body(email=email, full_name=full_name)))


def change_password(core: ClientCore, current_password: str, new_password: str) -> Flow[None]:
    """``POST /users/me/change-password``: every session of the user ends (log in again). Raises
    `PermissionDeniedError` when `current_password` is wrong, `ValidationError` for a weak new one."""
    payload = {"current_password": current_password, "new_password": new_password}
    return core.execute(Call("POST", "/users/me/change-password", nothing, json=payload))


# -- users (Admin) ---------------------------------------------------------------------------------------


def create_user(
    core: ClientCore,
    email: str,
    password: str,
    *,
    role: str = "Developer",
    full_name: str = "",
    tenant_id: str | None = None,
) -> Flow[User]:
    """``POST /users`` (Admin; Super Admin names `tenant_id`): a user with `role` Developer, Security Analyst
    or Admin. Raises `ConflictError` for an email taken in the tenant, `ValidationError` for a weak password,
    `PermissionDeniedError` for Super Admin. Not retried."""
    payload = body(email=email, password=password, role=role, full_name=full_name, tenant_id=tenant_id)
    return core.execute(Call("POST", "/users", model(User), json=payload))


def list_users(
    core: ClientCore,
    *,
    role: str | None = None,
    search: str | None = None,
    is_active: bool | None = None,
    tenant_id: str | None = None,
    limit: int = 50,
    offset: int = 0,
) -> Flow[Page[User]]:
    """``GET /users`` (Admin): the tenant's users, filtered by role, search (email or name) and is_active."""
    query = page_query("offset", offset, limit, role=role, search=search, is_active=is_active, tenant_id=tenant_id)
    return core.execute(Call("GET", "/users", page_of(User), params=query))


def iter_users(
    core: ClientCore,
    *,
    role: str | None = None,
    search: str | None = None,
    is_active: bool | None = None,
    tenant_id: str | None = None,
    page_size: int = DEFAULT_PAGE_SIZE,
) -> Pager[User]:
    """Every user matching the filters, page after page (see `list_users`)."""
    return Pager(
        lambda offset, limit: list_users(
            core, role=role, search=search, is_active=is_active, tenant_id=tenant_id, limit=limit, offset=offset
        ),
        page_size,
    )


def get_user(core: ClientCore, user_id: str) -> Flow[User]:
    """``GET /users/{id}`` (Admin). Raises `NotFoundError` (also for another tenant's user). Retried."""
    return core.execute(Call("GET", f"/users/{seg(user_id)}", model(User)))


def update_user(core: ClientCore, user_id: str, *, email: Any = UNSET, full_name: Any = UNSET) -> Flow[User]:
    """``PUT /users/{id}`` (Admin): change email and/or full name. Raises `ConflictError` for a taken email."""
    payload = changes(email=email, full_name=full_name)
    return core.execute(Call("PUT", f"/users/{seg(user_id)}", model(User), json=payload))


def reset_password(core: ClientCore, user_id: str, new_password: str) -> Flow[None]:
    """``POST /users/{id}/reset-password`` (Admin): the user's sessions end."""
    payload = {"new_password": new_password}
    return core.execute(Call("POST", f"/users/{seg(user_id)}/reset-password", nothing, json=payload))


def set_user_role(core: ClientCore, user_id: str, role: str) -> Flow[User]:
    """``PUT /users/{id}/role`` (Admin): Developer, Security Analyst or Admin. Raises `ConflictError` when
    it would demote the tenant's last active Admin, `PermissionDeniedError` for Super Admin."""
    return core.execute(Call("PUT", f"/users/{seg(user_id)}/role", model(User), json={"role": role}))


def block_user(core: ClientCore, user_id: str) -> Flow[User]:
    """``POST /users/{id}/block`` (Admin): the user cannot log in; their tokens and keys stop working (for
    good). Raises `ConflictError` for the last active Admin."""
    return core.execute(Call("POST", f"/users/{seg(user_id)}/block", model(User)))


def unblock_user(core: ClientCore, user_id: str) -> Flow[User]:
    """``POST /users/{id}/unblock`` (Admin): the user can log in again."""
    return core.execute(Call("POST", f"/users/{seg(user_id)}/unblock", model(User)))


def delete_user(core: ClientCore, user_id: str) -> Flow[None]:
    """``DELETE /users/{id}`` (Admin). Raises `ConflictError` for the last active Admin. Not retried."""
    return core.execute(Call("DELETE", f"/users/{seg(user_id)}", nothing))


# -- API keys ------------------------------------------------------------------------------------------


def create_api_key(
    core: ClientCore, name: str, *, role: str | None = None, expires_at: datetime | str | None = None
) -> Flow[CreatedApiKey]:
    """``POST /api-keys`` (a user): a key acting with `role` (at most the caller's; default the caller's),
    optionally expiring. The raw key (`api_key`) is shown once. Raises `PermissionDeniedError` for a role
    above the caller's or a caller that is not a user (a tenant key). Not retried."""
    payload = body(name=name, role=role, expires_at=iso_time(expires_at))
    return core.execute(Call("POST", "/api-keys", model(CreatedApiKey), json=payload))


def list_api_keys(core: ClientCore, *, limit: int = 50, offset: int = 0) -> Flow[Page[ApiKey]]:
    """``GET /api-keys``: the caller's keys, newest first (never their secrets). Retried."""
    return core.execute(Call("GET", "/api-keys", page_of(ApiKey), params=page_query("offset", offset, limit)))


def iter_api_keys(core: ClientCore, *, page_size: int = DEFAULT_PAGE_SIZE) -> Pager[ApiKey]:
    """Every key of the caller, page after page (see `list_api_keys`)."""
    return Pager(lambda offset, limit: list_api_keys(core, limit=limit, offset=offset), page_size)


def revoke_api_key(core: ClientCore, key_id: str) -> Flow[None]:
    """``DELETE /api-keys/{id}`` (the id or its ``agk_`` prefix): the key stops working at once. Raises
    `NotFoundError` for another user's key. Not retried."""
    return core.execute(Call("DELETE", f"/api-keys/{seg(key_id)}", nothing))
