"""A timer that wakes its own actor: it `tell`s the actor a tick message when the next wake time comes.

The actor owns its schedule: `next_wake()` (on the trio clock, `math.inf` for none) is read each time the
ticker re-arms, and the actor calls `poke()` whenever the schedule changed or it has handled a tick. Run
`ticker.run()` in the actor's context nursery, so it lives and dies with that incarnation.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import trio

from agentgov.actors.runtime import ActorRef, ActorStopped, MailboxFull


class SelfTicker:
    def __init__(self, ref: ActorRef[Any], tick: Any, next_wake: Callable[[], float], busy_retry: Callable[[], float]):
        self._ref = ref
        self._tick = tick
        self._next_wake = next_wake
        self._busy_retry = busy_retry
        self._changed = trio.Event()

    def poke(self) -> None:
        """The schedule changed, or the tick was handled: re-arm."""
        self._changed.set()

    async def run(self) -> None:
        """Tick until the actor stops. A full mailbox is retried after `busy_retry()` seconds (the queued
        messages keep the actor busy meanwhile). Cancellation stops the ticker and nothing else."""
        while True:
            changed = self._changed = trio.Event()
            with trio.move_on_at(self._next_wake()):
                await changed.wait()
                continue
            try:
                self._ref.tell(self._tick)
            except MailboxFull:
                await trio.sleep(self._busy_retry())
                continue
            except ActorStopped:
                return
            await changed.wait()  # poked once the tick is handled
