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


class LastAdmin(Conflict):
    """The change would leave the tenant without an active Admin."""


_ADMIN = "Admin"


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
        row = await self.db.read(lambda c: c.fetchone("SELECT * FROM tenants WHERE id = :id", {"id": tenant_id}))
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
        row = await self.db.read(lambda c: c.fetchone("SELECT * FROM api_keys WHERE id = :id", {"id": key_id}))
        return None if row is None else ApiKey.from_row(row)

    async def create_api_key(self, tenant_id: str, new: NewApiKey) -> ApiKey:
        return await self.db.write(lambda c: _insert_key(c, tenant_id, new))

    async def touch_api_key(self, key_id: str) -> None:
        await self.db.write(
            lambda c: c.execute("UPDATE api_keys SET last_used_at = :t WHERE id = :id", {"t": now_iso(), "id": key_id})
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

    # -- users -------------------------------------------------------------------------------------

    async def get_tenant_user(self, tenant_id: str | None, user_id: str) -> User | None:
        """The user if it belongs to `tenant_id` (any tenant when None, for Super Admin)."""
        user = await self.get_user(user_id)
        if user is None or (tenant_id is not None and user.tenant_id != tenant_id):
            return None
        return user

    async def users_by_email(self, email: str) -> list[User]:
        """Every user with this email (case-insensitive), in any tenant, oldest first."""
        rows = await self.db.read(
            lambda c: c.fetchall(
                "SELECT * FROM users WHERE email_key = :e ORDER BY created_at, id", {"e": email.strip().lower()}
            )
        )
        return [User.from_row(r) for r in rows]

    async def list_users(
        self,
        tenant_id: str,
        *,
        role: str | None,
        search: str | None,
        is_active: bool | None,
        limit: int,
        offset: int,
    ) -> tuple[list[User], int]:
        where = ["tenant_id = :tenant"]
        params: dict[str, object] = {"tenant": tenant_id, "limit": limit, "offset": offset}
        if role is not None:
            where.append("role = :role")
            params["role"] = role
        if is_active is not None:
            where.append("is_active = :active")
            params["active"] = int(is_active)
        if search:
            where.append("(email_key LIKE :q OR LOWER(full_name) LIKE :q)")
            escaped = search.lower().replace("\\", "").replace("%", "").replace("_", "")
            params["q"] = f"%{escaped}%"
        clause = " AND ".join(where)

        def run(conn: Connection) -> tuple[list[User], int]:
            rows = conn.fetchall(
                f"SELECT * FROM users WHERE {clause} ORDER BY created_at, id LIMIT :limit OFFSET :offset", params
            )
            total = conn.scalar(f"SELECT COUNT(*) FROM users WHERE {clause}", params)
            return [User.from_row(r) for r in rows], int(total)

        return await self.db.read(run)

    async def update_user(self, user_id: str, *, email: str | None = None, full_name: str | None = None) -> User:
        """Change profile fields. Raises `Conflict` if the new email is taken in the tenant."""

        def run(conn: Connection) -> User:
            updates = {"updated_at": now_iso()}
            if email is not None:
                updates["email"] = email.strip()
                updates["email_key"] = email.strip().lower()
            if full_name is not None:
                updates["full_name"] = full_name
            sets = ", ".join(f"{k} = :{k}" for k in updates)
            try:
                conn.execute(f"UPDATE users SET {sets} WHERE id = :id", {**updates, "id": user_id})
            except IntegrityError:
                raise Conflict(f"a user with email {email!r} already exists in this tenant") from None
            return User.from_row(conn.fetchone("SELECT * FROM users WHERE id = :id", {"id": user_id}) or {})

        return await self.db.write(run)

    async def set_password_hash(self, user_id: str, password_hash: str) -> None:
        await self.db.write(
            lambda c: c.execute(
                "UPDATE users SET password_hash = :h, updated_at = :t WHERE id = :id",
                {"h": password_hash, "t": now_iso(), "id": user_id},
            )
        )

    def _check_not_last_admin(self, conn: Connection, user: User) -> None:
        if user.role != _ADMIN or not user.is_active:
            return
        others = conn.scalar(
            "SELECT COUNT(*) FROM users WHERE tenant_id = :t AND role = :r AND is_active = 1 AND id <> :id",
            {"t": user.tenant_id, "r": _ADMIN, "id": user.id},
        )
        if int(others) == 0:
            raise LastAdmin("this is the last active Admin of the tenant")

    async def change_user(self, user_id: str, *, role: str | None = None, is_active: bool | None = None) -> User:
        """Change role and/or active flag atomically. Raises `LastAdmin` if no active Admin would remain.

        Blocking (`is_active=False`) also revokes every API key of the user in the same transaction, so
        unblocking later restores login but not the keys the block ended (the user creates new ones). The
        caller still drops the keys from the verification cache and revokes the user's tokens.
        """

        def run(conn: Connection) -> User:
            row = conn.fetchone("SELECT * FROM users WHERE id = :id", {"id": user_id})
            if row is None:
                raise KeyError(user_id)
            user = User.from_row(row)
            loses_admin = (role is not None and role != _ADMIN) or is_active is False
            if loses_admin:
                self._check_not_last_admin(conn, user)
            conn.execute(
                "UPDATE users SET role = :role, is_active = :active, updated_at = :t WHERE id = :id",
                {
                    "role": role if role is not None else user.role,
                    "active": int(is_active if is_active is not None else user.is_active),
                    "t": now_iso(),
                    "id": user_id,
                },
            )
            if is_active is False:
                conn.execute(
                    "UPDATE api_keys SET revoked_at = :t WHERE user_id = :id AND revoked_at IS NULL",
                    {"t": now_iso(), "id": user_id},
                )
            if role is not None:
                conn.execute(
                    "UPDATE api_keys SET role = :role WHERE user_id = :id AND kind = 'session'",
                    {"role": role, "id": user_id},
                )
            return User.from_row(conn.fetchone("SELECT * FROM users WHERE id = :id", {"id": user_id}) or {})

        return await self.db.write(run)

    async def delete_user(self, user_id: str) -> list[str]:
        """Delete the user and revoke their keys; return the revoked key ids. Raises `LastAdmin`."""

        def run(conn: Connection) -> list[str]:
            row = conn.fetchone("SELECT * FROM users WHERE id = :id", {"id": user_id})
            if row is None:
                raise KeyError(user_id)
            self._check_not_last_admin(conn, User.from_row(row))
            keys = [r["id"] for r in conn.fetchall("SELECT id FROM api_keys WHERE user_id = :id", {"id": user_id})]
            conn.execute(
                "UPDATE api_keys SET revoked_at = :t WHERE user_id = :id AND revoked_at IS NULL",
                {"t": now_iso(), "id": user_id},
            )
            conn.execute("DELETE FROM users WHERE id = :id", {"id": user_id})
            return keys

        return await self.db.write(run)

    async def revoke_user_keys(self, user_id: str) -> list[str]:
        """Revoke every API key of the user (their own and their sessions'); return all their key ids."""

        def run(conn: Connection) -> list[str]:
            conn.execute(
                "UPDATE api_keys SET revoked_at = :t WHERE user_id = :id AND revoked_at IS NULL",
                {"t": now_iso(), "id": user_id},
            )
            return [r["id"] for r in conn.fetchall("SELECT id FROM api_keys WHERE user_id = :id", {"id": user_id})]

        return await self.db.write(run)

    async def key_ids_of_user(self, user_id: str) -> list[str]:
        rows = await self.db.read(lambda c: c.fetchall("SELECT id FROM api_keys WHERE user_id = :id", {"id": user_id}))
        return [r["id"] for r in rows]

    # -- api keys ----------------------------------------------------------------------------------

    async def list_user_keys(self, user_id: str, *, limit: int, offset: int) -> tuple[list[ApiKey], int]:
        """The user's own (non-session) keys, newest first."""

        def run(conn: Connection) -> tuple[list[ApiKey], int]:
            params = {"u": user_id, "limit": limit, "offset": offset}
            rows = conn.fetchall(
                "SELECT * FROM api_keys WHERE user_id = :u AND kind = 'user'"
                " ORDER BY created_at DESC, id LIMIT :limit OFFSET :offset",
                params,
            )
            total = conn.scalar("SELECT COUNT(*) FROM api_keys WHERE user_id = :u AND kind = 'user'", params)
            return [ApiKey.from_row(r) for r in rows], int(total)

        return await self.db.read(run)

    async def revoke_api_key(self, key_id: str) -> None:
        await self.db.write(
            lambda c: c.execute(
                "UPDATE api_keys SET revoked_at = :t WHERE id = :id AND revoked_at IS NULL",
                {"t": now_iso(), "id": key_id},
            )
        )

    # -- platform ----------------------------------------------------------------------------------

    async def ensure_superadmin(self, email: str, password_hash: str) -> tuple[User, bool]:
        """Create the platform Super Admin `email` unless it exists; return (user, created)."""
        for user in await self.users_by_email(email):
            if user.tenant_id == "" and user.role == "Super Admin":
                return user, False
        user = await self.create_user("", NewUser(email=email, role="Super Admin", password_hash=password_hash))
        return user, True

    async def get_tenant_by_name(self, name: str) -> Tenant | None:
        """The tenant named `name` (case-insensitive, surrounding spaces ignored)."""
        row = await self.db.read(
            lambda c: c.fetchone("SELECT * FROM tenants WHERE name_key = :k", {"k": name.strip().casefold()})
        )
        return None if row is None else Tenant.from_row(row)
