"""Versioned schema migrations, applied at start.

`apply_migrations` is idempotent and safe to run twice or from several processes at once: it runs in one
write transaction (SQLite: BEGIN IMMEDIATE; PostgreSQL: under a transaction-scoped advisory lock) and skips
versions already recorded in `schema_migrations`. Migrations are append-only: never edit a released one,
add a new version. `{blob}`, `{bigint}` and `{real}` in the SQL are replaced by the dialect's type names.
"""

from __future__ import annotations

import dataclasses

from agentgov.storage.database import Connection, Database
from agentgov.timeutil import now_iso

_ADVISORY_LOCK_ID = 0x61676F76  # "agov"


@dataclasses.dataclass(frozen=True)
class Migration:
    version: int
    name: str
    statements: tuple[str, ...]


MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "tenants, users and api keys",
        (
            """CREATE TABLE tenants (
                id TEXT PRIMARY KEY,
                name TEXT NOT NULL,
                name_key TEXT NOT NULL UNIQUE,
                settings TEXT NOT NULL DEFAULT '{}',
                created_at TEXT NOT NULL
            )""",
            """CREATE TABLE users (
                id TEXT PRIMARY KEY,
                tenant_id TEXT NOT NULL,
                email TEXT NOT NULL,
                email_key TEXT NOT NULL,
                full_name TEXT NOT NULL DEFAULT '',
                password_hash TEXT,
                role TEXT NOT NULL,
                is_active INTEGER NOT NULL DEFAULT 1,
                created_at TEXT NOT NULL,
                updated_at TEXT NOT NULL,
                last_login_at TEXT,
                UNIQUE (tenant_id, email_key)
            )""",
            "CREATE INDEX users_email_key ON users (email_key)",
            """CREATE TABLE api_keys (
                id TEXT PRIMARY KEY,
                tenant_id TEXT NOT NULL,
                user_id TEXT,
                kind TEXT NOT NULL,
                name TEXT NOT NULL,
                role TEXT NOT NULL,
                secret_hash TEXT NOT NULL,
                created_at TEXT NOT NULL,
                last_used_at TEXT,
                expires_at TEXT,
                revoked_at TEXT
            )""",
            "CREATE INDEX api_keys_tenant ON api_keys (tenant_id)",
            "CREATE INDEX api_keys_user ON api_keys (user_id)",
        ),
    ),
)


def _with_types(statement: str, types: dict[str, str]) -> str:
    for name, sql_type in types.items():
        statement = statement.replace("{" + name + "}", sql_type)
    return statement


def _apply(conn: Connection, migrations: tuple[Migration, ...], types: dict[str, str]) -> list[int]:
    if conn.dialect == "postgres":
        conn.execute("SELECT pg_advisory_xact_lock(:lock)", {"lock": _ADVISORY_LOCK_ID})
    conn.execute(
        """CREATE TABLE IF NOT EXISTS schema_migrations (
            version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"""
    )
    done = {row["version"] for row in conn.fetchall("SELECT version FROM schema_migrations")}
    applied = []
    for migration in migrations:
        if migration.version in done:
            continue
        for statement in migration.statements:
            conn.execute(_with_types(statement, types))
        conn.execute(
            "INSERT INTO schema_migrations (version, name, applied_at) VALUES (:v, :n, :t)",
            {"v": migration.version, "n": migration.name, "t": now_iso()},
        )
        applied.append(migration.version)
    return applied


async def apply_migrations(db: Database, migrations: tuple[Migration, ...] = MIGRATIONS) -> list[int]:
    """Apply the pending migrations in order; return the versions applied now (empty if up to date)."""
    versions = [m.version for m in migrations]
    if versions != sorted(set(versions)):
        raise ValueError("migration versions must be unique and increasing")
    types = dict(db.type_names())
    return await db.write(lambda conn: _apply(conn, migrations, types))


async def schema_version(db: Database) -> int:
    """The highest applied migration version (0 if none)."""
    return int(await db.read(lambda conn: conn.scalar("SELECT COALESCE(MAX(version), 0) FROM schema_migrations")))
