"""The one timer pattern of actors: a ticker that wakes its own actor by `tell`ing it a tick message.

The actor owns its schedule: `next_wake()` (on the trio clock, `math.inf` for none) is read each time the
ticker re-arms, and the actor calls `poke()` whenever the schedule changed or it has handled a tick. The tick
is an ordinary message, so the actor's state is only ever touched by the actor's own task. `start(ctx)` runs
the ticker in the actor's context nursery, so it lives and dies with that incarnation.

For a fixed period, `PeriodicTicker(seconds, tick)` wakes the actor `seconds` after it started and after
each handled tick.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import trio

from agentgov.actors.runtime import ActorContext, ActorRef, ActorStopped, MailboxFull


class SelfTicker:
    def __init__(self, tick: Any, next_wake: Callable[[], float], busy_retry: Callable[[], float]):
        self._tick = tick
        self._next_wake = next_wake
        self._busy_retry = busy_retry
        self._changed = trio.Event()

    def start(self, ctx: ActorContext) -> None:
        """Run in `ctx`'s nursery, telling `ctx.ref`."""
        ctx.nursery.start_soon(self.run, ctx.ref, name=f"{ctx.name}:timer")

    def poke(self) -> None:
        """The schedule changed, or the tick was handled: re-arm."""
        self._changed.set()

    async def run(self, ref: ActorRef[Any]) -> None:
        """Tick until the actor stops. A full mailbox is retried after `busy_retry()` seconds (the queued
        messages keep the actor busy meanwhile). Cancellation stops the ticker and nothing else."""
        while True:
            changed = self._changed = trio.Event()
            with trio.move_on_at(self._next_wake()):
                await changed.wait()
                continue
            try:
                ref.tell(self._tick)
            except MailboxFull:
                await trio.sleep(self._busy_retry())
                continue
            except ActorStopped:
                return
            await changed.wait()  # poked once the tick is handled


class PeriodicTicker(SelfTicker):
    """A ticker that sends `tick` `seconds` after `start` and after each handled tick (`poke`); a full mailbox
    skips to the next period."""

    def __init__(self, seconds: float, tick: Any) -> None:
        self._seconds = seconds
        self._due = math.inf
        super().__init__(tick, lambda: self._due, lambda: seconds)

    def start(self, ctx: ActorContext) -> None:
        self._due = trio.current_time() + self._seconds
        super().start(ctx)

    def poke(self) -> None:
        self._due = trio.current_time() + self._seconds
        super().poke()
