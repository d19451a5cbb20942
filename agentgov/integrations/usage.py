"""Counting each tenant's use of the framework integrations without a write per request.

`note_use(services, tenant_id, kind, agent_id)` is called by the policy check (`kind` "checks") and by
`POST /audit/log` ("actions") after they succeeded; when the request named an integration
(`catalogue.integration_var`) it tells this process's `IntegrationUsageActor` (`integration-usage`), which adds
it up in memory and every `FLUSH_SECONDS` writes the counts to `activity_counts`
(`integration.<name>.<kind>`, hourly) and each agent's last-seen time to `integration_agents`, in one
transaction. A failed write keeps the counts for the next flush; shutdown flushes once more. These are usage
figures: a full mailbox drops the note (logged), it never delays or fails the request.
"""

from __future__ import annotations

import collections
import dataclasses
import logging
from typing import TYPE_CHECKING, Any

import trio

from agentgov.actors.runtime import Actor, ActorContext, ActorRef, ActorStopped, MailboxFull
from agentgov.actors.ticker import PeriodicTicker
from agentgov.integrations.catalogue import integration_var
from agentgov.logs import fields
from agentgov.storage.activity import add_counts
from agentgov.storage.database import Connection, DatabaseError
from agentgov.timeutil import now_iso

if TYPE_CHECKING:
    from agentgov.services import Services

log = logging.getLogger("agentgov.integrations")

FLUSH_SECONDS = 2.0


@dataclasses.dataclass(frozen=True)
class Used:
    tenant_id: str
    integration: str
    kind: str  # "checks" or "actions"
    agent_id: str
    at: str


@dataclasses.dataclass(frozen=True)
class _Flush:
    pass


class IntegrationUsageActor(Actor[Used | _Flush]):
    max_batch = 1000

    def __init__(self, services: Services) -> None:
        self.services = services
        self._counts: collections.Counter[tuple[str, str, str]] = collections.Counter()  # (tenant, hour, metric)
        self._seen: dict[tuple[str, str, str], tuple[str, str]] = {}  # (tenant, integration, agent) -> first, last
        self._ticker = PeriodicTicker(FLUSH_SECONDS, _Flush())

    async def on_start(self, ctx: ActorContext) -> None:
        self._ticker.start(ctx)

    async def handle(self, message: Used | _Flush) -> None:
        match message:
            case Used():
                self._counts[
                    (message.tenant_id, message.at[:13], f"integration.{message.integration}.{message.kind}")
                ] += 1
                key = (message.tenant_id, message.integration, message.agent_id)
                first = self._seen.get(key, (message.at, message.at))[0]
                self._seen[key] = (first, message.at)
            case _Flush():
                try:
                    await self.flush()
                finally:
                    self._ticker.poke()

    async def on_stop(self) -> None:
        with trio.CancelScope(shield=True), trio.move_on_after(5):
            await self.flush()

    async def flush(self) -> None:
        counts, seen = self._counts, self._seen
        if not counts and not seen:
            return
        self._counts, self._seen = collections.Counter(), {}

        def run(conn: Connection) -> None:
            by_tenant_hour: dict[tuple[str, str], dict[str, int]] = collections.defaultdict(dict)
            for (tenant_id, hour, metric), n in counts.items():
                by_tenant_hour[(tenant_id, hour)][metric] = n
            for (tenant_id, hour), metrics in by_tenant_hour.items():
                add_counts(conn, tenant_id, hour, metrics)
            for (tenant_id, integration, agent_id), (first, last) in seen.items():
                conn.execute(
                    "INSERT INTO integration_agents (tenant_id, integration, agent_id, first_seen, last_seen)"
                    " VALUES (:t, :i, :a, :f, :l) ON CONFLICT (tenant_id, integration, agent_id)"
                    " DO UPDATE SET last_seen = excluded.last_seen"
                    " WHERE integration_agents.last_seen < excluded.last_seen",
                    {"t": tenant_id, "i": integration, "a": agent_id, "f": first, "l": last},
                )

        try:
            await self.services.db.write(run)
        except DatabaseError as exc:
            self._counts.update(counts)  # put back: written with the next flush
            for key, (first, last) in seen.items():
                newer = self._seen.get(key)
                self._seen[key] = (first, newer[1] if newer else last)
            log.warning("integration usage not written; will retry", extra=fields(error=str(exc)))


def integration_usage(services: Services) -> ActorRef[Any]:
    return services.actors.get_or_spawn("integration-usage", lambda: IntegrationUsageActor(services))


def note_use(services: Services, tenant_id: str, kind: str, agent_id: str) -> None:
    """Count one `kind` ("checks" or "actions") for the integration the current request named, if any.
    Never raises and never waits."""
    integration = integration_var.get()
    if integration is None:
        return
    try:
        integration_usage(services).tell(Used(tenant_id, integration, kind, agent_id, now_iso()))
    except (MailboxFull, ActorStopped):
        log.debug("integration usage note dropped", extra=fields(tenant_id=tenant_id, integration=integration))
