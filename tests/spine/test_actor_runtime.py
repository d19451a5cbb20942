"""The actor runtime, driven deterministically with trio's autojump clock."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
import trio
import trio.testing
from outcome import Value

from agentgov.actors.runtime import (
    Actor,
    ActorContext,
    ActorCrashed,
    ActorStopped,
    ActorSystem,
    MailboxFull,
)


@dataclasses.dataclass(frozen=True)
class Add:
    amount: int


@dataclasses.dataclass(frozen=True)
class Get:
    pass


@dataclasses.dataclass(frozen=True)
class Fail:
    pass


@dataclasses.dataclass(frozen=True)
class Crash:
    pass


@dataclasses.dataclass(frozen=True)
class Block:
    pass


class Counter(Actor[Any]):
    starts = 0
    release: trio.Event

    def __init__(self, log: list[str]) -> None:
        self.total = 0
        self.log = log

    async def on_start(self, ctx: ActorContext) -> None:
        self.log.append("start")

    async def on_stop(self) -> None:
        self.log.append("stop")

    async def handle(self, message: Any) -> Any:
        match message:
            case Add(amount):
                self.total += amount
                return self.total
            case Get():
                return self.total
            case Fail():
                raise ValueError("bad request")
            case Crash():
                raise RuntimeError("boom")
            case Block():
                await Counter.release.wait()
                return "released"
        raise TypeError(message)


async def test_ask_and_tell_keep_order(autojump_clock: trio.testing.MockClock) -> None:
    log: list[str] = []
    async with ActorSystem.open() as system:
        ref = system.spawn("counter", lambda: Counter(log))
        ref.tell(Add(2))
        ref.tell(Add(3))
        assert await ref.ask(Get()) == 5
    assert log == ["start", "stop"]


async def test_request_error_goes_to_caller_and_actor_keeps_state(
    autojump_clock: trio.testing.MockClock,
) -> None:
    log: list[str] = []
    async with ActorSystem.open() as system:
        ref = system.spawn("counter", lambda: Counter(log))
        await ref.ask(Add(7))
        with pytest.raises(ValueError, match="bad request"):
            await ref.ask(Fail())
        assert await ref.ask(Get()) == 7
        assert system.stats()[0]["restarts"] == 0
        assert system.stats()[0]["failed"] == 1


async def test_crash_outside_a_request_restarts_the_actor(
    autojump_clock: trio.testing.MockClock, caplog: pytest.LogCaptureFixture
) -> None:
    log: list[str] = []
    async with ActorSystem.open() as system:
        ref = system.spawn("counter", lambda: Counter(log))
        await ref.ask(Add(7))
        ref.tell(Crash())
        assert await ref.ask(Get()) == 0  # a fresh incarnation: state was rebuilt
        assert system.stats()[0]["restarts"] == 1
    assert log == ["start", "stop", "start", "stop"]
    crash_lines = [r for r in caplog.records if "crashed" in r.getMessage()]
    assert crash_lines and crash_lines[0].fields["actor"] == "counter"  # type: ignore[attr-defined]


async def test_restart_limit_stops_the_actor(autojump_clock: trio.testing.MockClock) -> None:
    log: list[str] = []
    async with ActorSystem.open(max_restarts=2, restart_window=10.0) as system:
        ref = system.spawn("counter", lambda: Counter(log))
        for _ in range(3):
            ref.tell(Crash())
        await trio.testing.wait_all_tasks_blocked()
        with pytest.raises(ActorStopped):
            await ref.ask(Get())
        assert system.stats() == []
    assert log.count("start") == 3


async def test_crashes_spread_beyond_the_window_do_not_stop_it(
    autojump_clock: trio.testing.MockClock,
) -> None:
    log: list[str] = []
    async with ActorSystem.open(max_restarts=1, restart_window=5.0) as system:
        ref = system.spawn("counter", lambda: Counter(log))
        for _ in range(4):
            ref.tell(Crash())
            await trio.testing.wait_all_tasks_blocked()
            await trio.sleep(6)
        assert await ref.ask(Get()) == 0
        assert system.stats()[0]["restarts"] == 4


async def test_caller_cancelled_mid_ask_leaves_actor_serving(autojump_clock: trio.testing.MockClock) -> None:
    Counter.release = trio.Event()
    log: list[str] = []
    async with ActorSystem.open() as system:
        ref = system.spawn("counter", lambda: Counter(log))
        with trio.move_on_after(1) as scope:
            await ref.ask(Block())
        assert scope.cancelled_caught
        Counter.release.set()  # the actor now replies to a caller that left
        await trio.testing.wait_all_tasks_blocked()
        assert await ref.ask(Add(1)) == 1
        assert system.stats()[0]["restarts"] == 0


async def test_full_mailbox_raises_mailbox_full(autojump_clock: trio.testing.MockClock) -> None:
    Counter.release = trio.Event()
    log: list[str] = []
    async with ActorSystem.open() as system:
        ref = system.spawn("counter", lambda: Counter(log), capacity=2)
        ref.tell(Block())
        await trio.testing.wait_all_tasks_blocked()  # the actor is now busy with Block
        ref.tell(Add(1))
        ref.tell(Add(1))
        with pytest.raises(MailboxFull, match="counter mailbox is full"):
            ref.tell(Add(1))
        assert system.stats()[0]["queued"] == 2
        Counter.release.set()
        await trio.testing.wait_all_tasks_blocked()
        assert await ref.ask(Get()) == 2


async def test_stop_drains_queued_messages_then_answers_the_rest(
    autojump_clock: trio.testing.MockClock,
) -> None:
    Counter.release = trio.Event()
    log: list[str] = []
    outcomes: list[object] = []
    async with ActorSystem.open(drain_timeout=3.0) as system:
        ref = system.spawn("counter", lambda: Counter(log))
        ref.tell(Block())
        await trio.testing.wait_all_tasks_blocked()

        async def asker() -> None:
            try:
                outcomes.append(await ref.ask(Get()))
            except ActorStopped as exc:
                outcomes.append(exc)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(asker)
            nursery.start_soon(asker)
            await trio.testing.wait_all_tasks_blocked()
            await system.stop()  # Block never finishes: the drain times out
    assert len(outcomes) == 2 and all(isinstance(o, ActorStopped) for o in outcomes)
    with pytest.raises(ActorStopped):
        ref.tell(Get())


async def test_stop_lets_actor_finish_queued_work(autojump_clock: trio.testing.MockClock) -> None:
    log: list[str] = []
    async with ActorSystem.open() as system:
        ref = system.spawn("counter", lambda: Counter(log))
        results: list[int] = []

        async def asker() -> None:
            results.append(await ref.ask(Add(1)))

        async with trio.open_nursery() as nursery:
            for _ in range(3):
                nursery.start_soon(asker)
            await trio.testing.wait_all_tasks_blocked()
            await system.stop()
    assert sorted(results) == [1, 2, 3]


async def test_per_tenant_actor_stops_when_idle_and_respawns(autojump_clock: trio.testing.MockClock) -> None:
    log: list[str] = []
    async with ActorSystem.open(idle_timeout=60.0) as system:
        ref = system.get_or_spawn("counter:t1", lambda: Counter(log))
        assert await ref.ask(Add(5)) == 5
        assert system.get_or_spawn("counter:t1", lambda: Counter(log)).name == "counter:t1"
        await trio.sleep(59)
        assert [s["name"] for s in system.stats()] == ["counter:t1"]
        await trio.sleep(2)
        assert system.stats() == []
        assert log == ["start", "stop"]
        ref = system.get_or_spawn("counter:t1", lambda: Counter(log))
        assert await ref.ask(Get()) == 0
        assert log == ["start", "stop", "start"]


async def test_batch_failure_answers_every_caller(autojump_clock: trio.testing.MockClock) -> None:
    class Broken(Actor[Any]):
        async def handle_batch(self, messages: list[Any]) -> list[Any]:
            raise RuntimeError("disk on fire")

    async with ActorSystem.open(max_restarts=5) as system:
        ref = system.spawn("broken", Broken)
        with pytest.raises(ActorCrashed, match="disk on fire") as caught:
            await ref.ask(Get())
    # the crash keeps its cause, for the log's traceback and for callers that look
    assert isinstance(caught.value.cause, RuntimeError) and caught.value.__cause__ is caught.value.cause


async def test_spawn_refuses_duplicate_names(autojump_clock: trio.testing.MockClock) -> None:
    async with ActorSystem.open() as system:
        system.spawn("counter", lambda: Counter([]))
        with pytest.raises(ValueError, match="already exists"):
            system.spawn("counter", lambda: Counter([]))


async def test_background_task_crash_restarts_actor(autojump_clock: trio.testing.MockClock) -> None:
    starts: list[float] = []

    class Ticker(Actor[Any]):
        async def on_start(self, ctx: ActorContext) -> None:
            starts.append(trio.current_time())
            if len(starts) == 1:
                ctx.nursery.start_soon(self._explode)

        async def _explode(self) -> None:
            await trio.sleep(1)
            raise RuntimeError("timer failed")

        async def handle(self, message: Any) -> Any:
            return len(starts)

    async with ActorSystem.open() as system:
        ref = system.spawn("ticker", Ticker)
        await trio.sleep(2)
        assert await ref.ask(Get()) == 2


class Lingering(Actor[Any]):
    """Records each batch it handles and the (mock) time it handled it at."""

    max_batch = 10
    linger = 0.5

    def __init__(self, batches: list[tuple[float, list[Any]]]) -> None:
        self.batches = batches

    async def handle_batch(self, messages: list[Any]) -> list[Any]:
        self.batches.append((trio.current_time(), list(messages)))
        return [Value(None) for _ in messages]


async def test_linger_gathers_tells_into_one_batch(autojump_clock: trio.testing.MockClock) -> None:
    batches: list[tuple[float, list[Any]]] = []
    async with ActorSystem.open() as system:
        ref = system.spawn("lingering", lambda: Lingering(batches))
        start = trio.current_time()
        ref.tell(Add(1))
        await trio.sleep(0.2)
        ref.tell(Add(2))
        await trio.sleep(0.2)
        ref.tell(Add(3))
        await trio.sleep(1)  # the linger ran out 0.5 s after the first tell
        ref.tell(Add(4))
        await trio.sleep(1)
    assert [(round(t - start, 3), [m.amount for m in ms]) for t, ms in batches] == [
        (0.5, [1, 2, 3]),
        (1.9, [4]),
    ]


async def test_an_ask_ends_the_linger_and_a_full_batch_does_not_wait(autojump_clock: trio.testing.MockClock) -> None:
    batches: list[tuple[float, list[Any]]] = []
    async with ActorSystem.open() as system:
        ref = system.spawn("lingering", lambda: Lingering(batches))
        start = trio.current_time()
        ref.tell(Add(1))
        await trio.sleep(0.1)
        await ref.ask(Get())  # answered at once, with the tell before it
        for n in range(10):
            ref.tell(Add(n))
        await trio.testing.wait_all_tasks_blocked()
        full_at = trio.current_time()
    assert [(round(t - start, 3), len(ms)) for t, ms in batches] == [(0.1, 2), (round(full_at - start, 3), 10)]


async def test_closing_the_mailbox_ends_the_linger(autojump_clock: trio.testing.MockClock) -> None:
    batches: list[tuple[float, list[Any]]] = []
    async with ActorSystem.open() as system:
        ref = system.spawn("lingering", lambda: Lingering(batches))
        ref.tell(Add(1))
        ref.tell(Add(2))
        await trio.sleep(0.1)
        stopping_at = trio.current_time()
        await system.stop()
    assert [(t, [m.amount for m in ms]) for t, ms in batches] == [(stopping_at, [1, 2])]
