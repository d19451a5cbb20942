"""Platform-wide duties done by one process at a time, under a lease (`agentgov.storage.leases`).

This process's `DutiesActor` (`duties`, started with the app) tries, every third of `LEASE_SECONDS`, to take
or renew each duty's lease, and does the duty while it holds it:

- `approval-expiry`: expire the approval requests of every tenant that are past their expiry, and announce
  them (`hitl.resolved` to subscribers, `approval.expired` to the SIEM). Each tenant's HITL actor expires the
  requests it tracks on time; this sweep is the backstop for requests whose process died before their
  expiry, which another process thus expires within `LEASE_SECONDS` plus a tick.

- `orphaned-jobs`: fail the discovery clustering jobs whose process died (heartbeat older than
  `LEASE_SECONDS`), so that no job stays `queued` or `running` forever and the tenant's next job can start.

A process that dies stops renewing; another takes the lease over once it expired, with a new fencing token,
and a write of the old owner after that is refused (`LeaseLost`). Stopping the actor (shutdown) releases
its leases, so another process takes over at its next tick instead of waiting for the expiry.
SIEM delivery takes its own lease in `agentgov.siem.forwarder` (`siem-delivery`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
from typing import TYPE_CHECKING, Any

import trio

from agentgov.actors.hitl import announce
from agentgov.actors.runtime import Actor, ActorContext, ActorRef, Request
from agentgov.actors.ticker import PeriodicTicker
from agentgov.logs import fields
from agentgov.storage.database import DatabaseError
from agentgov.storage.discovery import DiscoveryRepo
from agentgov.storage.hitl import HitlRepo
from agentgov.storage.leases import LeaseLost, LeaseRepo
from agentgov.storage.orphans import owner_at_start
from agentgov.timeutil import now_iso

if TYPE_CHECKING:
    from agentgov.services import Services

log = logging.getLogger("agentgov.duties")

APPROVAL_EXPIRY = "approval-expiry"
ORPHANED_JOBS = "orphaned-jobs"
SWEEP_LIMIT = 500


@dataclasses.dataclass(frozen=True)
class _Tick:
    pass


@dataclasses.dataclass(frozen=True)
class RunDuties(Request[None]):
    """Do the duties now (as a tick does); answered once done."""


class DutiesActor(Actor[_Tick | RunDuties]):
    def __init__(self, services: Services) -> None:
        self.services = services
        self.leases = LeaseRepo(services.db)
        self.hitl = HitlRepo(services.db)
        self.discovery = DiscoveryRepo(services.db)
        self.held: dict[str, int] = {}  # duty -> fencing token, while this process holds it
        self._ticker = PeriodicTicker(max(0.2, services.settings.lease_seconds / 3), _Tick())

    async def on_start(self, ctx: ActorContext) -> None:
        owner = owner_at_start(self.services.db.dialect, self.services.instance_id)
        if owner is not None:  # with PostgreSQL the `orphaned-jobs` duty does it, under its lease
            try:
                failed = await self.discovery.fail_orphaned_jobs(lease_seconds=0, owner=owner)
            except DatabaseError as exc:
                log.warning("could not fail orphaned discovery jobs", extra=fields(error=str(exc)))
            else:
                if failed:
                    log.warning("discovery jobs of a stopped process marked failed", extra=fields(jobs=failed))
        self._ticker.start(ctx)

    async def on_stop(self) -> None:
        with trio.CancelScope(shield=True), trio.move_on_after(5):
            for name in list(self.held):
                with contextlib.suppress(DatabaseError):
                    await self.leases.release(name, self.services.instance_id)

    async def handle(self, message: _Tick | RunDuties) -> Any:
        try:
            await self._expire_approvals()
            await self._fail_orphaned_jobs()
        except DatabaseError as exc:
            log.warning("duties skipped: database unavailable", extra=fields(error=str(exc)))
        finally:
            if isinstance(message, _Tick):
                self._ticker.poke()
        return None

    async def _lease(self, name: str) -> int | None:
        token = await self.leases.acquire(name, self.services.instance_id, self.services.settings.lease_seconds)
        if token is None:
            if self.held.pop(name, None) is not None:
                log.info("duty lease lost", extra=fields(duty=name))
        elif self.held.get(name) != token:
            self.held[name] = token
            log.info("duty lease taken", extra=fields(duty=name, token=token))
        return token

    async def _expire_approvals(self) -> None:
        token = await self._lease(APPROVAL_EXPIRY)
        if token is None:
            return
        try:
            expired = await self.hitl.expire_overdue(now=now_iso(), limit=SWEEP_LIMIT, lease=(APPROVAL_EXPIRY, token))
        except LeaseLost:
            self.held.pop(APPROVAL_EXPIRY, None)
            return
        for record in expired:
            announce(self.services, "hitl.resolved", record)
        if expired:
            log.info("overdue approvals expired", extra=fields(count=len(expired)))

    async def _fail_orphaned_jobs(self) -> None:
        if await self._lease(ORPHANED_JOBS) is None:
            return
        failed = await self.discovery.fail_orphaned_jobs(lease_seconds=self.services.settings.lease_seconds)
        if failed:
            log.warning("discovery jobs of a stopped process marked failed", extra=fields(jobs=failed))


def duties(services: Services) -> ActorRef[_Tick | RunDuties]:
    """This process's duties actor, started on first use (by the app)."""
    return services.actors.get_or_spawn("duties", lambda: DutiesActor(services))
