"""The cache interface: short-lived shared state (revocations, throttling counters, cached lookups).

Two implementations with one contract: `MemoryCache` (in-process, the default for one process) and
`RedisCache` (shared by every process behind a load balancer). Values are strings; `ttl` is in seconds.
Every method raises `CacheError` when the cache cannot be reached.
"""

from __future__ import annotations

import abc
import math
import time
from collections.abc import Callable
from typing import Any, TypeVar

import trio

T = TypeVar("T")


class CacheError(Exception):
    """The cache could not be reached or answered with an error."""


class Cache(abc.ABC):
    @abc.abstractmethod
    async def get(self, key: str) -> str | None: ...

    @abc.abstractmethod
    async def set(self, key: str, value: str, ttl: float | None = None) -> None: ...

    @abc.abstractmethod
    async def add(self, key: str, value: str, ttl: float | None = None) -> bool:
        """Set only if absent; True if it was set (an atomic claim)."""

    @abc.abstractmethod
    async def delete(self, key: str) -> bool:
        """True if the key existed."""

    @abc.abstractmethod
    async def incr(self, key: str, ttl: float) -> int:
        """Add one and return the new count; a new counter expires `ttl` seconds after its first increment."""

    @abc.abstractmethod
    async def ttl(self, key: str) -> float | None:
        """Seconds until the key expires; None if it is absent or has no expiry."""

    @abc.abstractmethod
    async def ping(self) -> None: ...

    @abc.abstractmethod
    async def close(self) -> None: ...


class MemoryCache(Cache):
    """A dict with expiry, for a single process. `clock` defaults to `time.monotonic`."""

    def __init__(self, clock: Callable[[], float] = time.monotonic, max_keys: int = 100_000) -> None:
        self._clock = clock
        self._max_keys = max_keys
        self._data: dict[str, tuple[str, float]] = {}

    def _live(self, key: str) -> tuple[str, float] | None:
        item = self._data.get(key)
        if item is not None and item[1] <= self._clock():
            del self._data[key]
            return None
        return item

    def _store(self, key: str, value: str, ttl: float | None) -> None:
        if len(self._data) >= self._max_keys and key not in self._data:
            self._evict()
        self._data[key] = (value, math.inf if ttl is None else self._clock() + ttl)

    def _evict(self) -> None:
        now = self._clock()
        for key in [k for k, (_, exp) in self._data.items() if exp <= now]:
            del self._data[key]
        while len(self._data) >= self._max_keys:
            self._data.pop(next(iter(self._data)))

    async def get(self, key: str) -> str | None:
        item = self._live(key)
        return None if item is None else item[0]

    async def set(self, key: str, value: str, ttl: float | None = None) -> None:
        self._store(key, value, ttl)

    async def add(self, key: str, value: str, ttl: float | None = None) -> bool:
        if self._live(key) is not None:
            return False
        self._store(key, value, ttl)
        return True

    async def delete(self, key: str) -> bool:
        return self._data.pop(key, None) is not None

    async def incr(self, key: str, ttl: float) -> int:
        item = self._live(key)
        if item is None:
            self._store(key, "1", ttl)
            return 1
        count = int(item[0]) + 1
        self._data[key] = (str(count), item[1])
        return count

    async def ttl(self, key: str) -> float | None:
        item = self._live(key)
        if item is None or item[1] == math.inf:
            return None
        return item[1] - self._clock()

    async def ping(self) -> None:
        return None

    async def close(self) -> None:
        self._data.clear()


class RedisCache(Cache):
    """Redis through sync redis-py in worker threads (redis-py's asyncio client does not run under trio).

    Every key is prefixed with `prefix`, so several deployments or test runs can share one server.
    """

    def __init__(self, url: str, prefix: str = "agentgov:", max_connections: int = 16) -> None:
        import redis

        self._redis_errors = (redis.RedisError,)
        self._pool = redis.BlockingConnectionPool.from_url(
            url, max_connections=max_connections, timeout=5, socket_timeout=5, socket_connect_timeout=5
        )
        self._client = redis.Redis(connection_pool=self._pool, decode_responses=True)
        self._prefix = prefix
        self._limiter = trio.CapacityLimiter(max_connections)

    async def _call(self, fn: Callable[[], T]) -> T:
        try:
            return await trio.to_thread.run_sync(fn, limiter=self._limiter)
        except self._redis_errors as exc:
            raise CacheError(f"redis: {exc}") from exc

    def _k(self, key: str) -> str:
        return self._prefix + key

    async def get(self, key: str) -> str | None:
        value: Any = await self._call(lambda: self._client.get(self._k(key)))
        return None if value is None else str(value.decode() if isinstance(value, bytes) else value)

    async def set(self, key: str, value: str, ttl: float | None = None) -> None:
        px = None if ttl is None else max(1, int(ttl * 1000))
        await self._call(lambda: self._client.set(self._k(key), value, px=px))

    async def add(self, key: str, value: str, ttl: float | None = None) -> bool:
        px = None if ttl is None else max(1, int(ttl * 1000))
        return bool(await self._call(lambda: self._client.set(self._k(key), value, px=px, nx=True)))

    async def delete(self, key: str) -> bool:
        return bool(await self._call(lambda: self._client.delete(self._k(key))))

    async def incr(self, key: str, ttl: float) -> int:
        def run() -> int:
            pipe = self._client.pipeline(transaction=True)
            pipe.incr(self._k(key))
            pipe.pexpire(self._k(key), max(1, int(ttl * 1000)), nx=True)
            count, _ = pipe.execute()
            return int(count)

        return await self._call(run)

    async def ttl(self, key: str) -> float | None:
        ms: Any = await self._call(lambda: self._client.pttl(self._k(key)))
        return None if ms is None or int(ms) < 0 else int(ms) / 1000

    async def ping(self) -> None:
        await self._call(self._client.ping)

    async def close(self) -> None:
        await trio.to_thread.run_sync(self._pool.disconnect)
