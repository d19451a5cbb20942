"""SQLite backend: the embedded default. WAL mode, one writer connection, a few reader connections.

Writes are serialised by a `trio.Lock` (SQLite allows one writer) and committed with synchronous=FULL, so
a committed write survives a crash. Readers use their own connections and do not block the writer.
"""

from __future__ import annotations

import functools
import queue
import re
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import trio

from agentgov.storage.database import Connection, Database, DatabaseError, IntegrityError, QueryError, Row

T = TypeVar("T")


_PLACEHOLDER = re.compile(r"(?<![:\w]):([A-Za-z_][A-Za-z0-9_]*)")


@functools.lru_cache(maxsize=1024)
def positional(sql: str) -> tuple[str, tuple[str, ...]]:
    """`sql` with its `:name` placeholders turned into `?`, and the names in the order they appear.

    The sqlite3 module releases the GIL around the lookup of every *named* parameter. A worker thread that
    releases it waits to take it back behind a busy event loop (up to a switch interval each time), so a
    statement with many named values (a batch insert) took seconds under load; positional values are bound
    without releasing it.
    """
    names: list[str] = []

    def number(match: re.Match[str]) -> str:
        names.append(match.group(1))
        return "?"

    return _PLACEHOLDER.sub(number, sql), tuple(names)


def _bind(sql: str, params: Mapping[str, Any] | None) -> tuple[str, tuple[Any, ...]]:
    """`sql` with positional markers and its values in order. Raises `QueryError` for a name not bound."""
    text, names = positional(sql)
    values = params or {}
    try:
        return text, tuple(values[name] for name in names)
    except KeyError as exc:
        raise QueryError(f"parameter :{exc.args[0]} is not bound") from None


class _SqliteConnection(Connection):
    dialect = "sqlite"
    placeholder = "?"

    def __init__(self, raw: sqlite3.Connection) -> None:
        self._raw = raw

    def execute(self, sql: str, params: Mapping[str, Any] | None = None) -> int:
        try:
            return self._raw.execute(*_bind(sql, params)).rowcount
        except sqlite3.IntegrityError as exc:
            raise IntegrityError(str(exc)) from exc

    def execute_values(self, sql: str, values: Sequence[Any]) -> None:
        try:
            self._raw.execute(sql, values)
        except sqlite3.IntegrityError as exc:
            raise IntegrityError(str(exc)) from exc

    def executemany(self, sql: str, params: Sequence[Mapping[str, Any]]) -> None:
        text, names = positional(sql)
        try:
            self._raw.executemany(text, [tuple(p[name] for name in names) for p in params])
        except sqlite3.IntegrityError as exc:
            raise IntegrityError(str(exc)) from exc

    def fetchall(self, sql: str, params: Mapping[str, Any] | None = None) -> list[Row]:
        cursor = self._raw.execute(*_bind(sql, params))
        names = [d[0] for d in cursor.description or ()]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def _connect(path: str) -> sqlite3.Connection:
    raw = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=30.0)
    raw.execute("PRAGMA journal_mode=WAL")
    raw.execute("PRAGMA synchronous=FULL")
    raw.execute("PRAGMA foreign_keys=ON")
    raw.execute("PRAGMA busy_timeout=30000")
    return raw


# Primary result codes that mean the database cannot serve the call now (sqlite.org/rescode.html).
_UNAVAILABLE_CODES = frozenset(
    {
        5,  # SQLITE_BUSY
        6,  # SQLITE_LOCKED
        7,  # SQLITE_NOMEM
        8,  # SQLITE_READONLY
        10,  # SQLITE_IOERR
        11,  # SQLITE_CORRUPT
        13,  # SQLITE_FULL
        14,  # SQLITE_CANTOPEN
        15,  # SQLITE_PROTOCOL
        26,  # SQLITE_NOTADB
    }
)


def storage_error(exc: sqlite3.Error) -> Exception:
    """The storage error for a driver error: `IntegrityError` for a constraint, `DatabaseError` when the
    database cannot serve the call (by SQLite's primary result code), `QueryError` for anything else."""
    if isinstance(exc, sqlite3.IntegrityError):
        return IntegrityError(str(exc))
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None and code & 0xFF in _UNAVAILABLE_CODES:
        return DatabaseError(str(exc))
    return QueryError(str(exc))


class SqliteDatabase(Database):
    dialect = "sqlite"

    def __init__(self, path: str | Path, readers: int = 4) -> None:
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self._writer = _connect(self.path)
        self._write_lock = trio.Lock()
        self._readers: queue.SimpleQueue[sqlite3.Connection] = queue.SimpleQueue()
        for _ in range(readers):
            self._readers.put(_connect(self.path))
        self._read_limiter = trio.CapacityLimiter(readers)
        self._closed = False

    @classmethod
    def from_url(cls, url: str) -> SqliteDatabase:
        """`sqlite:///relative/path.db` or `sqlite:////absolute/path.db`."""
        return cls(url.removeprefix("sqlite:///"))

    async def read(self, fn: Callable[[Connection], T]) -> T:
        self._check_open()

        def run() -> T:
            raw = self._readers.get()
            try:
                raw.execute("BEGIN")
                try:
                    return fn(_SqliteConnection(raw))
                finally:
                    raw.execute("COMMIT")
            except sqlite3.Error as exc:
                raise storage_error(exc) from exc
            finally:
                self._readers.put(raw)

        return await trio.to_thread.run_sync(run, limiter=self._read_limiter)

    async def write(self, fn: Callable[[Connection], T]) -> T:
        self._check_open()

        def run() -> T:
            raw = self._writer
            raw.execute("BEGIN IMMEDIATE")
            try:
                result = fn(_SqliteConnection(raw))
            except BaseException:
                raw.execute("ROLLBACK")
                raise
            raw.execute("COMMIT")
            return result

        async with self._write_lock:
            try:
                return await trio.to_thread.run_sync(run)
            except sqlite3.Error as exc:
                raise storage_error(exc) from exc

    async def ping(self) -> None:
        await self.read(lambda conn: conn.scalar("SELECT 1"))

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        async with self._write_lock:
            self._writer.close()
        while True:
            try:
                self._readers.get_nowait().close()
            except queue.Empty:
                break

    def type_names(self) -> Mapping[str, str]:
        return {"blob": "BLOB", "bigint": "INTEGER", "real": "REAL"}

    def _check_open(self) -> None:
        if self._closed:
            raise DatabaseError("the database is closed")
