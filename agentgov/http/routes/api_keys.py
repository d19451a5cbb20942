"""A user's own API keys: create (raw key shown once), list, revoke."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, Field
from quart import Blueprint
from quart_schema import document_response, tag

from agentgov.http.auth import Scheme, authorize, forget_keys, principal, services
from agentgov.http.errors import ApiError, not_found
from agentgov.http.schemas import DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, RequestModel, bounded_name, page
from agentgov.http.siem_events import record_change
from agentgov.http.validation import json_body, query
from agentgov.security import api_keys
from agentgov.security.roles import Permission, Role
from agentgov.storage.identity import NewApiKey
from agentgov.storage.records import ApiKey
from agentgov.timeutil import now, to_iso

bp = Blueprint("api_keys", __name__)
_AUTH = (Scheme.BEARER, Scheme.API_KEY)


class ApiKeyCreate(RequestModel):
    name: bounded_name(100)  # type: ignore[valid-type]
    role: str | None = Field(default=None, description="At most the caller's role; defaults to it")
    expires_at: datetime | None = Field(default=None, description="ISO-8601 time; must be in the future")


class ApiKeyOut(BaseModel):
    id: str
    prefix: str
    name: str
    role: str
    created_at: str
    last_used_at: str | None
    expires_at: str | None
    revoked_at: str | None


class ApiKeyCreated(ApiKeyOut):
    api_key: str = Field(description="The raw key. Shown once; store it now.")


class KeysQuery(BaseModel):
    limit: int = Field(default=DEFAULT_PAGE_SIZE, ge=1, le=MAX_PAGE_SIZE)
    offset: int = Field(default=0, ge=0)


def _public(key: ApiKey) -> dict[str, Any]:
    return {
        "id": key.id,
        "prefix": api_keys.PREFIX + key.id,
        "name": key.name,
        "role": key.role,
        "created_at": key.created_at,
        "last_used_at": key.last_used_at,
        "expires_at": key.expires_at,
        "revoked_at": key.revoked_at,
    }


def _user_id() -> str:
    who = principal()
    if who.user_id is None:
        raise ApiError(403, "API keys belong to users: log in (or use a user key) to manage them")
    return who.user_id


@bp.post("/api-keys")
@authorize(*_AUTH, permission=Permission.API_KEYS_OWN)
@tag(["api-keys"])
@json_body(ApiKeyCreate)
@document_response(ApiKeyCreated, 201)
async def create_key(data: ApiKeyCreate) -> tuple[dict[str, Any], int]:
    """Create a key for the caller, with a role no higher than the caller's. The raw key is returned once."""
    who = principal()
    user_id = _user_id()
    role = who.role
    if data.role is not None:
        try:
            role = Role.parse(data.role)
        except ValueError as exc:
            raise ApiError(422, f"Invalid request body: role: {exc}") from None
        if role.rank > who.role.rank:
            raise ApiError(403, f"Forbidden: a key's role cannot exceed yours ({who.role.value})")
    expires_at = None
    if data.expires_at is not None:
        moment = data.expires_at if data.expires_at.tzinfo else data.expires_at.replace(tzinfo=UTC)
        if moment <= now():
            raise ApiError(422, "Invalid request body: expires_at: must be in the future")
        expires_at = to_iso(moment)
    key = api_keys.generate()
    stored = await services().identity.create_api_key(
        who.tenant_id or "",
        NewApiKey(
            id=key.key_id,
            secret_hash=key.secret_hash,
            kind="user",
            name=data.name,
            role=role.value,
            user_id=user_id,
            expires_at=expires_at,
        ),
    )
    record_change(
        who.tenant_id, "api_key.created", f"API key {data.name!r} created", key_id=stored.id, role=stored.role
    )
    return {**_public(stored), "api_key": key.raw}, 201


@bp.get("/api-keys")
@authorize(*_AUTH, permission=Permission.API_KEYS_OWN)
@tag(["api-keys"])
@query(KeysQuery)
async def list_keys(query: KeysQuery) -> dict[str, Any]:
    """The caller's keys (never the raw key or its hash), newest first."""
    keys, total = await services().identity.list_user_keys(_user_id(), limit=query.limit, offset=query.offset)
    return page([_public(k) for k in keys], total, query.limit, query.offset)


@bp.delete("/api-keys/<key_id>")
@authorize(*_AUTH, permission=Permission.API_KEYS_OWN)
@tag(["api-keys"])
async def revoke_key(key_id: str) -> tuple[str, int]:
    """Revoke one of the caller's keys; it stops working at once. Another user's key is a 404."""
    user_id = _user_id()
    if key_id.startswith(api_keys.PREFIX):
        key_id = key_id[len(api_keys.PREFIX) :]
    if len(key_id) != 16 or not key_id.isalnum():
        raise ApiError(422, "Invalid path: key_id must be the 16-character key id (or its agk_ prefix)")
    svc = services()
    key = await svc.identity.get_api_key(key_id)
    if key is None or key.user_id != user_id or key.kind != "user":
        raise not_found("API key")
    await svc.identity.revoke_api_key(key_id)
    await forget_keys(svc, [key_id])
    record_change(key.tenant_id, "api_key.revoked", f"API key {key.name!r} revoked", key_id=key_id)
    return "", 204
