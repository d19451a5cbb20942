"""Live notifications across processes, through Redis pub/sub.

`publish_event(services, tenant_id, event, data)` is how every producer publishes a WebSocket event: it tells
this process's notifier of the tenant (its subscribers get the event at once), and, when `REDIS_URL` is set,
this process's `EventRelay` (`event-relay`), which publishes it on the Redis channel `<REDIS_PREFIX>events`
(a batch of queued events in one pipeline, in order). Every process's relay listens on that channel and hands
each event from another process to its own notifier of that tenant, if it has one (a notifier lives while it
has subscribers; a process without subscribers of the tenant drops the event). The envelope names the
process it came from, so no process delivers its own events twice. Tenant isolation and the slow-subscriber
policy are the notifier's, as in one process.

Why pub/sub and not streams: notifications are live, not a log (a client that reconnects resubscribes, and
the audit trail, exports and the SIEM are the durable record); pub/sub delivers in about a millisecond with
nothing stored, where a stream would need trimming and a read position per process. What is lost: events
published while a process is disconnected from Redis (it logs the outage and resubscribes with backoff).

`publish_event` never raises and never waits (a full mailbox is logged, as before). The listener runs redis-py
(sync) in a worker thread, polling with a 1 s timeout so that stopping the actor (shutdown) ends it promptly.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import logging
from typing import TYPE_CHECKING, Any

import trio
from outcome import Outcome, Value

from agentgov.actors.notifier import Publish, notifier
from agentgov.actors.runtime import Actor, ActorContext, ActorRef, ActorStopped, MailboxFull
from agentgov.actors.ticker import PeriodicTicker
from agentgov.logs import fields

if TYPE_CHECKING:
    from agentgov.services import Services

log = logging.getLogger("agentgov.notify")

RETRY_FIRST = 0.5
RETRY_MAX = 15.0


def publish_event(services: Services, tenant_id: str, event: str, data: dict[str, Any]) -> None:
    """Deliver `event` to the tenant's subscribers on every process. Raises `ValueError` for an unknown event
    name (a programming error); otherwise never raises and never waits."""
    message = Publish(event, data)
    try:
        notifier(services, tenant_id).tell(message)
    except (MailboxFull, ActorStopped) as exc:
        log.warning("notification not sent", extra=fields(tenant_id=tenant_id, notice=event, error=str(exc)))
    if services.settings.redis_url:
        try:
            event_relay(services).tell(Outbound(tenant_id, event, data))
        except (MailboxFull, ActorStopped) as exc:
            log.warning("notification not relayed", extra=fields(tenant_id=tenant_id, notice=event, error=str(exc)))


@dataclasses.dataclass(frozen=True)
class Outbound:
    tenant_id: str
    event: str
    data: dict[str, Any]


@dataclasses.dataclass(frozen=True)
class _KeepAlive:
    pass


class EventRelay(Actor[Outbound | _KeepAlive]):
    max_batch = 500

    def __init__(self, services: Services) -> None:
        import redis

        self.services = services
        self.channel = f"{services.settings.redis_prefix}events"
        self._errors = (redis.RedisError, OSError)
        self._client = redis.Redis.from_url(
            services.settings.redis_url, socket_timeout=5, socket_connect_timeout=5, health_check_interval=30
        )
        self._limiter = trio.CapacityLimiter(1)  # one publishing thread keeps the order
        self._ticker = PeriodicTicker(max(1.0, services.settings.actor_idle_timeout / 3), _KeepAlive())
        self.relayed_in = 0
        self.relayed_out = 0

    async def on_start(self, ctx: ActorContext) -> None:
        self._ticker.start(ctx)
        ctx.nursery.start_soon(self._listen, name="event-relay:listen")

    async def on_stop(self) -> None:
        await trio.to_thread.run_sync(self._client.close)

    async def handle(self, message: Outbound | _KeepAlive) -> None:
        await self.handle_batch([message])

    async def handle_batch(self, messages: list[Outbound | _KeepAlive]) -> list[Outcome]:
        origin = self.services.instance_id
        payloads = [
            json.dumps({"origin": origin, "tenant_id": m.tenant_id, "event": m.event, "data": m.data}, default=str)
            for m in messages
            if isinstance(m, Outbound)
        ]
        if payloads:

            def send() -> None:
                pipe = self._client.pipeline(transaction=False)
                for payload in payloads:
                    pipe.publish(self.channel, payload)
                pipe.execute()

            try:
                await trio.to_thread.run_sync(send, limiter=self._limiter)
                self.relayed_out += len(payloads)
            except self._errors as exc:
                log.warning(
                    "notifications not relayed to other processes", extra=fields(events=len(payloads), error=str(exc))
                )
        if any(isinstance(m, _KeepAlive) for m in messages):
            self._ticker.poke()
        return [Value(None) for _ in messages]

    async def _listen(self) -> None:
        """Hand other processes' events to this process's notifiers until cancelled; reconnect on errors."""
        delay = RETRY_FIRST
        while True:
            pubsub = self._client.pubsub(ignore_subscribe_messages=True)
            try:
                await trio.to_thread.run_sync(pubsub.subscribe, self.channel)
                delay = RETRY_FIRST
                while True:
                    poll = functools.partial(pubsub.get_message, timeout=1.0)
                    message = await trio.to_thread.run_sync(poll, abandon_on_cancel=True)
                    if message is not None:
                        self._deliver(message.get("data"))
            except self._errors as exc:
                log.warning("event relay disconnected from Redis; retrying", extra=fields(error=str(exc)))
            finally:
                with trio.CancelScope(shield=True):
                    await trio.to_thread.run_sync(pubsub.close)
            await trio.sleep(delay)
            delay = min(RETRY_MAX, delay * 2)

    def _deliver(self, raw: Any) -> None:
        try:
            envelope = json.loads(raw)
            if envelope["origin"] == self.services.instance_id:
                return
            tenant_id, event, data = envelope["tenant_id"], envelope["event"], envelope["data"]
            message = Publish(event, data)
        except (ValueError, KeyError, TypeError) as exc:
            log.warning("unreadable relayed event dropped", extra=fields(error=str(exc)))
            return
        ref = self.services.actors.find(f"notifier:{tenant_id}")
        if ref is None:
            return  # no subscriber of that tenant here
        try:
            ref.tell(message)
            self.relayed_in += 1
        except (MailboxFull, ActorStopped) as exc:
            log.warning("relayed notification not delivered", extra=fields(tenant_id=tenant_id, error=str(exc)))


def event_relay(services: Services) -> ActorRef[Outbound | _KeepAlive]:
    """This process's relay (with Redis only), started on first use."""
    return services.actors.get_or_spawn("event-relay", lambda: EventRelay(services))
