"""One contract for both cache implementations (in-process and Redis)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from agentgov.storage.cache import Cache, CacheError, MemoryCache, RedisCache


@pytest.fixture(params=["memory", pytest.param("redis", marks=pytest.mark.redis)])
async def cache(request: pytest.FixtureRequest) -> AsyncIterator[Cache]:
    if request.param == "memory":
        yield MemoryCache()
        return
    url, prefix = request.getfixturevalue("redis_settings")
    redis_cache = RedisCache(url, prefix=prefix)
    try:
        yield redis_cache
    finally:
        await redis_cache.close()


async def test_set_get_delete(cache: Cache) -> None:
    assert await cache.get("a") is None
    await cache.set("a", "1")
    assert await cache.get("a") == "1"
    assert await cache.delete("a") is True
    assert await cache.delete("a") is False
    assert await cache.get("a") is None


async def test_add_claims_only_once(cache: Cache) -> None:
    assert await cache.add("claim", "first", ttl=60) is True
    assert await cache.add("claim", "second", ttl=60) is False
    assert await cache.get("claim") == "first"


async def test_incr_counts_and_sets_expiry_once(cache: Cache) -> None:
    assert await cache.incr("n", ttl=60) == 1
    assert await cache.incr("n", ttl=60) == 2
    remaining = await cache.ttl("n")
    assert remaining is not None and 0 < remaining <= 60


async def test_ttl_absent_and_unbounded(cache: Cache) -> None:
    assert await cache.ttl("missing") is None
    await cache.set("forever", "x")
    assert await cache.ttl("forever") is None
    await cache.set("brief", "x", ttl=30)
    remaining = await cache.ttl("brief")
    assert remaining is not None and 0 < remaining <= 30


async def test_ping(cache: Cache) -> None:
    await cache.ping()


async def test_memory_cache_expires_entries() -> None:
    now = [1000.0]
    cache = MemoryCache(clock=lambda: now[0])
    await cache.set("k", "v", ttl=10)
    await cache.incr("n", ttl=10)
    now[0] += 9.9
    assert await cache.get("k") == "v"
    now[0] += 0.2
    assert await cache.get("k") is None
    assert await cache.incr("n", ttl=10) == 1  # the old counter expired


async def test_memory_cache_is_bounded() -> None:
    cache = MemoryCache(max_keys=3)
    for i in range(10):
        await cache.set(f"k{i}", "v")
    assert sum([await cache.get(f"k{i}") is not None for i in range(10)]) <= 3
    assert await cache.get("k9") == "v"


@pytest.mark.redis
async def test_redis_keys_are_prefixed(redis_settings: tuple[str, str]) -> None:
    import redis

    url, prefix = redis_settings
    cache = RedisCache(url, prefix=prefix)
    await cache.set("visible", "1")
    raw = redis.Redis.from_url(url)
    assert raw.get(prefix + "visible") == b"1"
    raw.close()
    await cache.close()


async def test_unreachable_redis_raises_cache_error() -> None:
    cache = RedisCache("redis://127.0.0.1:1/0")
    with pytest.raises(CacheError):
        await cache.ping()
    await cache.close()
