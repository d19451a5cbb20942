"""Recording events for the SIEM without slowing or failing the request that caused them.

`record(services, event)` hands the event to this process's `SiemOutboxWriter` (`siem-outbox`) and returns at
once; it never raises. The writer stores what is queued in one transaction per batch (`SiemRepo.enqueue`,
bounded by `SIEM_OUTBOX_MAX`: the oldest events beyond it are dropped and counted). While the database fails,
the writer retries the batch (1, 2, 4 s) and then counts it as dropped; while its mailbox is full, new events
are dropped and counted. Both are visible in `GET /siem/status` (`dropped`). Shutdown drains the mailbox.
Nothing is recorded while forwarding is off (`SIEM_TRANSPORT` unset): an outbox with no reader would only grow.

Audit entries (policy decisions, guard blocks, agent actions) are never recorded here: the forwarder reads
them from the audit trail itself.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import TYPE_CHECKING

import trio
from outcome import Outcome, Value

from agentgov.actors.runtime import Actor, ActorRef, ActorStopped, MailboxFull, Request
from agentgov.logs import fields
from agentgov.siem.events import SiemEvent
from agentgov.storage.database import DatabaseError
from agentgov.storage.siem import SiemRepo

if TYPE_CHECKING:
    from agentgov.services import Services

log = logging.getLogger("agentgov.siem")

RETRY_DELAYS = (1.0, 2.0, 4.0)


@dataclasses.dataclass
class LocalCounts:
    """Events this process could not hand to the outbox (its writer's mailbox was full or stopped)."""

    unrecorded: int = 0


@dataclasses.dataclass(frozen=True)
class Enqueue:
    event: SiemEvent


@dataclasses.dataclass(frozen=True)
class Flush(Request[None]):
    """Answered once every event queued before it is stored (or counted as dropped)."""


class SiemOutboxWriter(Actor[Enqueue | Flush]):
    max_batch = 500
    linger = 0.02

    def __init__(self, services: Services) -> None:
        self.services = services
        self.repo = SiemRepo(services.db)

    async def handle(self, message: Enqueue | Flush) -> None:
        await self.handle_batch([message])

    async def handle_batch(self, messages: list[Enqueue | Flush]) -> list[Outcome]:
        events = [m.event for m in messages if isinstance(m, Enqueue)]
        if events:
            await self._store(events)
        return [Value(None) for _ in messages]

    async def _store(self, events: list[SiemEvent]) -> None:
        limit = self.services.settings.siem.outbox_max
        for delay in (*RETRY_DELAYS, None):
            try:
                dropped = await self.repo.enqueue(events, limit)
            except DatabaseError as exc:
                if delay is None:
                    log.error("SIEM events not recorded", extra=fields(events=len(events), error=str(exc)))
                    with trio.move_on_after(5):
                        try:
                            await self.repo.count_dropped(len(events))
                        except DatabaseError:
                            self.services.siem.unrecorded += len(events)
                    break
                await trio.sleep(delay)
                continue
            if dropped:
                log.warning("SIEM outbox full; oldest events dropped", extra=fields(dropped=dropped, limit=limit))
            break


def outbox_writer(services: Services) -> ActorRef[Enqueue | Flush]:
    return services.actors.get_or_spawn("siem-outbox", lambda: SiemOutboxWriter(services))


def record(services: Services, event: SiemEvent) -> None:
    """Queue `event` for the SIEM if forwarding is on. Never raises and never waits."""
    if not services.settings.siem.enabled:
        return
    try:
        outbox_writer(services).tell(Enqueue(event))
    except (MailboxFull, ActorStopped):
        services.siem.unrecorded += 1
        log.warning("SIEM event dropped: the outbox writer is busy", extra=fields(event=event.name))
