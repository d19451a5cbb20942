"""A message an actor refuses for what it holds (`Rejected`) is never a crash, even when told."""

from __future__ import annotations

from typing import Any

import pytest
import trio
import trio.testing

from agentgov.actors.runtime import Actor, ActorSystem, Rejected


class Picky(Actor[Any]):
    """Accepts ints, refuses anything else."""

    def __init__(self) -> None:
        self.total = 0

    async def handle(self, message: Any) -> Any:
        if not isinstance(message, int):
            raise Rejected(f"not a number: {message!r}")
        self.total += message
        return self.total


async def test_told_rejections_do_not_crash_or_exhaust_restarts(autojump_clock: trio.testing.MockClock) -> None:
    async with ActorSystem.open(max_restarts=1, restart_window=1000.0) as system:
        ref = system.spawn("picky", Picky)
        ref.tell(5)
        for _ in range(50):
            ref.tell("poison")
            await trio.testing.wait_all_tasks_blocked()
        assert await ref.ask(1) == 6  # same incarnation: its state survived
        stats = system.stats()[0]
        assert stats["rejected"] == 50 and stats["restarts"] == 0 and stats["failed"] == 50


async def test_asked_rejection_goes_to_the_caller(autojump_clock: trio.testing.MockClock) -> None:
    async with ActorSystem.open() as system:
        ref = system.spawn("picky", Picky)
        with pytest.raises(Rejected, match="not a number"):
            await ref.ask("poison")
        assert system.stats()[0]["rejected"] == 1
