"""Delivering events to the SIEM: this process's `SiemForwarder` (`siem-forwarder`), started with the app when
forwarding is on.

Every `SIEM_FLUSH_INTERVAL` (and at once after a start, so delivery resumes after a restart) the forwarder
takes a batch of up to `SIEM_BATCH_SIZE` events: first the outbox's oldest recorded events, then audit entries
after each tenant's cursor (shared fairly between the tenants that are behind). It sends the batch; once the
destination took it, the outbox events are deleted and the cursors advanced in one transaction, so delivery is
at least once: a crash between the send and that commit sends the batch again (same event ids). A full batch
is followed by the next at once (up to `ROUNDS_PER_TICK`, then other messages are served). A failed send is
counted and retried after a pause that doubles from 1 s up to `SIEM_RETRY_MAX_SECONDS` (±20 % jitter).

Only one process delivers at a time: the forwarder holds the lease `siem-delivery` (`agentgov.storage.leases`,
renewed every tick, taken over `LEASE_SECONDS` after its holder stopped renewing); acknowledging a batch is
fenced by the lease's token, so a process that lost the lease mid-batch records nothing (the new owner sends
the batch again). `SendTest` (`POST /siem/test`) delivers one batch
now (if this process holds the lease) and then a test event, and answers whether the destination took it.

Stopping the actor (shutdown) releases the lease and closes the connection; a send under way is cancelled and
its batch is sent again by the next delivery.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import random
import time
from typing import TYPE_CHECKING, Any

import trio

from agentgov.actors.runtime import Actor, ActorContext, ActorRef, Request
from agentgov.actors.ticker import SelfTicker
from agentgov.logs import fields
from agentgov.siem.events import SiemEvent, from_audit_entry, test_event
from agentgov.siem.transports import DeliveryError, Transport, open_transport
from agentgov.storage.database import DatabaseError
from agentgov.storage.leases import LeaseLost, LeaseRepo
from agentgov.storage.siem import SiemRepo

if TYPE_CHECKING:
    from agentgov.services import Services

log = logging.getLogger("agentgov.siem")

LEASE = "siem-delivery"
ROUNDS_PER_TICK = 20
FIRST_RETRY = 1.0


@dataclasses.dataclass(frozen=True)
class TestResult:
    accepted: bool
    event_id: str
    flushed: int  # events of the outbox and the trail delivered before the test event
    error: str | None
    latency_ms: float


@dataclasses.dataclass(frozen=True)
class SendTest(Request[TestResult]):
    pass


@dataclasses.dataclass(frozen=True)
class _Tick:
    pass


@dataclasses.dataclass(frozen=True)
class _Outcome:
    sent: int
    full: bool
    error: str | None = None


class SiemForwarder(Actor[_Tick | SendTest]):
    def __init__(self, services: Services) -> None:
        self.services = services
        self.settings = services.settings.siem
        self.repo = SiemRepo(services.db)
        self.leases = LeaseRepo(services.db)
        self._token: int | None = None
        self.transport: Transport = open_transport(self.settings)
        self._due = 0.0
        self._delay = 0.0
        self._begun = False
        self._ticker = SelfTicker(_Tick(), lambda: self._due, lambda: self.settings.flush_interval)

    async def on_start(self, ctx: ActorContext) -> None:
        self._due = trio.current_time()
        self._ticker.start(ctx)

    async def on_stop(self) -> None:
        await self.transport.aclose()
        with trio.CancelScope(shield=True), trio.move_on_after(5), contextlib.suppress(DatabaseError):
            await self.leases.release(LEASE, self.services.instance_id)

    async def handle(self, message: _Tick | SendTest) -> Any:
        match message:
            case _Tick():
                try:
                    await self._on_tick()
                finally:
                    self._ticker.poke()
                return None
            case SendTest():
                return await self._test()

    async def _holds_lease(self) -> bool:
        lease_seconds = self.services.settings.lease_seconds
        self._token = await self.leases.acquire(LEASE, self.services.instance_id, lease_seconds)
        if self._token is None:
            return False
        if not self._begun:
            await self.repo.begin()
            self._begun = True
        return True

    async def _on_tick(self) -> None:
        try:
            if not await self._holds_lease():
                self._due = trio.current_time() + min(
                    self.settings.flush_interval, self.services.settings.lease_seconds / 3
                )
                return
            for _ in range(ROUNDS_PER_TICK):
                result = await self._deliver()
                if result.error is not None:
                    self._back_off()
                    return
                if not result.full:
                    break
            else:
                self._due = trio.current_time()  # more to send: next round after other messages
                return
        except DatabaseError as exc:
            log.warning("SIEM delivery paused: database unavailable", extra=fields(error=str(exc)))
            self._back_off()
            return
        self._delay = 0.0
        self._due = trio.current_time() + self.settings.flush_interval

    def _back_off(self) -> None:
        self._delay = min(self.settings.retry_max, max(FIRST_RETRY, self._delay * 2))
        self._due = trio.current_time() + self._delay * random.uniform(0.8, 1.2)

    async def _batch(self) -> tuple[list[SiemEvent], list[SiemEvent], dict[str, int]]:
        """(outbox events, audit entries' events, the cursors they advance to)."""
        size = self.settings.batch_size
        queued = await self.repo.queued(size)
        events: list[SiemEvent] = []
        cursors: dict[str, int] = {}
        room = size - len(queued)
        lagging = await self.repo.lagging() if room > 0 else []
        for index, lag in enumerate(lagging):
            if room <= 0:
                break
            share = max(room // (len(lagging) - index), 1)
            entries = await self.repo.entries_after(lag.tenant_id, lag.cursor, share)
            if entries:
                events.extend(from_audit_entry(e) for e in entries)
                cursors[lag.tenant_id] = entries[-1].sequence
                room -= len(entries)
        return queued, events, cursors

    async def _deliver(self) -> _Outcome:
        """Send one batch. Raises `DatabaseError`; a transport failure is recorded and returned."""
        queued, from_trail, cursors = await self._batch()
        events = queued + from_trail
        if not events:
            return _Outcome(0, False)
        outbox_ids = [e.event_id for e in queued]
        try:
            await self.transport.send(events)
        except DeliveryError as exc:
            error = str(exc)
            log.warning("SIEM delivery failed; will retry", extra=fields(events=len(events), error=error))
            await self.repo.record_failure(error, len(events))
            return _Outcome(0, False, error)
        assert self._token is not None
        try:
            with trio.CancelScope(shield=True):  # sent: record it even if we are being stopped
                await self.repo.acknowledge(outbox_ids, cursors, len(events), lease=(LEASE, self._token))
        except LeaseLost as exc:
            log.warning("SIEM batch sent after the delivery lease was lost", extra=fields(error=str(exc)))
            self._token = None
            return _Outcome(len(events), False)
        return _Outcome(len(events), len(events) >= self.settings.batch_size)

    async def _test(self) -> TestResult:
        started = time.perf_counter()
        event = test_event()
        flushed, error = 0, None
        try:
            if await self._holds_lease():
                result = await self._deliver()
                flushed, error = result.sent, result.error
        except DatabaseError as exc:
            log.warning("SIEM test: pending events not flushed", extra=fields(error=str(exc)))
        if error is None:
            try:
                await self.transport.send([event])
            except DeliveryError as exc:
                error = str(exc)
                with contextlib.suppress(DatabaseError):
                    await self.repo.record_failure(error, 1)
        return TestResult(
            accepted=error is None,
            event_id=event.event_id,
            flushed=flushed,
            error=error,
            latency_ms=round((time.perf_counter() - started) * 1000, 2),
        )


def siem_forwarder(services: Services) -> ActorRef[_Tick | SendTest]:
    """This process's forwarder, started on first use. Raises `ValueError` when forwarding is off."""
    if not services.settings.siem.enabled:
        raise ValueError("SIEM forwarding is not configured")
    return services.actors.get_or_spawn("siem-forwarder", lambda: SiemForwarder(services))
