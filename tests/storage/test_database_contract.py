"""One contract, run unchanged against every database backend (SQLite and PostgreSQL)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agentgov.storage import open_database
from agentgov.storage.database import Connection, Database, DatabaseError, IntegrityError, QueryError
from agentgov.storage.identity import Conflict, IdentityRepo, NewApiKey, NewUser
from agentgov.storage.migrations import Migration, all_migrations, apply_migrations, schema_version
from tests.support.backends import postgres_database


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def empty_database_url(request: pytest.FixtureRequest, tmp_path) -> Iterator[str]:
    """A database with no schema at all (test databases are otherwise copies of a migrated template)."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'empty.db'}"
    else:
        with postgres_database(migrated=False) as url:
            yield url


async def test_empty_database_gets_every_migration(empty_database_url: str) -> None:
    database = await open_database(empty_database_url)
    try:
        assert await schema_version(database) == all_migrations()[-1].version
        applied = await database.read(lambda c: c.fetchall("SELECT version FROM schema_migrations ORDER BY version"))
        assert [row["version"] for row in applied] == [m.version for m in all_migrations()]
    finally:
        await database.close()


async def test_migrations_are_applied_once(db: Database) -> None:
    assert await schema_version(db) == all_migrations()[-1].version
    assert await apply_migrations(db) == []
    assert await apply_migrations(db) == []


async def test_new_migration_is_applied_in_order(db: Database) -> None:
    extra = (
        *all_migrations(),
        Migration(9999, "scratch", ("CREATE TABLE scratch (id TEXT PRIMARY KEY, b {blob})",)),
    )
    assert await apply_migrations(db, extra) == [9999]
    assert await apply_migrations(db, extra) == []
    assert await schema_version(db) == 9999


async def test_migration_versions_must_increase(db: Database) -> None:
    with pytest.raises(ValueError, match="increasing"):
        await apply_migrations(db, (Migration(2, "b", ()), Migration(1, "a", ())))


async def test_write_commits_and_read_sees_it(db: Database) -> None:
    def insert(conn: Connection) -> int:
        return conn.execute(
            "INSERT INTO tenants (id, name, name_key, settings, created_at) VALUES (:id, :n, :k, '{}', 't')",
            {"id": "t1", "n": "One", "k": "one"},
        )

    assert await db.write(insert) == 1
    row = await db.read(lambda c: c.fetchone("SELECT id, name FROM tenants WHERE id = :id", {"id": "t1"}))
    assert row == {"id": "t1", "name": "One"}


async def test_failed_write_rolls_back(db: Database) -> None:
    def insert_then_fail(conn: Connection) -> None:
        conn.execute(
            "INSERT INTO tenants (id, name, name_key, settings, created_at) VALUES ('t2', 'Two', 'two', '{}', 't')"
        )
        raise RuntimeError("abort")

    with pytest.raises(RuntimeError, match="abort"):
        await db.write(insert_then_fail)
    assert await db.read(lambda c: c.scalar("SELECT COUNT(*) FROM tenants")) == 0


async def test_constraint_violation_is_integrity_error(db: Database) -> None:
    sql = "INSERT INTO tenants (id, name, name_key, settings, created_at) VALUES (:id, 'N', 'n', '{}', 't')"
    await db.write(lambda c: c.execute(sql, {"id": "a"}))
    with pytest.raises(IntegrityError):
        await db.write(lambda c: c.execute(sql, {"id": "b"}))


@pytest.mark.parametrize(
    "sql",
    [
        "SELEC 1",  # a typo
        "SELECT * FROM no_such_table",
        "SELECT no_such_column FROM tenants",
        "SELECT :missing",  # a parameter never bound
    ],
)
@pytest.mark.parametrize("mode", ["read", "write"])
async def test_a_failing_statement_is_a_query_error_not_unavailability(db: Database, sql: str, mode: str) -> None:
    run = db.read if mode == "read" else db.write
    with pytest.raises(QueryError) as caught:
        await run(lambda c: c.fetchall(sql))
    assert not isinstance(caught.value, DatabaseError)
    assert await db.read(lambda c: c.scalar("SELECT 1")) == 1  # the connection is still usable


async def test_integrity_errors_are_query_errors_not_unavailability(db: Database) -> None:
    sql = "INSERT INTO tenants (id, name, name_key, settings, created_at) VALUES ('a', 'N', 'n', '{}', 't')"
    await db.write(lambda c: c.execute(sql))
    with pytest.raises(IntegrityError) as caught:
        await db.write(lambda c: c.execute(sql))
    assert isinstance(caught.value, QueryError) and not isinstance(caught.value, DatabaseError)


async def test_executemany_and_percent_literals(db: Database) -> None:
    rows = [{"id": f"id{i}", "n": f"100% tenant {i}", "k": f"k{i}"} for i in range(5)]
    await db.write(
        lambda c: c.executemany(
            "INSERT INTO tenants (id, name, name_key, settings, created_at) VALUES (:id, :n, :k, '{}', 't')",
            rows,
        )
    )
    names = await db.read(lambda c: c.fetchall("SELECT name FROM tenants WHERE name LIKE '100%' ORDER BY id"))
    assert [r["name"] for r in names] == [r["n"] for r in rows]


async def test_closed_database_raises(database_url: str) -> None:
    database = await open_database(database_url)
    await database.close()
    with pytest.raises(DatabaseError):
        await database.ping()


async def test_identity_repo_tenants_keys_and_users(db: Database) -> None:
    repo = IdentityRepo(db)
    key = NewApiKey(id="k" * 16, secret_hash="h", kind="tenant", name="tenant key", role="Admin")
    admin = NewUser(email="Admin@Example.com", role="Admin", password_hash="x")
    tenant, user = await repo.create_tenant("Acme", key, admin)
    assert tenant.name == "Acme" and user is not None and user.email == "Admin@Example.com"
    assert (await repo.get_tenant(tenant.id)) == tenant
    stored = await repo.get_api_key("k" * 16)
    assert stored is not None and stored.tenant_id == tenant.id and stored.revoked_at is None

    with pytest.raises(Conflict, match="already exists"):
        await repo.create_tenant("ACME", NewApiKey(id="j" * 16, secret_hash="h", kind="tenant", name="t", role="Admin"))
    assert await repo.get_api_key("j" * 16) is None  # the failed creation left nothing behind

    with pytest.raises(Conflict, match="email"):
        await repo.create_user(tenant.id, NewUser(email="admin@example.COM", role="Developer", password_hash=None))
    other, _ = await repo.create_tenant(
        "Other", NewApiKey(id="o" * 16, secret_hash="h", kind="tenant", name="t", role="Admin")
    )
    same_email = await repo.create_user(
        other.id, NewUser(email="admin@example.com", role="Developer", password_hash=None)
    )
    assert same_email.tenant_id == other.id

    tenants, total = await repo.list_tenants(limit=1, offset=1)
    assert total == 2 and [t.name for t in tenants] == ["Other"]
