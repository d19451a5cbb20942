"""Failed-login throttling, counted in the cache (so every process behind a load balancer shares it).

An account (tenant-less email) may fail `ACCOUNT_LIMIT` times and a client address `ADDRESS_LIMIT` times
within `WINDOW` seconds; beyond that, logins from it are refused with 429 until the window ends. A
successful login clears the account's counter. Counting happens before the password is checked, so a
throttled caller learns nothing about the password.
"""

from __future__ import annotations

import dataclasses
import hashlib

from agentgov.storage.cache import Cache

ACCOUNT_LIMIT = 5
ADDRESS_LIMIT = 20
WINDOW = 900.0


@dataclasses.dataclass(frozen=True)
class Throttled(Exception):
    retry_after: int


def _keys(email: str, address: str) -> tuple[str, str]:
    account = hashlib.sha256(email.strip().lower().encode()).hexdigest()[:32]
    return f"login-fail:acct:{account}", f"login-fail:addr:{address}"


async def check(cache: Cache, email: str, address: str) -> None:
    """Raise `Throttled` if the account or the address is over its limit."""
    for key, limit in zip(_keys(email, address), (ACCOUNT_LIMIT, ADDRESS_LIMIT), strict=True):
        count = await cache.get(key)
        if count is not None and int(count) >= limit:
            remaining = await cache.ttl(key)
            raise Throttled(retry_after=max(1, int(remaining or WINDOW)))


async def record_failure(cache: Cache, email: str, address: str) -> None:
    for key in _keys(email, address):
        await cache.incr(key, ttl=WINDOW)


async def record_success(cache: Cache, email: str, address: str) -> None:
    await cache.delete(_keys(email, address)[0])
