"""Published views, the actor's own reference and the periodic ticker, on trio's autojump clock."""

from __future__ import annotations

import dataclasses
from typing import Any

import trio
import trio.testing

from agentgov.actors.runtime import Actor, ActorContext, ActorSystem
from agentgov.actors.ticker import PeriodicTicker


@dataclasses.dataclass
class Board:
    """A published view: what readers see without a message."""

    value: int


@dataclasses.dataclass(frozen=True)
class Put:
    value: int


@dataclasses.dataclass(frozen=True)
class Crash:
    pass


@dataclasses.dataclass(frozen=True)
class Poke:
    pass


@dataclasses.dataclass(frozen=True)
class Tick:
    pass


class Publisher(Actor[Any]):
    def __init__(self) -> None:
        self.ctx: ActorContext | None = None
        self.pokes = 0

    async def on_start(self, ctx: ActorContext) -> None:
        self.ctx = ctx
        ctx.publish(Board(0))

    async def handle(self, message: Any) -> Any:
        assert self.ctx is not None
        match message:
            case Put(value):
                self.ctx.publish(Board(value))
                return value
            case Crash():
                raise RuntimeError("boom")
            case Poke():
                self.pokes += 1
                if self.pokes < 3:
                    self.ctx.ref.tell(Poke())  # the actor's own reference, from its context
                return self.pokes
        raise TypeError(message)


async def test_view_is_published_replaced_and_typed(autojump_clock: trio.testing.MockClock) -> None:
    async with ActorSystem.open() as system:
        assert system.view("board", Board) is None  # not running: nothing published
        ref = system.spawn("board", Publisher)
        await ref.ask(Put(1))
        assert system.view("board", Board) == Board(1)
        await ref.ask(Put(2))
        assert system.view("board", Board) == Board(2)
        assert system.view("board", dict) is None  # another type is not what was published
        assert system.view("missing", Board) is None


async def test_view_is_withdrawn_when_the_actor_idles_out(autojump_clock: trio.testing.MockClock) -> None:
    async with ActorSystem.open(idle_timeout=10) as system:
        await system.get_or_spawn("board", Publisher).ask(Put(5))
        assert system.view("board", Board) == Board(5)
        await trio.sleep(11)
        assert system.view("board", Board) is None
        await system.get_or_spawn("board", Publisher).ask(Put(6))  # started again on next use
        assert system.view("board", Board) == Board(6)


async def test_view_of_a_crashed_incarnation_is_withdrawn(autojump_clock: trio.testing.MockClock) -> None:
    async with ActorSystem.open() as system:
        ref = system.spawn("board", Publisher)
        await ref.ask(Put(7))
        ref.tell(Crash())
        await trio.testing.wait_all_tasks_blocked()
        assert system.view("board", Board) == Board(0)  # the fresh incarnation published its own start state


async def test_view_is_withdrawn_at_shutdown(autojump_clock: trio.testing.MockClock) -> None:
    async with ActorSystem.open() as system:
        await system.spawn("board", Publisher).ask(Put(3))
        await system.stop()
        assert system.view("board", Board) is None


async def test_actor_reaches_itself_through_its_context(autojump_clock: trio.testing.MockClock) -> None:
    async with ActorSystem.open() as system:
        ref = system.spawn("board", Publisher)
        assert await ref.ask(Poke()) == 1
        await trio.testing.wait_all_tasks_blocked()
        assert await ref.ask(Poke()) == 4  # two self-told pokes were handled in between


class Periodic(Actor[Any]):
    def __init__(self, ticks: list[float]) -> None:
        self.ticks = ticks
        self.ticker = PeriodicTicker(5.0, Tick())

    async def on_start(self, ctx: ActorContext) -> None:
        self.ticker.start(ctx)

    async def handle(self, message: Any) -> Any:
        match message:
            case Tick():
                self.ticks.append(trio.current_time())
                await trio.sleep(1.0)  # the next period counts from the handled tick
                self.ticker.poke()
                return None
        raise TypeError(message)


async def test_periodic_ticker_wakes_its_actor_every_period(autojump_clock: trio.testing.MockClock) -> None:
    ticks: list[float] = []
    async with ActorSystem.open() as system:
        start = trio.current_time()
        system.spawn("periodic", lambda: Periodic(ticks))
        await trio.sleep(20)
    assert [round(t - start, 3) for t in ticks] == [5.0, 11.0, 17.0]


async def test_periodic_ticker_stops_with_its_actor(autojump_clock: trio.testing.MockClock) -> None:
    ticks: list[float] = []
    async with ActorSystem.open(idle_timeout=100) as system:
        system.get_or_spawn("periodic", lambda: Periodic(ticks))
        await trio.sleep(8)
        assert len(ticks) == 1
        await system.stop()
        await trio.sleep(30)
    assert len(ticks) == 1
