"""Tenants: creation with the admin provisioning key."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field, model_validator
from quart import Blueprint
from quart_schema import document_response, tag

from agentgov.http.auth import Scheme, authorize, services
from agentgov.http.errors import ApiError
from agentgov.http.schemas import DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, Email, RequestModel, bounded_name, page
from agentgov.http.siem_events import record_change
from agentgov.http.validation import json_body, query
from agentgov.security import api_keys, passwords
from agentgov.security.roles import Permission, Role
from agentgov.storage.identity import Conflict, NewApiKey, NewUser

bp = Blueprint("tenants", __name__)


class TenantCreate(RequestModel):
    name: bounded_name(100)  # type: ignore[valid-type]
    admin_email: Email | None = None
    admin_password: str | None = None

    @model_validator(mode="after")
    def _pair(self) -> TenantCreate:
        if (self.admin_email is None) != (self.admin_password is None):
            raise ValueError("admin_email and admin_password must be given together")
        return self


class TenantOut(BaseModel):
    id: str
    name: str
    created_at: str


class TenantCreated(TenantOut):
    api_key: str = Field(description="The tenant's API key (Admin role). Shown once; store it now.")
    admin_user_id: str | None = None


@bp.post("/tenants")
@authorize(Scheme.ADMIN_KEY, permission=Permission.TENANTS_CREATE, tenant_scoped=False)
@tag(["tenants"])
@json_body(TenantCreate)
@document_response(TenantCreated, 201)
async def create_tenant(data: TenantCreate) -> tuple[dict[str, Any], int]:
    """Create a tenant (and optionally its first Admin user); returns its API key once."""
    admin = None
    if data.admin_email is not None and data.admin_password is not None:
        try:
            passwords.check_policy(data.admin_password, data.admin_email)
        except passwords.WeakPassword as exc:
            raise ApiError(
                422,
                f"Invalid request body: admin_password: {exc}",
                errors=[{"field": "admin_password", "message": str(exc), "type": "weak_password"}],
            ) from None
        admin = NewUser(
            email=data.admin_email,
            role=Role.ADMIN.value,
            password_hash=await passwords.hash_password(data.admin_password),
        )
    key = api_keys.generate()
    try:
        tenant, user = await services().identity.create_tenant(
            data.name,
            NewApiKey(
                id=key.key_id,
                secret_hash=key.secret_hash,
                kind="tenant",
                name="tenant key",
                role=Role.ADMIN.value,
            ),
            admin,
        )
    except Conflict as exc:
        raise ApiError(409, str(exc)) from None
    record_change(tenant.id, "tenant.created", f"tenant {tenant.name!r} created", first_admin=bool(user))
    body = TenantCreated(
        id=tenant.id,
        name=tenant.name,
        created_at=tenant.created_at,
        api_key=key.raw,
        admin_user_id=user.id if user else None,
    )
    return body.model_dump(), 201


class TenantsQuery(BaseModel):
    limit: int = Field(default=DEFAULT_PAGE_SIZE, ge=1, le=MAX_PAGE_SIZE)
    offset: int = Field(default=0, ge=0)


@bp.get("/tenants")
@authorize(Scheme.BEARER, Scheme.API_KEY, permission=Permission.TENANTS_LIST, tenant_scoped=False)
@tag(["tenants"])
@query(TenantsQuery)
async def list_tenants(query: TenantsQuery) -> dict[str, Any]:
    """All tenants (Super Admin only), oldest first."""
    tenants, total = await services().identity.list_tenants(query.limit, query.offset)
    items = [TenantOut(id=t.id, name=t.name, created_at=t.created_at).model_dump() for t in tenants]
    return page(items, total, query.limit, query.offset)
