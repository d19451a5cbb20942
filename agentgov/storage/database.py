"""The database interface: transactions of portable SQL, run off the event loop.

Repositories are written once against `Connection` with `:name` placeholders and portable types (TEXT
ids and ISO-8601 UTC timestamps, INTEGER booleans, TEXT JSON); each backend (`SqliteDatabase`,
`PostgresDatabase`) supplies connections, transactions and the few dialect differences. Failures are the same on
every backend: `DatabaseError` when the database cannot serve the call now (retry later), `QueryError`
(with its subclass `IntegrityError`) when the statement or its values are at fault. Every call runs in a
worker thread under a `trio.CapacityLimiter`; cancelling the caller waits for the statement to finish
(the thread is not abandoned), so a write is either committed or rolled back, never left half-done.
"""

from __future__ import annotations

import abc
import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

T = TypeVar("T")
Row = dict[str, Any]

MAX_PARAMETERS = 30_000
"""Bound values per statement that every backend accepts (SQLite allows 32,766, PostgreSQL 65,535)."""


class DatabaseError(Exception):
    """The database cannot serve the call now: unreachable, closed, locked or busy past its timeout, out of
    space, or failing as a whole. Retrying later may succeed (the HTTP layer answers 503)."""


class QueryError(Exception):
    """A statement failed because of the statement or its values: a programming error (a SQL typo, a missing
    table, a wrong binding) or a value the database refuses. Retrying the same call fails the same way (the
    HTTP layer answers 500 and logs it, unless the caller handles it). Never a `DatabaseError`."""


class IntegrityError(QueryError):
    """A uniqueness or foreign-key constraint was violated."""


class Connection(abc.ABC):
    """One connection inside one transaction. Not shared between threads or transactions."""

    dialect: str

    @abc.abstractmethod
    def execute(self, sql: str, params: Mapping[str, Any] | None = None) -> int:
        """Run a statement; return the number of affected rows. Raises `IntegrityError` on a constraint."""

    @abc.abstractmethod
    def executemany(self, sql: str, params: Sequence[Mapping[str, Any]]) -> None:
        """Run one statement for each parameter set."""

    @abc.abstractmethod
    def fetchall(self, sql: str, params: Mapping[str, Any] | None = None) -> list[Row]:
        """Rows as dicts keyed by column name."""

    @abc.abstractmethod
    def execute_values(self, sql: str, values: Sequence[Any]) -> None:
        """Run a statement written with `placeholder` markers, binding `values` in order."""

    placeholder: str
    """The positional parameter marker of the backend's driver."""

    def insert_rows(self, table: str, rows: Sequence[Mapping[str, Any]]) -> None:
        """Insert `rows` (each keyed by the same column names) with one multi-row INSERT per
        `MAX_PARAMETERS` values. Raises `IntegrityError` on a constraint.

        Prefer it to `executemany` where many rows are written from a worker thread while the event loop is
        busy: a driver releases and retakes the GIL once per statement, and each retake can wait a whole
        switch interval behind the loop (measured here: 140 rows took 646 ms with `executemany` and 18 ms
        as one statement). `table` and the column names must be code constants, never input.
        """
        if not rows:
            return
        columns = tuple(rows[0])
        per_statement = max(1, MAX_PARAMETERS // len(columns))
        for start in range(0, len(rows), per_statement):
            chunk = rows[start : start + per_statement]
            sql = _insert_sql(table, columns, len(chunk), self.placeholder)
            self.execute_values(sql, [row[column] for row in chunk for column in columns])

    def fetchone(self, sql: str, params: Mapping[str, Any] | None = None) -> Row | None:
        rows = self.fetchall(sql, params)
        return rows[0] if rows else None

    def scalar(self, sql: str, params: Mapping[str, Any] | None = None) -> Any:
        row = self.fetchone(sql, params)
        return None if row is None else next(iter(row.values()))


def in_list(prefix: str, values: Sequence[Any]) -> tuple[str, dict[str, Any]]:
    """The `:name` markers of an `IN (...)` list for `values` and their parameters, named `prefix0`,
    `prefix1`, ... (`prefix` must not collide with the statement's other parameter names). Keep `values`
    under `MAX_PARAMETERS`; callers with more split them."""
    names = [f"{prefix}{i}" for i in range(len(values))]
    return ", ".join(f":{n}" for n in names), dict(zip(names, values, strict=True))


@functools.lru_cache(maxsize=64)
def _insert_sql(table: str, columns: tuple[str, ...], count: int, placeholder: str) -> str:
    one = f"({', '.join([placeholder] * len(columns))})"
    return f"INSERT INTO {table} ({', '.join(columns)}) VALUES {', '.join([one] * count)}"


class Database(abc.ABC):
    """A pool of connections to one database."""

    dialect: str

    @abc.abstractmethod
    async def read(self, fn: Callable[[Connection], T]) -> T:
        """Run `fn(conn)` in a read transaction and return its result."""

    @abc.abstractmethod
    async def write(self, fn: Callable[[Connection], T]) -> T:
        """Run `fn(conn)` in a write transaction, committed (durably) before this returns.

        If `fn` raises, the transaction is rolled back and the exception propagates.
        """

    @abc.abstractmethod
    async def ping(self) -> None:
        """Raise `DatabaseError` unless the database answers a trivial query."""

    @abc.abstractmethod
    async def close(self) -> None:
        """Close every connection. Further calls raise `DatabaseError`."""

    @abc.abstractmethod
    def type_names(self) -> Mapping[str, str]:
        """Dialect type names used by migrations: `blob`, `bigint`, `real`."""
