"""Plain records returned by the repositories."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from agentgov.storage.database import Row


@dataclasses.dataclass(frozen=True)
class Tenant:
    id: str
    name: str
    created_at: str
    settings: dict[str, Any]

    @classmethod
    def from_row(cls, row: Row) -> Tenant:
        return cls(id=row["id"], name=row["name"], created_at=row["created_at"], settings=json.loads(row["settings"]))


@dataclasses.dataclass(frozen=True)
class User:
    id: str
    tenant_id: str
    email: str
    full_name: str
    role: str
    is_active: bool
    created_at: str
    updated_at: str
    last_login_at: str | None
    password_hash: str | None = dataclasses.field(repr=False, default=None)

    @classmethod
    def from_row(cls, row: Row) -> User:
        return cls(
            id=row["id"],
            tenant_id=row["tenant_id"],
            email=row["email"],
            full_name=row["full_name"],
            role=row["role"],
            is_active=bool(row["is_active"]),
            created_at=row["created_at"],
            updated_at=row["updated_at"],
            last_login_at=row["last_login_at"],
            password_hash=row["password_hash"],
        )


@dataclasses.dataclass(frozen=True)
class ApiKey:
    id: str
    tenant_id: str
    user_id: str | None
    kind: str
    name: str
    role: str
    secret_hash: str = dataclasses.field(repr=False)
    created_at: str
    last_used_at: str | None
    expires_at: str | None
    revoked_at: str | None

    @classmethod
    def from_row(cls, row: Row) -> ApiKey:
        return cls(**{f.name: row[f.name] for f in dataclasses.fields(cls)})
