"""Holding a lease (`agentgov.storage.leases`) for as long as one piece of work runs.

`held_lease(services, name, nursery)` is for work that must run in one process at a time but is not a
standing duty: a tenant's clustering job, say. It waits until this process holds lease `name` (trying every
third of `LEASE_SECONDS`), yields the fencing token, renews the lease every third of `LEASE_SECONDS` from a task
in `nursery` while the body runs, and releases it when the body ends, so the next process waiting takes it at
its next try. Every write the work makes should be fenced with the token (`fence`) in its own transaction.

Contracts:
- `heartbeat`, if given, is awaited at every try and every renewal: the work's own sign of life (a job row's
  heartbeat), so that work waiting for the lease is not taken for orphaned.
- If the lease is lost while the body runs (this process stalled past the lease and another took over), the
  body is cancelled and `LeaseLost` is raised from the `async with`.
- Cancellation from outside (shutdown) cancels the body as usual and the lease is released (shielded, at most
  5 s). A database error while waiting propagates; while renewing it is retried at the next renewal (the
  fence still guards the writes).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING

import trio

from agentgov.storage.database import DatabaseError
from agentgov.storage.leases import LeaseLost, LeaseRepo

if TYPE_CHECKING:
    from agentgov.services import Services


@contextlib.asynccontextmanager
async def held_lease(
    services: Services,
    name: str,
    nursery: trio.Nursery,
    *,
    heartbeat: Callable[[], Awaitable[None]] | None = None,
) -> AsyncIterator[int]:
    leases = LeaseRepo(services.db)
    owner, ttl = services.instance_id, services.settings.lease_seconds
    period = max(0.2, ttl / 3)
    while True:
        if heartbeat is not None:
            await heartbeat()
        token = await leases.acquire(name, owner, ttl)
        if token is not None:
            break
        await trio.sleep(period)
    work, keeper = trio.CancelScope(), trio.CancelScope()
    lost = False

    async def keep() -> None:
        nonlocal lost
        with keeper:
            while True:
                await trio.sleep(period)
                try:
                    if heartbeat is not None:
                        await heartbeat()
                    renewed = await leases.acquire(name, owner, ttl)
                except DatabaseError:
                    continue
                if renewed != token:
                    lost = True
                    work.cancel()
                    return

    nursery.start_soon(keep, name=f"lease:{name}")
    try:
        with work:
            yield token
    finally:
        keeper.cancel()
        if not lost:
            with trio.CancelScope(shield=True), trio.move_on_after(5), contextlib.suppress(DatabaseError):
                await leases.release(name, owner)
    if lost:
        raise LeaseLost(f"the lease {name!r} was taken over while its work ran")
