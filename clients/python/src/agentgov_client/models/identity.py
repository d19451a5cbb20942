"""Tenants, users, API keys and login sessions."""

from __future__ import annotations

from dataclasses import dataclass, field

from agentgov_client.models._base import Model


@dataclass(frozen=True)
class Tenant(Model):
    id: str
    name: str
    created_at: str


@dataclass(frozen=True)
class CreatedTenant(Tenant):
    """A new tenant: `api_key` (the tenant's Admin key) is shown once; store it now."""

    api_key: str = field(repr=False)
    admin_user_id: str | None = None


@dataclass(frozen=True)
class User(Model):
    """A user profile. `permissions` is filled by `me()` only. `tenant_id` is None for the Super Admin."""

    id: str
    email: str
    role: str
    tenant_id: str | None = None
    full_name: str = ""
    is_active: bool = True
    created_at: str | None = None
    updated_at: str | None = None
    last_login_at: str | None = None
    permissions: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ApiKey(Model):
    """A user's API key (never its secret). `prefix` is how the key starts (``agk_<id>``)."""

    id: str
    name: str
    role: str
    prefix: str = ""
    created_at: str | None = None
    last_used_at: str | None = None
    expires_at: str | None = None
    revoked_at: str | None = None


@dataclass(frozen=True)
class CreatedApiKey(ApiKey):
    """A new API key: `api_key` is the raw key, shown once; store it now."""

    api_key: str = field(default="", repr=False)


@dataclass(frozen=True)
class LoginResult(Model):
    """A login: a bearer `access_token` (valid `expires_in` seconds), a session `api_key` and the `user`."""

    access_token: str = field(repr=False)
    api_key: str = field(repr=False)
    user: User
    token_type: str = "bearer"
    expires_in: int = 0

    _nested = {"user": User.from_json}
