"""Flushing the guard's per-process counts into the shared hourly counters, so `/stats` counts every process.

The `GuardCountersActor` (`guard-counters`, one per process, started by the first validation) takes each
tenant's unflushed counts every `FLUSH_SECONDS` and adds them to `activity_counts` in one transaction. If the
write fails, the counts are put back and tried again at the next flush (nothing is lost while the process
lives). Stopping the actor (shutdown) flushes once more.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import TYPE_CHECKING, Any

import trio

from agentgov.actors.runtime import Actor, ActorContext, ActorRef
from agentgov.actors.ticker import PeriodicTicker
from agentgov.logs import fields
from agentgov.storage.activity import add_counts
from agentgov.storage.database import Connection, DatabaseError
from agentgov.timeutil import now_iso

if TYPE_CHECKING:
    from agentgov.services import Services

log = logging.getLogger("agentgov.guard")

FLUSH_SECONDS = 2.0


@dataclasses.dataclass(frozen=True)
class _Flush:
    pass


class GuardCountersActor(Actor[_Flush]):
    def __init__(self, services: Services) -> None:
        self.services = services
        self._ticker = PeriodicTicker(FLUSH_SECONDS, _Flush())

    async def on_start(self, ctx: ActorContext) -> None:
        self._ticker.start(ctx)

    async def handle(self, message: _Flush) -> Any:
        try:
            await self.flush()
        finally:
            self._ticker.poke()
        return None

    async def on_stop(self) -> None:
        with trio.CancelScope(shield=True), trio.move_on_after(5):
            await self.flush()

    async def flush(self) -> None:
        memory = self.services.guard
        taken = {tid: counters.take_unflushed() for tid, counters in memory.counters.items()}
        taken = {tid: counts for tid, counts in taken.items() if counts}
        if not taken:
            return
        hour = now_iso()[:13]

        def run(conn: Connection) -> None:
            for tenant_id, counts in taken.items():
                add_counts(conn, tenant_id, hour, counts)

        try:
            await self.services.db.write(run)
        except DatabaseError as exc:
            for tenant_id, counts in taken.items():  # put back: flushed with the next batch
                memory.of(tenant_id).unflushed.update(counts)
            log.warning("guard counters not flushed; will retry", extra=fields(error=str(exc)))


def guard_counters(services: Services) -> ActorRef[_Flush]:
    return services.actors.get_or_spawn("guard-counters", lambda: GuardCountersActor(services))
