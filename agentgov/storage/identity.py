"""Tenants, users and API keys."""

from __future__ import annotations

import dataclasses
import json
import uuid

from agentgov.storage.database import Connection, Database, IntegrityError
from agentgov.storage.records import ApiKey, Tenant, User
from agentgov.timeutil import now_iso


class Conflict(Exception):
    """A uniqueness rule was broken; the message says which."""


@dataclasses.dataclass(frozen=True)
class NewUser:
    email: str
    role: str
    password_hash: str | None
    full_name: str = ""


@dataclasses.dataclass(frozen=True)
class NewApiKey:
    id: str
    secret_hash: str
    kind: str
    name: str
    role: str
    user_id: str | None = None
    expires_at: str | None = None


def _insert_user(conn: Connection, tenant_id: str, new: NewUser) -> User:
    now = now_iso()
    row = {
        "id": str(uuid.uuid4()),
        "tenant_id": tenant_id,
        "email": new.email.strip(),
        "email_key": new.email.strip().lower(),
        "full_name": new.full_name,
        "password_hash": new.password_hash,
        "role": new.role,
        "is_active": 1,
        "created_at": now,
        "updated_at": now,
        "last_login_at": None,
    }
    try:
        conn.execute(
            """INSERT INTO users (id, tenant_id, email, email_key, full_name, password_hash, role, is_active,
                   created_at, updated_at, last_login_at)
               VALUES (:id, :tenant_id, :email, :email_key, :full_name, :password_hash, :role, :is_active,
                   :created_at, :updated_at, :last_login_at)""",
            row,
        )
    except IntegrityError:
        raise Conflict(f"a user with email {new.email!r} already exists in this tenant") from None
    return User.from_row(row)


def _insert_key(conn: Connection, tenant_id: str, new: NewApiKey) -> ApiKey:
    row = {
        **dataclasses.asdict(new),
        "tenant_id": tenant_id,
        "created_at": now_iso(),
        "last_used_at": None,
        "revoked_at": None,
    }
    conn.execute(
        """INSERT INTO api_keys (id, tenant_id, user_id, kind, name, role, secret_hash, created_at,
               last_used_at, expires_at, revoked_at)
           VALUES (:id, :tenant_id, :user_id, :kind, :name, :role, :secret_hash, :created_at,
               :last_used_at, :expires_at, :revoked_at)""",
        row,
    )
    return ApiKey.from_row(row)


class IdentityRepo:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def create_tenant(
        self, name: str, tenant_key: NewApiKey, admin: NewUser | None = None
    ) -> tuple[Tenant, User | None]:
        """Create a tenant with its tenant key and optional first Admin, atomically.

        Raises `Conflict` if a tenant with the same name (case-insensitive) exists.
        """

        def run(conn: Connection) -> tuple[Tenant, User | None]:
            row = {
                "id": str(uuid.uuid4()),
                "name": name.strip(),
                "name_key": name.strip().casefold(),
                "settings": "{}",
                "created_at": now_iso(),
            }
            try:
                conn.execute(
                    "INSERT INTO tenants (id, name, name_key, settings, created_at)"
                    " VALUES (:id, :name, :name_key, :settings, :created_at)",
                    row,
                )
            except IntegrityError:
                raise Conflict(f"a tenant named {name.strip()!r} already exists") from None
            _insert_key(conn, row["id"], tenant_key)
            user = _insert_user(conn, row["id"], admin) if admin else None
            return Tenant.from_row(row), user

        return await self.db.write(run)

    async def get_tenant(self, tenant_id: str) -> Tenant | None:
        row = await self.db.read(
            lambda c: c.fetchone("SELECT * FROM tenants WHERE id = :id", {"id": tenant_id})
        )
        return None if row is None else Tenant.from_row(row)

    async def list_tenants(self, limit: int, offset: int) -> tuple[list[Tenant], int]:
        def run(conn: Connection) -> tuple[list[Tenant], int]:
            rows = conn.fetchall(
                "SELECT * FROM tenants ORDER BY created_at, id LIMIT :limit OFFSET :offset",
                {"limit": limit, "offset": offset},
            )
            total = conn.scalar("SELECT COUNT(*) FROM tenants")
            return [Tenant.from_row(r) for r in rows], int(total)

        return await self.db.read(run)

    async def update_tenant_settings(self, tenant_id: str, settings: dict[str, object]) -> None:
        await self.db.write(
            lambda c: c.execute(
                "UPDATE tenants SET settings = :s WHERE id = :id",
                {"s": json.dumps(settings), "id": tenant_id},
            )
        )

    async def get_api_key(self, key_id: str) -> ApiKey | None:
        row = await self.db.read(
            lambda c: c.fetchone("SELECT * FROM api_keys WHERE id = :id", {"id": key_id})
        )
        return None if row is None else ApiKey.from_row(row)

    async def create_api_key(self, tenant_id: str, new: NewApiKey) -> ApiKey:
        return await self.db.write(lambda c: _insert_key(c, tenant_id, new))

    async def touch_api_key(self, key_id: str) -> None:
        await self.db.write(
            lambda c: c.execute(
                "UPDATE api_keys SET last_used_at = :t WHERE id = :id", {"t": now_iso(), "id": key_id}
            )
        )

    async def create_user(self, tenant_id: str, new: NewUser) -> User:
        """Raises `Conflict` if the email (case-insensitive) is taken in the tenant."""
        return await self.db.write(lambda c: _insert_user(c, tenant_id, new))

    async def record_login(self, user_id: str) -> User | None:
        """Set the user's last login time; return the updated user."""

        def run(conn: Connection) -> User | None:
            conn.execute("UPDATE users SET last_login_at = :t WHERE id = :id", {"t": now_iso(), "id": user_id})
            row = conn.fetchone("SELECT * FROM users WHERE id = :id", {"id": user_id})
            return None if row is None else User.from_row(row)

        return await self.db.write(run)

    async def get_user(self, user_id: str) -> User | None:
        row = await self.db.read(lambda c: c.fetchone("SELECT * FROM users WHERE id = :id", {"id": user_id}))
        return None if row is None else User.from_row(row)
