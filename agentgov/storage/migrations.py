"""Versioned schema migrations, applied at start.

`apply_migrations` is idempotent and safe to run twice or from several processes at once: it runs in one
write transaction (SQLite: BEGIN IMMEDIATE; PostgreSQL: under a transaction-scoped advisory lock) and skips
versions already recorded in `schema_migrations`. Migrations are append-only: never edit a released one,
add a new module `agentgov/storage/schema/m<NNNN>_<name>.py`
defining `MIGRATION`. `{blob}`, `{bigint}` and `{real}` in the SQL become the dialect's type names.
"""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil

from agentgov.storage.database import Connection, Database
from agentgov.timeutil import now_iso

_ADVISORY_LOCK_ID = 0x61676F76  # "agov"


@dataclasses.dataclass(frozen=True)
class Migration:
    version: int
    name: str
    statements: tuple[str, ...]


def _discover() -> tuple[Migration, ...]:
    """Every `agentgov/storage/schema/m<version>_<name>.py` module's `MIGRATION`, in version order."""
    from agentgov.storage import schema

    found = []
    for info in pkgutil.iter_modules(schema.__path__):
        if info.name.startswith("m") and info.name[1:5].isdigit():
            module = importlib.import_module(f"{schema.__name__}.{info.name}")
            found.append(module.MIGRATION)
    return tuple(sorted(found, key=lambda m: m.version))


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


async def apply_migrations(db: Database, migrations: tuple[Migration, ...] | None = None) -> list[int]:
    """Apply the pending migrations in order; return the versions applied now (empty if up to date)."""
    if migrations is None:
        migrations = all_migrations()
    versions = [m.version for m in migrations]
    if versions != sorted(set(versions)):
        raise ValueError("migration versions must be unique and increasing")
    types = dict(db.type_names())
    return await db.write(lambda conn: _apply(conn, migrations, types))


async def schema_version(db: Database) -> int:
    """The highest applied migration version (0 if none)."""
    return int(await db.read(lambda conn: conn.scalar("SELECT COALESCE(MAX(version), 0) FROM schema_migrations")))


def all_migrations() -> tuple[Migration, ...]:
    return _discover()
