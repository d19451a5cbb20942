"""Storage: the database interface and its backends, migrations, repositories and the cache."""

from __future__ import annotations

from agentgov.storage.cache import Cache, MemoryCache, RedisCache
from agentgov.storage.database import Database
from agentgov.storage.migrations import apply_migrations


async def open_database(url: str, pool_size: int = 8) -> Database:
    """Connect to `url` (sqlite:///path or postgresql://...) and apply pending migrations.

    Raises `DatabaseError` if the database cannot be reached or migrated.
    """
    db: Database
    if url.startswith(("postgresql://", "postgres://")):
        from agentgov.storage.postgres import PostgresDatabase

        pg = PostgresDatabase(url, pool_size=pool_size)
        await pg.open()
        db = pg
    else:
        from agentgov.storage.sqlite import SqliteDatabase

        db = SqliteDatabase.from_url(url)
    try:
        await apply_migrations(db)
    except BaseException:
        await db.close()
        raise
    return db


def open_cache(redis_url: str, prefix: str = "agentgov:") -> Cache:
    """A Redis cache when `redis_url` is set, else an in-process one."""
    return RedisCache(redis_url, prefix=prefix) if redis_url else MemoryCache()


__all__ = ["Cache", "Database", "open_cache", "open_database"]
