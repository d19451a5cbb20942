"""Real PostgreSQL databases and Redis key spaces for tests.

Each test that asks for PostgreSQL gets a fresh database (created and dropped around it); each Redis test
gets its own key prefix (deleted after). When the servers are unreachable those tests are skipped with the
reason, unless AGENTGOV_REQUIRE_SERVICES=1 (set by CI), in which case they fail.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

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


@contextmanager
def postgres_database() -> Iterator[str]:
    """Create a uniquely named database, yield its URL, drop it afterwards."""
    import psycopg

    name = "agentgov_t_" + uuid.uuid4().hex[:12]
    try:
        admin = psycopg.connect(PG_ADMIN_URL, autocommit=True, connect_timeout=3)
    except psycopg.OperationalError as exc:
        unavailable("PostgreSQL", exc)
        raise
    with admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield _with_database(PG_ADMIN_URL, name)
    finally:
        with psycopg.connect(PG_ADMIN_URL, autocommit=True, connect_timeout=3) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


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
