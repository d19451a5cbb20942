"""Login sessions: what a successful password or SSO login returns.

A session is a JWT access token plus a session API key bound to the same user, role and lifetime. Logging out
revokes both at once (see `end_session`).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from agentgov.security import api_keys
from agentgov.services import Services
from agentgov.storage.identity import NewApiKey
from agentgov.storage.records import User
from agentgov.timeutil import now, to_iso


def public_user(user: User) -> dict[str, Any]:
    """The user profile as the API shows it (never the password hash)."""
    return {
        "id": user.id,
        "tenant_id": user.tenant_id or None,
        "email": user.email,
        "full_name": user.full_name,
        "role": user.role,
        "is_active": user.is_active,
        "created_at": user.created_at,
        "updated_at": user.updated_at,
        "last_login_at": user.last_login_at,
    }


async def create_session(services: Services, user: User) -> dict[str, Any]:
    """Issue a token and a session key for `user` and record the login; return the login response."""
    ttl = services.settings.access_token_ttl
    key = api_keys.generate()
    await services.identity.create_api_key(
        user.tenant_id,
        NewApiKey(
            id=key.key_id,
            secret_hash=key.secret_hash,
            kind="session",
            name="login session",
            role=user.role,
            user_id=user.id,
            expires_at=to_iso(now() + timedelta(seconds=ttl)),
        ),
    )
    token = services.tokens.issue(
        user_id=user.id, tenant_id=user.tenant_id or None, role=user.role, session_key_id=key.key_id
    )
    logged_in = await services.identity.record_login(user.id)
    return {
        "access_token": token.token,
        "token_type": "bearer",
        "expires_in": token.expires_in,
        "user": public_user(logged_in or user),
        "api_key": key.raw,
    }
