"""PostgreSQL backend: psycopg 3 (sync) with `psycopg_pool.ConnectionPool`, run in worker threads.

psycopg's async API does not run under trio, so each transaction runs in a thread under a
`trio.CapacityLimiter` sized to the pool. SQL uses `:name` placeholders, translated once per statement.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

import psycopg
import psycopg_pool
import trio
from psycopg.rows import dict_row

from agentgov.storage.database import Connection, Database, DatabaseError, IntegrityError, QueryError, Row

T = TypeVar("T")
_PLACEHOLDER = re.compile(r"(?<![:\w]):([A-Za-z_][A-Za-z0-9_]*)")


@functools.lru_cache(maxsize=1024)
def translate(sql: str) -> str:
    """`:name` placeholders to psycopg's `%(name)s` (literal `%` doubled)."""
    return _PLACEHOLDER.sub(r"%(\1)s", sql.replace("%", "%%"))


class _PostgresConnection(Connection):
    dialect = "postgres"
    placeholder = "%s"

    def __init__(self, raw: psycopg.Connection[Any]) -> None:
        self._raw = raw

    def execute(self, sql: str, params: Mapping[str, Any] | None = None) -> int:
        try:
            with self._raw.cursor() as cursor:
                cursor.execute(translate(sql), params or {})
                return cursor.rowcount
        except psycopg.errors.IntegrityError as exc:
            raise IntegrityError(str(exc)) from exc

    def execute_values(self, sql: str, values: Sequence[Any]) -> None:
        try:
            with self._raw.cursor() as cursor:
                cursor.execute(sql, values)
        except psycopg.errors.IntegrityError as exc:
            raise IntegrityError(str(exc)) from exc

    def executemany(self, sql: str, params: Sequence[Mapping[str, Any]]) -> None:
        try:
            with self._raw.cursor() as cursor:
                cursor.executemany(translate(sql), params)
        except psycopg.errors.IntegrityError as exc:
            raise IntegrityError(str(exc)) from exc

    def fetchall(self, sql: str, params: Mapping[str, Any] | None = None) -> list[Row]:
        with self._raw.cursor(row_factory=dict_row) as cursor:
            cursor.execute(translate(sql), params or {})
            return list(cursor.fetchall())


class PostgresDatabase(Database):
    dialect = "postgres"

    def __init__(self, url: str, pool_size: int = 8) -> None:
        self.url = url
        self._pool = psycopg_pool.ConnectionPool(
            url, min_size=1, max_size=pool_size, open=False, timeout=10.0, kwargs={"autocommit": False}
        )
        self._limiter = trio.CapacityLimiter(pool_size)
        self._closed = False

    async def open(self) -> None:
        """Open the pool and wait for a first connection. Raises `DatabaseError` if unreachable."""
        try:
            await trio.to_thread.run_sync(lambda: self._pool.open(wait=True, timeout=10.0))
        except (psycopg.Error, psycopg_pool.PoolTimeout) as exc:
            raise DatabaseError(f"cannot connect to PostgreSQL: {exc}") from exc

    async def _run(self, fn: Callable[[Connection], T], read_only: bool) -> T:
        if self._closed:
            raise DatabaseError("the database is closed")

        def run() -> T:
            with self._pool.connection() as raw:
                if read_only:
                    raw.read_only = True
                try:
                    with raw.transaction():
                        return fn(_PostgresConnection(raw))
                finally:
                    if read_only:
                        raw.read_only = False

        try:
            return await trio.to_thread.run_sync(run, limiter=self._limiter)
        except (psycopg.OperationalError, psycopg_pool.PoolTimeout) as exc:
            raise DatabaseError(str(exc)) from exc
        except psycopg.errors.IntegrityError as exc:  # raised by the commit (deferred constraints)
            raise IntegrityError(str(exc)) from exc
        except psycopg.Error as exc:
            raise QueryError(str(exc)) from exc

    async def read(self, fn: Callable[[Connection], T]) -> T:
        return await self._run(fn, read_only=True)

    async def write(self, fn: Callable[[Connection], T]) -> T:
        return await self._run(fn, read_only=False)

    async def ping(self) -> None:
        await self.read(lambda conn: conn.scalar("SELECT 1"))

    async def close(self) -> None:
        if not self._closed:
            self._closed = True
            await trio.to_thread.run_sync(self._pool.close)

    def type_names(self) -> Mapping[str, str]:
        return {"blob": "BYTEA", "bigint": "BIGINT", "real": "DOUBLE PRECISION"}
