"""Real PostgreSQL databases and Redis key spaces for tests.

Each test that asks for PostgreSQL gets a fresh database (created and dropped around it); each Redis test
gets its own key prefix (deleted after). When the servers are unreachable those tests are skipped with the
reason, unless AGENTGOV_REQUIRE_SERVICES=1 (set by CI), in which case they fail.

Migrating an empty PostgreSQL database costs far more than copying one, so each test process migrates one
template database (through the real `open_database` path) the first time it needs one, and every test
database is then `CREATE DATABASE ... TEMPLATE` of it: already migrated, private to the test, and identical
to what the migrations produce. The template's name is unique to the process, so parallel test workers and
concurrent runs never share it (PostgreSQL refuses to copy a template while another session is connected to
it). It is dropped when the process exits. `postgres_database(migrated=False)` still gives an empty database.
"""

from __future__ import annotations

import atexit
import os
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

PG_ADMIN_URL = os.environ.get("AGENTGOV_TEST_PG_URL", "postgresql://postgres@127.0.0.1:5432/test")
REDIS_URL = os.environ.get("AGENTGOV_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")


def services_required() -> bool:
    return os.environ.get("AGENTGOV_REQUIRE_SERVICES") == "1"


def unavailable(what: str, exc: Exception) -> None:
    message = f"{what} is not reachable ({type(exc).__name__}: {exc})"
    if services_required():
        pytest.fail(message + "; AGENTGOV_REQUIRE_SERVICES=1 makes it required")
    pytest.skip(message)


def _with_database(url: str, dbname: str) -> str:
    base, _, _ = url.rpartition("/")
    return f"{base}/{dbname}"


def _unique_name(kind: str) -> str:
    return f"agentgov_t_{kind}{uuid.uuid4().hex[:12]}"


def _drop(name: str) -> None:
    import psycopg

    with psycopg.connect(PG_ADMIN_URL, autocommit=True, connect_timeout=3) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _migrate(url: str) -> None:
    """Apply every migration to the database at `url` through the product's own `open_database`.

    Runs in a thread of its own so that it works whether or not the caller is inside a trio run.
    """
    import trio

    from agentgov.storage import open_database

    async def migrate() -> None:
        db = await open_database(url)
        await db.close()

    failure: list[BaseException] = []

    def run() -> None:
        try:
            trio.run(migrate)
        except BaseException as exc:
            failure.append(exc)

    thread = threading.Thread(target=run, name="migrate-template")
    thread.start()
    thread.join()
    if failure:
        raise failure[0]


_template_lock = threading.Lock()
_template_name: str | None = None


def _migrated_template(admin: Any) -> str:
    """The name of this process's migrated template database, creating it on first use."""
    global _template_name
    with _template_lock:
        if _template_name is None:
            name = _unique_name("tpl_")
            admin.execute(f'CREATE DATABASE "{name}"')
            try:
                _migrate(_with_database(PG_ADMIN_URL, name))
            except BaseException:
                _drop(name)
                raise
            atexit.register(_drop, name)
            _template_name = name
        return _template_name


@contextmanager
def postgres_database(*, migrated: bool = True) -> Iterator[str]:
    """Create a uniquely named database, yield its URL, drop it afterwards.

    With `migrated` (the default) the database is a copy of this process's migrated template, so it already
    holds the current schema; otherwise it is empty. Skips (or fails, see `services_required`) when
    PostgreSQL is unreachable.
    """
    import psycopg

    name = _unique_name("")
    try:
        admin = psycopg.connect(PG_ADMIN_URL, autocommit=True, connect_timeout=3)
    except psycopg.OperationalError as exc:
        unavailable("PostgreSQL", exc)
        raise
    with admin:
        if migrated:
            admin.execute(f'CREATE DATABASE "{name}" TEMPLATE "{_migrated_template(admin)}"')
        else:
            admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield _with_database(PG_ADMIN_URL, name)
    finally:
        _drop(name)


@contextmanager
def redis_prefix() -> Iterator[str]:
    """Yield a unique key prefix on the test Redis; delete its keys afterwards."""
    import redis

    client = redis.Redis.from_url(REDIS_URL, socket_connect_timeout=3)
    try:
        client.ping()
    except redis.RedisError as exc:
        unavailable("Redis", exc)
        raise
    prefix = f"agentgov-test-{uuid.uuid4().hex[:12]}:"
    try:
        yield prefix
    finally:
        keys = list(client.scan_iter(match=prefix + "*", count=1000))
        if keys:
            client.delete(*keys)
        client.close()
