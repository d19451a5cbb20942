"""The actor runtime: bounded mailboxes, ask/tell, one-for-one supervision, idle stop.

An actor is an object with `handle(message)` run by one task that owns its state; nothing else touches
that state. Callers talk to it through an `ActorRef`:

* `ref.tell(msg)` queues a message and returns at once (no reply).
* `await ref.ask(msg)` queues a message with a one-slot reply channel and waits for the reply. It takes
  no timeout: wrap it in `trio.fail_after` / `trio.move_on_after`. Cancelling the caller abandons the reply;
  the actor notices the closed reply channel and goes on serving.

Both raise `MailboxFull` when the bounded mailbox has no room (the HTTP layer answers 503) and
`ActorStopped` when the actor is stopping or gone.

Error policy (as in pykka): an exception raised while handling an `ask` goes back to that caller and the
actor keeps serving. A `Rejected` failure (the message itself was refused, e.g. it holds a value that cannot
be stored) is never a crash: for a `tell` it is counted in the actor's `rejected` stat, and the actor, which
knows what the message was, logs it. Any other exception (from a `tell`, `on_start`, or a background task started in the
actor's context) is a crash: the supervisor logs it with the actor's name and restarts that actor alone
with a fresh instance and the same mailbox, unless it crashed more than `max_restarts` times within
`restart_window` seconds (measured with `trio.current_time()`), in which case it is stopped for good and
pending asks get `ActorStopped`. `trio.Cancelled` is never treated as a crash.

Published views: an actor may `ctx.publish(value)` an object that other tasks read without a message hop
(`system.view(name, kind)`), e.g. a compiled policy set. Only the actor writes what it published; the runtime
withdraws it when that incarnation ends (idle stop, crash, shutdown), so a reader never sees the view of an
actor that is gone and falls back to asking (which starts the actor again).

Stopping: `ActorSystem.stop()` closes every mailbox to new messages, lets each actor handle what is
already queued within `drain_timeout`, runs `on_stop`, and answers whatever is still pending with
`ActorStopped`. Actors spawned per tenant also stop by themselves after `idle_timeout` seconds without
a message and are spawned again on next use.
"""

from __future__ import annotations

import dataclasses
import logging
import math
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, suppress
from typing import Any, Generic, TypeVar, overload

import trio
from outcome import Error, Outcome, Value

from agentgov.logs import fields, request_id_var

log = logging.getLogger("agentgov.actors")

M = TypeVar("M")


class ActorError(Exception):
    """Base class of the runtime's own errors."""


class MailboxFull(ActorError):
    """The actor's bounded mailbox has no room for another message."""

    def __init__(self, actor: str) -> None:
        super().__init__(f"the {actor} mailbox is full")
        self.actor = actor


class ActorStopped(ActorError):
    """The actor is stopping or stopped and will not handle the message."""

    def __init__(self, actor: str) -> None:
        super().__init__(f"the {actor} actor is stopped")
        self.actor = actor


class Rejected(ActorError):
    """The actor refused this message for what it holds, not for its own state: answering a `tell` with it is
    not a crash (the actor goes on serving; the refusal is counted in `ActorStats.rejected`)."""


class InvalidMessage(Rejected, ValueError):
    """The message's content is invalid by the actor's own rules (the text says what is wrong). The HTTP layer
    answers 422; unlike a bare `ValueError`, it never stands for a bug."""


class ActorCrashed(ActorError):
    """The actor crashed while the message was being handled (it is being restarted)."""

    def __init__(self, actor: str, cause: BaseException) -> None:
        super().__init__(f"the {actor} actor crashed: {cause!r}")
        self.actor = actor
        self.cause = cause
        self.__cause__ = cause


# A handled message's result is an `Outcome` of trio's `outcome` library: `Value(reply)` or `Error(exception)`.


@dataclasses.dataclass(slots=True)
class _Envelope:
    message: Any
    reply: trio.MemorySendChannel[Outcome] | None
    # The API request being served by the sender (`tell`/`ask` run in its task): set while the message is
    # handled alone, so the actor's log lines and the events it records name the request.
    request_id: str | None = dataclasses.field(default_factory=request_id_var.get)


R = TypeVar("R")
V = TypeVar("V")


class Request(Generic[R]):
    """Base of a message that is asked: `R` is the type of its reply, so `await ref.ask(msg)` is typed `R`
    (for other messages `ask` returns `Any`). Adds no fields or behaviour."""

    __slots__ = ()


class ActorContext:
    """What a running actor may use: its name, its own reference, the system, a nursery for its own
    background tasks, and `publish` for a view that others read without a message.

    Tasks started in `nursery` live as long as this incarnation of the actor; an exception in one is a
    crash of the actor.
    """

    def __init__(self, cell: _Cell, system: ActorSystem, nursery: trio.Nursery) -> None:
        self.name = cell.name
        self.ref: ActorRef[Any] = ActorRef(cell)
        self.system = system
        self.nursery = nursery
        self._cell = cell

    def publish(self, value: object) -> None:
        """Make `value` this actor's published view (replacing the previous one) until this incarnation
        ends; readers get it from `system.view(name, kind)`."""
        self._cell.view = value


class Actor(Generic[M]):
    """Base class. Override `handle`; optionally `on_start`, `on_stop` and `handle_batch`.

    `max_batch` bounds how many queued messages are passed to one `handle_batch` call. `linger` (seconds)
    lets a batch made only of `tell`s wait that long for more messages before it is handled, so that
    fire-and-forget work arriving at a steady rate is handled in fewer, larger batches; a message someone
    waits for (`ask`) ends the wait at once, and so does closing the mailbox.
    """

    max_batch: int = 1
    linger: float = 0.0

    async def on_start(self, ctx: ActorContext) -> None:
        """Load state. An exception here is a crash."""

    async def handle(self, message: M) -> Any:
        raise NotImplementedError

    async def handle_batch(self, messages: list[M]) -> list[Outcome]:
        """Handle queued messages together; return one outcome per message, in order.

        The default handles them one by one. Override to batch I/O (e.g. one transaction for many writes).
        An exception raised here (rather than returned as an `Error` outcome) fails the whole batch and is a crash.
        """
        outcomes: list[Outcome] = []
        for message in messages:
            try:
                outcomes.append(Value(await self.handle(message)))
            except Exception as exc:
                outcomes.append(Error(exc))
        return outcomes

    async def on_stop(self) -> None:
        """Flush and release resources. Runs under a shielded, bounded cancel scope."""


@dataclasses.dataclass
class ActorStats:
    name: str
    capacity: int
    queued: int = 0
    handled: int = 0
    failed: int = 0
    rejected: int = 0
    restarts: int = 0
    state: str = "starting"

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


class ActorRef(Generic[M]):
    """A handle to send messages to one actor. Cheap to copy; safe to keep."""

    def __init__(self, cell: _Cell) -> None:
        self._cell = cell

    @property
    def name(self) -> str:
        return self._cell.name

    def tell(self, message: M) -> None:
        """Queue `message` without waiting. Raises `MailboxFull` or `ActorStopped`."""
        self._cell.put(_Envelope(message, None))

    @overload
    async def ask(self, message: Request[R]) -> R: ...

    @overload
    async def ask(self, message: M) -> Any: ...

    async def ask(self, message: Any) -> Any:
        """Queue `message` and wait for the reply (typed by `Request[R]`); re-raises the handler's exception.

        Raises `MailboxFull`, `ActorStopped`, or `ActorCrashed`. Cancellation abandons the reply (the
        message may still be handled).
        """
        send, receive = trio.open_memory_channel[Outcome](1)
        self._cell.put(_Envelope(message, send))
        with receive:
            try:
                result = await receive.receive()
            except trio.EndOfChannel:
                raise ActorStopped(self.name) from None
        return result.unwrap()


class _Cell:
    """The mailbox and bookkeeping of one actor, shared by its incarnations."""

    def __init__(self, name: str, factory: Callable[[], Actor[Any]], capacity: int, idle_timeout: float):
        self.name = name
        self.factory = factory
        self.idle_timeout = idle_timeout
        self.send, self.receive = trio.open_memory_channel[_Envelope](capacity)
        self.stats = ActorStats(name=name, capacity=capacity)
        self.crash_times: deque[float] = deque()
        self.closed = False
        self.done = trio.Event()
        self.view: object | None = None  # what the running incarnation published; None once it ends

    def put(self, envelope: _Envelope) -> None:
        if self.closed:
            raise ActorStopped(self.name)
        try:
            self.send.send_nowait(envelope)
        except trio.WouldBlock:
            raise MailboxFull(self.name) from None
        except (trio.ClosedResourceError, trio.BrokenResourceError):
            raise ActorStopped(self.name) from None

    def close(self) -> None:
        """Refuse new messages; queued ones are still delivered to the actor."""
        self.closed = True
        self.send.close()

    @property
    def queued(self) -> int:
        return self.receive.statistics().current_buffer_used

    def answer_pending(self) -> None:
        """Answer everything still queued with `ActorStopped`."""
        while True:
            try:
                envelope = self.receive.receive_nowait()
            except (trio.WouldBlock, trio.EndOfChannel, trio.ClosedResourceError):
                return
            _reply(envelope, Error(ActorStopped(self.name)))


def _take_queued(cell: _Cell, batch: list[_Envelope], limit: int) -> None:
    """Move already-queued messages into `batch` until it holds `limit`."""
    while len(batch) < limit:
        try:
            batch.append(cell.receive.receive_nowait())
        except (trio.WouldBlock, trio.EndOfChannel):
            return


async def _linger(cell: _Cell, batch: list[_Envelope], limit: int, seconds: float) -> None:
    """While `batch` holds only tells and has room, wait up to `seconds` for more messages.

    Stops early when a message with a reply channel arrives or the mailbox is closed. Cancellation-safe:
    a message is either in `batch` or still in the mailbox.
    """
    with trio.move_on_after(seconds):
        while len(batch) < limit and all(e.reply is None for e in batch):
            try:
                batch.append(await cell.receive.receive())
            except trio.EndOfChannel:
                return
            _take_queued(cell, batch, limit)


def _reply(envelope: _Envelope, outcome: Outcome) -> None:
    """Send the outcome; a caller that left (closed its end) is not an error."""
    if envelope.reply is None:
        return
    with suppress(trio.BrokenResourceError, trio.ClosedResourceError, trio.WouldBlock):
        envelope.reply.send_nowait(outcome)
    envelope.reply.close()


class ActorSystem:
    """Spawns and supervises actors in its own nursery. Open it with `ActorSystem.open()`."""

    def __init__(
        self,
        nursery: trio.Nursery,
        *,
        mailbox_capacity: int = 1024,
        idle_timeout: float = 300.0,
        max_restarts: int = 3,
        restart_window: float = 10.0,
        drain_timeout: float = 5.0,
    ) -> None:
        self._nursery = nursery
        self.mailbox_capacity = mailbox_capacity
        self.idle_timeout = idle_timeout
        self.max_restarts = max_restarts
        self.restart_window = restart_window
        self.drain_timeout = drain_timeout
        self._cells: dict[str, _Cell] = {}
        self._stopping = False

    @classmethod
    @asynccontextmanager
    async def open(cls, **options: Any) -> AsyncIterator[ActorSystem]:
        """Run an actor system for the duration of the block; leaving it stops every actor gracefully."""
        async with trio.open_nursery() as nursery:
            system = cls(nursery, **options)
            try:
                yield system
            finally:
                with trio.move_on_after(system.drain_timeout + 5, shield=True):
                    await system.stop()
                nursery.cancel_scope.cancel()

    def spawn(self, name: str, factory: Callable[[], Actor[M]], *, capacity: int | None = None) -> ActorRef[M]:
        """Start a long-lived actor. Raises `ValueError` if the name is taken, `ActorStopped` if stopping."""
        if name in self._cells:
            raise ValueError(f"an actor named {name!r} already exists")
        return ActorRef(self._start(name, factory, capacity, math.inf))

    def get_or_spawn(self, name: str, factory: Callable[[], Actor[M]], *, capacity: int | None = None) -> ActorRef[M]:
        """The actor `name`, started on first use; it stops itself after `idle_timeout` without messages."""
        cell = self._cells.get(name)
        if cell is None or cell.closed:
            cell = self._start(name, factory, capacity, self.idle_timeout)
        return ActorRef(cell)

    def find(self, name: str) -> ActorRef[Any] | None:
        """The live actor `name`, or None. Never starts it."""
        cell = self._cells.get(name)
        return None if cell is None or cell.closed else ActorRef(cell)

    def view(self, name: str, kind: type[V]) -> V | None:
        """What the live actor `name` published (an instance of `kind`), or None: not running, not published
        yet, or its last incarnation ended. Never waits and never starts the actor."""
        cell = self._cells.get(name)
        value = None if cell is None else cell.view
        return value if isinstance(value, kind) else None

    def stats(self) -> list[dict[str, Any]]:
        """A snapshot of every live actor's mailbox and counters."""
        out = []
        for cell in self._cells.values():
            cell.stats.queued = cell.queued
            out.append(cell.stats.as_dict())
        return out

    async def stop(self) -> None:
        """Close all mailboxes, let actors drain within `drain_timeout`, then answer what is left."""
        self._stopping = True
        cells = list(self._cells.values())
        for cell in cells:
            if not cell.closed:
                cell.close()
        with trio.move_on_after(self.drain_timeout):
            for cell in cells:
                await cell.done.wait()
        for cell in cells:
            cell.answer_pending()

    def _start(self, name: str, factory: Callable[[], Actor[Any]], capacity: int | None, idle: float) -> _Cell:
        if self._stopping:
            raise ActorStopped(name)
        cell = _Cell(name, factory, capacity or self.mailbox_capacity, idle)
        self._cells[name] = cell
        self._nursery.start_soon(self._supervise, cell, name=f"actor:{name}")
        return cell

    async def _supervise(self, cell: _Cell) -> None:
        try:
            while True:
                try:
                    await self._run_incarnation(cell)
                    return
                except Exception as exc:
                    if self._give_up(cell, exc):
                        return
        finally:
            cell.stats.state = "stopped"
            if not cell.closed:
                cell.close()
            cell.answer_pending()
            if self._cells.get(cell.name) is cell:
                del self._cells[cell.name]
            cell.done.set()

    def _give_up(self, cell: _Cell, exc: Exception) -> bool:
        now = trio.current_time()
        cell.crash_times.append(now)
        while cell.crash_times and cell.crash_times[0] < now - self.restart_window:
            cell.crash_times.popleft()
        if len(cell.crash_times) > self.max_restarts:
            log.error(
                "actor crashed; restart limit reached, stopping it",
                exc_info=exc,
                extra=fields(actor=cell.name, crashes=len(cell.crash_times), window_s=self.restart_window),
            )
            return True
        cell.stats.restarts += 1
        log.error("actor crashed; restarting", exc_info=exc, extra=fields(actor=cell.name))
        return False

    async def _run_incarnation(self, cell: _Cell) -> None:
        actor = cell.factory()
        try:
            async with trio.open_nursery() as nursery:
                await actor.on_start(ActorContext(cell, self, nursery))
                cell.stats.state = "running"
                await self._serve(cell, actor)
                nursery.cancel_scope.cancel()
        finally:
            cell.view = None
            with trio.move_on_after(self.drain_timeout, shield=True):
                await actor.on_stop()

    async def _serve(self, cell: _Cell, actor: Actor[Any]) -> None:
        """Handle messages until the mailbox is closed and empty, or the actor idles out."""
        while True:
            envelope: _Envelope | None = None
            with trio.move_on_after(cell.idle_timeout):
                try:
                    envelope = await cell.receive.receive()
                except trio.EndOfChannel:
                    return
            if envelope is None:
                if cell.queued == 0 and not cell.closed:
                    log.debug("actor idle; stopping", extra=fields(actor=cell.name))
                    cell.close()
                    return
                continue
            batch = [envelope]
            limit = max(1, actor.max_batch)
            _take_queued(cell, batch, limit)
            if actor.linger > 0:
                await _linger(cell, batch, limit, actor.linger)
            await self._handle(cell, actor, batch)

    async def _handle(self, cell: _Cell, actor: Actor[Any], batch: list[_Envelope]) -> None:
        request_id_var.set(batch[0].request_id if len(batch) == 1 else None)
        try:
            outcomes = await actor.handle_batch([e.message for e in batch])
            if len(outcomes) != len(batch):
                raise RuntimeError(f"handle_batch returned {len(outcomes)} outcomes for {len(batch)} messages")
        except trio.Cancelled:
            for envelope in batch:
                _reply(envelope, Error(ActorStopped(cell.name)))
            raise
        except Exception as exc:
            for envelope in batch:
                _reply(envelope, Error(ActorCrashed(cell.name, exc)))
            raise
        crash: BaseException | None = None
        for envelope, outcome in zip(batch, outcomes, strict=True):
            cell.stats.handled += 1
            if isinstance(outcome, Error):
                cell.stats.failed += 1
                if isinstance(outcome.error, Rejected):
                    cell.stats.rejected += 1
                elif envelope.reply is None and crash is None:
                    crash = outcome.error
            _reply(envelope, outcome)
        if crash is not None:
            raise crash
