"""Leases on platform-wide duties (`agentgov.storage.leases`), on both backends: one owner at a time, renewal
keeps the fencing token, a takeover after expiry (or release) raises it, and a write fenced by an old token
is refused inside its transaction."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from agentgov.storage import open_database
from agentgov.storage.leases import LeaseLost, LeaseRepo, fence

T0 = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)


async def test_one_owner_at_a_time_and_fencing(database_url: str) -> None:
    db = await open_database(database_url)
    try:
        leases = LeaseRepo(db)
        assert await leases.holder("duty") is None
        assert await leases.acquire("duty", "a", 15, at=T0) == 1
        assert await leases.acquire("duty", "b", 15, at=T0 + timedelta(seconds=5)) is None  # held by a
        assert await leases.acquire("duty", "a", 15, at=T0 + timedelta(seconds=10)) == 1  # renewed, same token
        assert await leases.acquire("duty", "b", 15, at=T0 + timedelta(seconds=24)) is None  # renewal counted
        assert await leases.acquire("duty", "b", 15, at=T0 + timedelta(seconds=26)) == 2  # a stopped renewing
        owner, token, _ = await leases.holder("duty") or ("", 0, "")
        assert (owner, token) == ("b", 2)
        assert await leases.acquire("duty", "a", 15, at=T0 + timedelta(seconds=27)) is None

        with pytest.raises(LeaseLost):  # a's late write, fenced by its old token, is refused
            await db.write(lambda conn: fence(conn, "duty", 1))
        await db.write(lambda conn: fence(conn, "duty", 2))

        await leases.release("duty", "a")  # not a's: no effect
        assert await leases.acquire("duty", "a", 15, at=T0 + timedelta(seconds=28)) is None
        await leases.release("duty", "b")
        assert await leases.acquire("duty", "a", 15) == 3  # released: taken at once
        assert await leases.acquire("other", "b", 15) == 1  # leases are independent
    finally:
        await db.close()
