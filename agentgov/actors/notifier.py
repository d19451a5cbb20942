"""The per-tenant notifier actor (`notifier:<tenant_id>`): fans events out to live subscribers.

Interface used by other modules:

* `notifier(services, tenant_id) -> ActorRef` - the tenant's notifier, started on first use.
* `ref.tell(Publish(event, data))` - deliver `data` to every subscriber of the tenant allowed to see `event`
  (one of `EVENTS`; an unknown name raises `ValueError` when the message is built). Fire-and-forget: with
  no subscriber the event is dropped; `tell` raises `MailboxFull` / `ActorStopped` like any `tell`.
* `await ref.ask(Subscribe(role, label))` -> `Subscription`: a bounded receive channel of encoded JSON
  messages; `ref.tell(Unsubscribe(subscription_id))` when done (idempotent).
* `await ref.ask(GetStats())` -> `NotifierStats`.

Every message has ONE shape (the envelope), encoded once per event and shared by every subscriber::

    {"event": "hitl.requested", "tenant_id": "<uuid>", "timestamp": "2026-01-01T00:00:00.000000Z",
     "data": {...}}

`system.status` is sent to a new subscriber first, then to all subscribers every `NOTIFY_STATUS_INTERVAL`
seconds. Each event needs a permission (`EVENT_PERMISSIONS`): a subscriber receives only the events its role
may read (e.g. `anomaly.detected` needs `anomalies:read`, Security Analyst+). A tenant's notifier only ever
holds that tenant's subscribers, so tenants never see each other's events.

Direct writes: a subscriber whose connection attached a `DirectWriter` (`Subscription.writer`) and has
nothing queued gets the event's frame, built once per event, written to its socket at once by the notifier;
what the socket does not take at once is queued (as `bytes`, the rest of the frame) for the subscriber's
task like any event (`str`). The subscriber's task calls `Subscription.sent()` after each item it sends.

Slow subscribers (overflow policy): each subscriber has its own buffer of `buffer_size` events filled with
`send_nowait`, so publishing never waits for anyone. An event that does not fit a full buffer is not
delivered to that subscriber; instead the subscriber is disconnected (`Subscription.close_reason` is
`"slow"`: the WebSocket is closed with code 4008 after the events already buffered are sent). So a
connected subscriber receives every event it may see, in order, or learns it lost some by being
disconnected; it never silently misses events, and it never delays the others.

Lifetime: the actor does not idle-stop while it has subscribers (a timer in its nursery sends it a `_Tick`
at least every third of the idle timeout, which also drives the periodic `system.status`); without
subscribers it stops after the usual idle timeout. Cancellation / stop: `on_stop` closes every subscriber's
channel with `close_reason = "stopped"` (a WebSocket subscribes again, or closes with 1001 when the service
is shutting down); the timer task dies with the actor's nursery. A crash restarts the actor with no
subscribers (the old ones are told "stopped" and resubscribe).

Across processes: producers publish through `agentgov.actors.relay.publish_event`, which also relays the
event through Redis pub/sub (when `REDIS_URL` is set) to the notifiers of the other processes.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import logging
import math
from typing import TYPE_CHECKING, Any, Protocol

import trio

from agentgov import __version__
from agentgov.actors.runtime import Actor, ActorContext, ActorRef, Request
from agentgov.actors.ticker import SelfTicker
from agentgov.logs import fields
from agentgov.security.roles import Permission, Role, has_permission
from agentgov.timeutil import now_iso

if TYPE_CHECKING:
    from agentgov.services import Services

log = logging.getLogger("agentgov.notifier")

#: The events the channel carries and the permission a subscriber needs to receive each.
EVENT_PERMISSIONS: dict[str, Permission] = {
    "policy.violated": Permission.POLICIES_READ,
    "anomaly.detected": Permission.ANOMALIES_READ,
    "hitl.requested": Permission.HITL_READ,
    "hitl.resolved": Permission.HITL_READ,
    "system.status": Permission.STATUS_READ,
}
EVENTS = tuple(EVENT_PERMISSIONS)

DEFAULT_BUFFER_SIZE = 256

CLOSE_SLOW = "slow"
CLOSE_STOPPED = "stopped"


# ---- messages -------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Publish:
    """Fan `data` out as `event` to the tenant's subscribers. Raises `ValueError` for an unknown event."""

    event: str
    data: dict[str, Any]

    def __post_init__(self) -> None:
        if self.event not in EVENT_PERMISSIONS:
            raise ValueError(f"unknown event {self.event!r}; expected one of: {', '.join(EVENTS)}")


@dataclasses.dataclass(frozen=True)
class Subscribe(Request["Subscription"]):
    """Open a subscription for a principal of `role`; `label` names it in logs and stats."""

    role: Role
    label: str = ""


@dataclasses.dataclass(frozen=True)
class Unsubscribe:
    subscription_id: int


@dataclasses.dataclass(frozen=True)
class GetStats(Request["NotifierStats"]):
    pass


@dataclasses.dataclass(frozen=True)
class _Tick:
    """Sent by the actor's own timer: periodic status, and keeps the actor alive while subscribed."""


NotifierMessage = Publish | Subscribe | Unsubscribe | GetStats | _Tick


# ---- records --------------------------------------------------------------------------------------------


@dataclasses.dataclass(eq=False)
class Subscription:
    """One subscriber's end: read encoded messages from `receive` until `trio.EndOfChannel`.

    When the channel ends, `close_reason` says why: `"slow"` (its buffer overflowed: disconnect it) or
    `"stopped"` (the notifier stopped or restarted: subscribe again, or give up if the service is stopping).
    """

    id: int
    tenant_id: str
    label: str
    role: Role
    receive: trio.MemoryReceiveChannel[str | bytes]
    close_reason: str | None = None
    writer: DirectWriter | None = None
    queued: int = 0

    def sent(self) -> None:
        """Call after sending each item read from `receive` (the notifier writes directly only when none
        is queued or being sent, so the subscriber's events stay in order)."""
        self.queued -= 1


class DirectWriter(Protocol):
    """Writes whole frames to a subscriber's connection (`agentgov.http.ws_frames.FrameWriter`)."""

    def write_now(self, frame: bytes) -> int:
        """Bytes of `frame` written at once, without waiting (0..len(frame)). Never raises."""
        ...


@dataclasses.dataclass
class _Subscriber:
    subscription: Subscription
    send: trio.MemorySendChannel[str | bytes]
    delivered: int = 0


@dataclasses.dataclass(frozen=True)
class NotifierStats:
    tenant_id: str
    subscribers: int
    published: int
    delivered: int
    disconnected_slow: int
    buffer_size: int


# ---- the actor ------------------------------------------------------------------------------------------


def encode(event: str, tenant_id: str, data: dict[str, Any], timestamp: str | None = None) -> str:
    """The one JSON envelope of every message on the channel."""
    return json.dumps(
        {"event": event, "tenant_id": tenant_id, "timestamp": timestamp or now_iso(), "data": data},
        separators=(",", ":"),
        default=str,
    )


_TEXT_FIN = 0x81


def text_frame(text: str) -> bytes:
    """One complete, unmasked (server-to-client) text frame carrying `text`."""
    payload = text.encode("utf-8")
    size = len(payload)
    if size < 126:
        header = bytes((_TEXT_FIN, size))
    elif size < 1 << 16:
        header = bytes((_TEXT_FIN, 126)) + size.to_bytes(2, "big")
    else:
        header = bytes((_TEXT_FIN, 127)) + size.to_bytes(8, "big")
    return header + payload


class NotifierActor(Actor[NotifierMessage]):
    """Owns one tenant's subscribers. See the module docstring for the delivery and overflow policy."""

    _ids = itertools.count(1)

    def __init__(
        self,
        services: Services,
        tenant_id: str,
        *,
        buffer_size: int = DEFAULT_BUFFER_SIZE,
        status_interval: float | None = None,
    ) -> None:
        self.services = services
        self.tenant_id = tenant_id
        self.buffer_size = buffer_size
        self.status_interval = (
            float(services.settings.notify_status_interval) if status_interval is None else status_interval
        )
        self._subscribers: dict[int, _Subscriber] = {}
        self._published = 0
        self._delivered = 0
        self._disconnected_slow = 0
        self._next_status = math.inf
        self._keepalive = math.inf
        self._ticker = SelfTicker(
            _Tick(), self._next_wake, lambda: min(1.0, self._keepalive)
        )  # when busy, the mailbox keeps the actor alive

    async def on_start(self, ctx: ActorContext) -> None:
        self._keepalive = ctx.system.idle_timeout / 3
        self._ticker.start(ctx)

    async def on_stop(self) -> None:
        for subscriber in list(self._subscribers.values()):
            self._close(subscriber, CLOSE_STOPPED)

    async def handle(self, message: NotifierMessage) -> Any:
        match message:
            case Publish(event=event, data=data):
                self._publish(event, data)
                return None
            case Subscribe(role=role, label=label):
                return self._subscribe(role, label)
            case Unsubscribe(subscription_id=sid):
                subscriber = self._subscribers.get(sid)
                if subscriber is not None:
                    self._close(subscriber, None)
                return None
            case GetStats():
                return NotifierStats(
                    tenant_id=self.tenant_id,
                    subscribers=len(self._subscribers),
                    published=self._published,
                    delivered=self._delivered,
                    disconnected_slow=self._disconnected_slow,
                    buffer_size=self.buffer_size,
                )
            case _Tick():
                if self._subscribers and trio.current_time() >= self._next_status:
                    self._publish("system.status", self._status())
                    self._next_status = trio.current_time() + self.status_interval
                self._ticker.poke()
                return None
            case _:
                raise TypeError(f"unexpected message {message!r}")

    # -- internals --

    def _subscribe(self, role: Role, label: str) -> Subscription:
        send, receive = trio.open_memory_channel[str | bytes](self.buffer_size)
        subscription = Subscription(
            id=next(self._ids), tenant_id=self.tenant_id, label=label, role=role, receive=receive
        )
        subscriber = _Subscriber(subscription, send)
        self._subscribers[subscription.id] = subscriber
        if len(self._subscribers) == 1:
            self._next_status = trio.current_time() + self.status_interval
        self._deliver(subscriber, "system.status", encode("system.status", self.tenant_id, self._status()))
        self._ticker.poke()
        log.debug("subscribed", extra=fields(tenant_id=self.tenant_id, subscriber=label, id=subscription.id))
        return subscription

    def _publish(self, event: str, data: dict[str, Any]) -> None:
        self._published += 1
        if not self._subscribers:
            return
        message = encode(event, self.tenant_id, data)
        frame: bytes | None = None
        for subscriber in list(self._subscribers.values()):
            subscription = subscriber.subscription
            writer = subscription.writer
            if writer is not None and subscription.queued == 0:
                if not has_permission(subscription.role, EVENT_PERMISSIONS[event]):
                    continue
                if frame is None:
                    frame = text_frame(message)
                written = writer.write_now(frame)
                if written == len(frame):
                    subscriber.delivered += 1
                    self._delivered += 1
                    continue
                self._deliver(subscriber, event, frame[written:] if written else message)
            else:
                self._deliver(subscriber, event, message)

    def _deliver(self, subscriber: _Subscriber, event: str, message: str | bytes) -> None:
        if not has_permission(subscriber.subscription.role, EVENT_PERMISSIONS[event]):
            return
        try:
            subscriber.send.send_nowait(message)
        except trio.WouldBlock:
            self._disconnected_slow += 1
            log.warning(
                "subscriber too slow; disconnecting it",
                extra=fields(
                    tenant_id=self.tenant_id,
                    subscriber=subscriber.subscription.label,
                    buffered=self.buffer_size,
                    delivered=subscriber.delivered,
                ),
            )
            self._close(subscriber, CLOSE_SLOW)
            return
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            self._close(subscriber, None)  # the subscriber went away without unsubscribing
            return
        subscriber.subscription.queued += 1
        subscriber.delivered += 1
        self._delivered += 1

    def _close(self, subscriber: _Subscriber, reason: str | None) -> None:
        subscription = subscriber.subscription
        subscription.writer = None
        if subscription.close_reason is None:
            subscription.close_reason = reason
        self._subscribers.pop(subscription.id, None)
        subscriber.send.close()

    def _status(self) -> dict[str, Any]:
        svc = self.services
        return {
            "status": "shutting_down" if svc.shutting_down.is_set() else "ok",
            "version": __version__,
            "uptime_seconds": round(svc.uptime_seconds, 3),
            "subscribers": len(self._subscribers),
            "status_interval_seconds": self.status_interval,
            "instance": svc.instance_id,
        }

    def _next_wake(self) -> float:
        """The next status time (at least every third of the idle timeout) while subscribed."""
        if not self._subscribers:
            return math.inf
        return min(self._next_status, trio.current_time() + self._keepalive)


def notifier(
    services: Services,
    tenant_id: str,
    *,
    buffer_size: int = DEFAULT_BUFFER_SIZE,
    status_interval: float | None = None,
) -> ActorRef[NotifierMessage]:
    """The tenant's notifier actor (`notifier:<tenant_id>`), started on first use.

    `buffer_size` (events buffered per subscriber) and `status_interval` (seconds between `system.status`
    events; default the `NOTIFY_STATUS_INTERVAL` setting) apply only when this call starts the actor.
    Raises `ActorStopped` while the service is stopping.
    """

    def make() -> NotifierActor:
        return NotifierActor(services, tenant_id, buffer_size=buffer_size, status_interval=status_interval)

    return services.actors.get_or_spawn(f"notifier:{tenant_id}", make)


__all__ = [
    "EVENTS",
    "EVENT_PERMISSIONS",
    "GetStats",
    "NotifierActor",
    "NotifierStats",
    "Publish",
    "Subscribe",
    "Subscription",
    "Unsubscribe",
    "encode",
    "notifier",
]
