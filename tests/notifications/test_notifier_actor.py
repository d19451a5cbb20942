"""The notifier actor on its own: envelope, fan-out, permissions, isolation, slow subscribers, status, lifetime.

The notifier keeps no data, so these run on SQLite only; the WebSocket tests run on both backends.
"""

from __future__ import annotations

import json
import uuid

import pytest
import trio
import trio.testing

from agentgov.actors.notifier import (
    CLOSE_SLOW,
    CLOSE_STOPPED,
    EVENTS,
    GetStats,
    Publish,
    Subscribe,
    Unsubscribe,
    notifier,
)
from agentgov.security.roles import Role
from tests.support.app import running_services, settings_for


async def receive(subscription) -> dict:
    return json.loads(await subscription.receive.receive())


def drain(subscription) -> list[dict]:
    out = []
    while True:
        try:
            out.append(json.loads(subscription.receive.receive_nowait()))
        except (trio.WouldBlock, trio.EndOfChannel):
            return out


async def test_envelope_and_fan_out_in_order(sqlite_url: str) -> None:
    async with running_services(settings_for(sqlite_url)) as svc:
        tenant_id = str(uuid.uuid4())
        ref = notifier(svc, tenant_id)
        subs = [await ref.ask(Subscribe(Role.ADMIN, f"s{i}")) for i in range(3)]
        for sub in subs:
            status = await receive(sub)
            assert set(status) == {"event", "tenant_id", "timestamp", "data"}
            assert status["event"] == "system.status" and status["tenant_id"] == tenant_id
            assert status["data"]["status"] == "ok" and status["data"]["subscribers"] >= 1
        for n in range(5):
            ref.tell(Publish("policy.violated", {"n": n}))
        for sub in subs:
            got = [await receive(sub) for _ in range(5)]
            assert [g["data"] for g in got] == [{"n": n} for n in range(5)]
            assert {g["event"] for g in got} == {"policy.violated"}
            assert all(g["timestamp"].endswith("Z") for g in got)
        stats = await ref.ask(GetStats())
        assert stats.subscribers == 3 and stats.published == 5 and stats.delivered == 3 + 15


def test_unknown_event_is_refused_when_built() -> None:
    with pytest.raises(ValueError, match=r"unknown event 'agent\.exploded'"):
        Publish("agent.exploded", {})
    assert set(EVENTS) == {"policy.violated", "anomaly.detected", "hitl.requested", "hitl.resolved", "system.status"}


async def test_events_follow_the_subscribers_permissions(sqlite_url: str) -> None:
    async with running_services(settings_for(sqlite_url)) as svc:
        ref = notifier(svc, str(uuid.uuid4()))
        developer = await ref.ask(Subscribe(Role.DEVELOPER, "dev"))
        analyst = await ref.ask(Subscribe(Role.SECURITY_ANALYST, "analyst"))
        ref.tell(Publish("anomaly.detected", {"score": 0.99}))
        ref.tell(Publish("hitl.requested", {"id": "r1"}))
        await ref.ask(GetStats())  # both publishes handled
        assert [e["event"] for e in drain(developer)] == ["system.status", "hitl.requested"]
        assert [e["event"] for e in drain(analyst)] == ["system.status", "anomaly.detected", "hitl.requested"]


async def test_tenants_are_isolated(sqlite_url: str) -> None:
    async with running_services(settings_for(sqlite_url)) as svc:
        tenant_a, tenant_b = str(uuid.uuid4()), str(uuid.uuid4())
        sub_a = await notifier(svc, tenant_a).ask(Subscribe(Role.ADMIN, "a"))
        sub_b = await notifier(svc, tenant_b).ask(Subscribe(Role.ADMIN, "b"))
        notifier(svc, tenant_a).tell(Publish("hitl.requested", {"for": "a"}))
        await notifier(svc, tenant_a).ask(GetStats())
        await notifier(svc, tenant_b).ask(GetStats())
        assert [(e["event"], e["tenant_id"]) for e in drain(sub_a)] == [
            ("system.status", tenant_a),
            ("hitl.requested", tenant_a),
        ]
        assert [e["event"] for e in drain(sub_b)] == ["system.status"]


async def test_slow_subscriber_never_delays_a_fast_one(sqlite_url: str) -> None:
    """A subscriber that never reads fills its buffer and is disconnected; the fast one gets every event."""
    async with running_services(settings_for(sqlite_url)) as svc:
        ref = notifier(svc, str(uuid.uuid4()), buffer_size=4)
        slow = await ref.ask(Subscribe(Role.ADMIN, "slow"))
        fast = await ref.ask(Subscribe(Role.ADMIN, "fast"))
        assert (await receive(fast))["event"] == "system.status"
        received = []
        for n in range(50):
            ref.tell(Publish("policy.violated", {"n": n}))
            received.append((await receive(fast))["data"]["n"])
        assert received == list(range(50))
        # The slow one keeps what fitted (its status and three events), then its channel ends: "slow".
        kept = [e.get("data", {}).get("n") for e in drain(slow)]
        assert kept == [None, 0, 1, 2]
        with pytest.raises(trio.EndOfChannel):
            slow.receive.receive_nowait()
        assert slow.close_reason == CLOSE_SLOW and fast.close_reason is None
        stats = await ref.ask(GetStats())
        assert stats.subscribers == 1 and stats.disconnected_slow == 1


async def test_publishing_never_waits_for_subscribers(sqlite_url: str) -> None:
    """A burst larger than every buffer is handled at once: nothing in the actor waits for a reader."""
    async with running_services(settings_for(sqlite_url)) as svc:
        ref = notifier(svc, str(uuid.uuid4()), buffer_size=8)
        stuck = [await ref.ask(Subscribe(Role.ADMIN, f"stuck{i}")) for i in range(10)]
        for n in range(500):
            ref.tell(Publish("policy.violated", {"n": n}))
        stats = await ref.ask(GetStats())  # answered only after the 500 publishes were handled
        assert stats.published == 500 and stats.subscribers == 0 and stats.disconnected_slow == 10
        assert all(s.close_reason == CLOSE_SLOW for s in stuck)


async def test_subscriber_that_left_is_dropped(sqlite_url: str) -> None:
    async with running_services(settings_for(sqlite_url)) as svc:
        ref = notifier(svc, str(uuid.uuid4()))
        gone = await ref.ask(Subscribe(Role.ADMIN, "gone"))
        left = await ref.ask(Subscribe(Role.ADMIN, "left"))
        gone.receive.close()  # went away without unsubscribing
        ref.tell(Unsubscribe(left.id))
        ref.tell(Unsubscribe(left.id))  # idempotent
        ref.tell(Publish("hitl.resolved", {}))
        stats = await ref.ask(GetStats())
        assert stats.subscribers == 0 and stats.disconnected_slow == 0


async def test_status_is_sent_periodically(mock_clock: trio.testing.MockClock, sqlite_url: str) -> None:
    async with running_services(settings_for(sqlite_url, notify_status_interval=30.0)) as svc:
        ref = notifier(svc, str(uuid.uuid4()))
        sub = await ref.ask(Subscribe(Role.DEVELOPER, "dev"))
        assert (await receive(sub))["event"] == "system.status"
        for _ in range(3):
            mock_clock.jump(29)
            await trio.testing.wait_all_tasks_blocked()
            with pytest.raises(trio.WouldBlock):
                sub.receive.receive_nowait()
            mock_clock.jump(1)
            status = await receive(sub)
            assert status["event"] == "system.status"
            assert status["data"]["status_interval_seconds"] == 30.0


async def test_does_not_idle_stop_while_subscribed(mock_clock: trio.testing.MockClock, sqlite_url: str) -> None:
    async with running_services(settings_for(sqlite_url, notify_status_interval=10_000.0)) as svc:
        tenant_id = str(uuid.uuid4())
        name = f"notifier:{tenant_id}"
        ref = notifier(svc, tenant_id)
        sub = await ref.ask(Subscribe(Role.ADMIN, "s"))
        assert svc.actors.idle_timeout == 300
        for _ in range(100):  # 1000 s, more than three idle timeouts
            mock_clock.jump(10)
            await trio.testing.wait_all_tasks_blocked()
        assert name in {a["name"] for a in svc.actors.stats()}
        ref.tell(Publish("hitl.requested", {"still": "here"}))
        assert (await receive_event(sub, "hitl.requested"))["data"] == {"still": "here"}
        ref.tell(Unsubscribe(sub.id))
        for _ in range(40):  # 400 s without subscribers: it stops
            mock_clock.jump(10)
            await trio.testing.wait_all_tasks_blocked()
        assert name not in {a["name"] for a in svc.actors.stats()}


async def receive_event(subscription, event: str) -> dict:
    while True:
        envelope = await receive(subscription)
        if envelope["event"] == event:
            return envelope


async def test_stopping_ends_every_subscription(sqlite_url: str) -> None:
    async with running_services(settings_for(sqlite_url)) as svc:
        ref = notifier(svc, str(uuid.uuid4()))
        subs = [await ref.ask(Subscribe(Role.ADMIN, f"s{i}")) for i in range(2)]
    for sub in subs:
        assert [e["event"] for e in drain(sub)] == ["system.status"]
        with pytest.raises(trio.EndOfChannel):
            sub.receive.receive_nowait()
        assert sub.close_reason == CLOSE_STOPPED
