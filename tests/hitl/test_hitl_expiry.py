"""Expiry of approval requests, driven by trio's mock clock, and the reload of pending requests on restart.

The HITL actor keeps its deadlines on `trio.current_time()`, so a `MockClock` makes an hour pass at once. The
clock is stopped and moved only by `advance()`: an autojumping clock would also move while every task waits
for a database worker thread, so how far it got would depend on the speed of the database.
"""

from __future__ import annotations

import dataclasses
import uuid
from datetime import timedelta

import pytest
import trio
import trio.testing

from agentgov.actors.hitl import AlreadyResolved, Decide, GetApproval, ListPending, RequestApproval, hitl
from agentgov.storage.hitl import EXPIRY_DECIDER, HitlRepo, NewApproval
from agentgov.timeutil import now, to_iso
from tests.hitl.conftest import key, next_event, subscribe
from tests.support.app import running_services, settings_for

TIMEOUT = 3600.0


def approval(agent_id: str, **changes: object) -> RequestApproval:
    message = RequestApproval(
        agent_id=agent_id,
        action="wire_transfer",
        resource="account:42",
        context={"amount": 5000},
        policy_ids=["p-high-value"],
        reason="amount above threshold",
        requested_by="policy:p-high-value",
        risk_score=0.9,
    )
    return dataclasses.replace(message, **changes)  # type: ignore[arg-type]


async def advance(clock: trio.testing.MockClock, seconds: float, step: float = 10.0) -> None:
    """Move a stopped mock clock forward in small steps, letting every timer that falls due run."""
    target = trio.current_time() + seconds
    while trio.current_time() < target:
        clock.jump(min(step, target - trio.current_time()))
        await trio.testing.wait_all_tasks_blocked()


async def test_request_expires_after_the_timeout(
    mock_clock: trio.testing.MockClock, app, client, tenant, agent_id
) -> None:
    svc = app.extensions["agentgov"]
    events = await subscribe(app, tenant["id"])
    response = await client.post(
        "/api/v1/hitl/request",
        json={"agent_id": agent_id, "action": "deploy", "resource": "prod"},
        headers=key(tenant["api_key"]),
    )
    created = await response.get_json()
    assert response.status_code == 201 and created["status"] == "pending"
    assert (await next_event(events))["event"] == "hitl.requested"
    ref = hitl(svc, tenant["id"])

    await advance(mock_clock, TIMEOUT - 1)
    assert (await ref.ask(GetApproval(created["id"]))).status == "pending"

    await advance(mock_clock, 1)
    resolved = await next_event(events)
    assert resolved["event"] == "hitl.resolved"
    assert resolved["data"]["id"] == created["id"]
    assert resolved["data"]["status"] == "expired" and resolved["data"]["approved"] is False
    assert resolved["data"]["decided_by"] == EXPIRY_DECIDER

    status = await (await client.get(f"/api/v1/hitl/status/{created['id']}", headers=key(tenant["api_key"]))).get_json()
    assert status["status"] == "expired" and status["approved"] is False
    listing = await (await client.get("/api/v1/hitl/pending", headers=key(tenant["api_key"]))).get_json()
    assert listing["total"] == 0
    for verb in ("approve", "reject"):
        response = await client.post(f"/api/v1/hitl/{verb}/{created['id']}", headers=key(tenant["api_key"]))
        data = await response.get_json()
        assert response.status_code == 409
        assert data["detail"] == f"Conflict: approval request {created['id']} has expired"
        assert data["current_status"] == "expired"


async def test_deciding_at_the_deadline_is_refused(mock_clock: trio.testing.MockClock, app, tenant) -> None:
    ref = hitl(app.extensions["agentgov"], tenant["id"])
    record = await ref.ask(approval(str(uuid.uuid4())))
    await advance(mock_clock, TIMEOUT)
    try:
        await ref.ask(Decide(record.id, approve=True, reviewer="user:late"))
    except AlreadyResolved as exc:
        assert exc.request.status == "expired" and exc.request.decided_by == EXPIRY_DECIDER
    else:
        raise AssertionError("a decision at the deadline must be refused")


async def test_each_request_expires_at_its_own_deadline(mock_clock: trio.testing.MockClock, database_url: str) -> None:
    """Two requests 60 s apart, timeout 100 s. The clock only moves when the test moves it, so database work
    never lets time pass: each request must be pending 1 s before its deadline and expired 1 s after."""
    settings = settings_for(database_url, hitl_timeout=100.0)
    async with running_services(settings) as svc:
        ref = hitl(svc, str(uuid.uuid4()))
        first = await ref.ask(approval(str(uuid.uuid4())))
        await advance(mock_clock, 60)
        second = await ref.ask(approval(str(uuid.uuid4())))
        await advance(mock_clock, 39)
        assert (await ref.ask(GetApproval(first.id))).status == "pending"
        await advance(mock_clock, 2)
        assert (await ref.ask(GetApproval(first.id))).status == "expired"
        assert (await ref.ask(GetApproval(second.id))).status == "pending"
        await advance(mock_clock, 58)
        assert (await ref.ask(GetApproval(second.id))).status == "pending"
        await advance(mock_clock, 2)
        assert (await ref.ask(GetApproval(second.id))).status == "expired"
        records, total = await ref.ask(ListPending(limit=10, offset=0))
        assert (records, total) == ([], 0)


async def test_pending_requests_keep_the_actor_alive(mock_clock: trio.testing.MockClock, database_url: str) -> None:
    """The idle timeout (300 s) is far shorter than the request timeout: the actor must not stop meanwhile."""
    async with running_services(settings_for(database_url)) as svc:
        tenant_id = str(uuid.uuid4())
        events = await subscribe(svc, tenant_id)
        record = await hitl(svc, tenant_id).ask(approval(str(uuid.uuid4())))
        assert (await next_event(events))["event"] == "hitl.requested"
        await advance(mock_clock, TIMEOUT - 10)
        stats = {a["name"]: a for a in svc.actors.stats()}
        assert stats[f"hitl:{tenant_id}"]["state"] == "running"
        await advance(mock_clock, 20)
        # Expired by the actor's own timer (a restarted actor would reload it as pending: wall time stood still).
        assert (await hitl(svc, tenant_id).ask(GetApproval(record.id))).status == "expired"
        resolved = await next_event(events)
        assert resolved["event"] == "hitl.resolved" and resolved["data"]["id"] == record.id
        assert resolved["data"]["status"] == "expired"
        stats = {a["name"]: a for a in svc.actors.stats()}
        assert stats[f"hitl:{tenant_id}"]["restarts"] == 0


async def test_restart_reloads_pending_requests(mock_clock: trio.testing.MockClock, database_url: str) -> None:
    settings = settings_for(database_url)
    tenant_id = str(uuid.uuid4())
    async with running_services(settings) as svc:
        record = await hitl(svc, tenant_id).ask(approval(str(uuid.uuid4())))
    # A new process: the actor reloads the pending request with the time it had left.
    async with running_services(settings) as svc:
        events = await subscribe(svc, tenant_id)
        ref = hitl(svc, tenant_id)
        assert (await ref.ask(GetApproval(record.id))).status == "pending"
        await advance(mock_clock, TIMEOUT - 5)
        assert (await ref.ask(GetApproval(record.id))).status == "pending"
        await advance(mock_clock, 10)
        assert (await ref.ask(GetApproval(record.id))).status == "expired"
        resolved = await next_event(events)
        assert resolved["event"] == "hitl.resolved" and resolved["data"]["status"] == "expired"


async def test_overdue_requests_expire_on_start(mock_clock: trio.testing.MockClock, database_url: str) -> None:
    """Requests whose deadline passed while no actor ran are expired as soon as the actor starts."""
    tenant_id = str(uuid.uuid4())
    async with running_services(settings_for(database_url)) as svc:
        events = await subscribe(svc, tenant_id)
        repo = HitlRepo(svc.db)
        created_at = now() - timedelta(hours=2)
        overdue = await repo.create(
            tenant_id,
            NewApproval("agent-1", "act", "res", {}, (), "", None, "test"),
            now=to_iso(created_at),
            expires_at=to_iso(created_at + timedelta(hours=1)),
        )
        current = await repo.create(
            tenant_id,
            NewApproval("agent-2", "act", "res", {}, (), "", None, "test"),
            now=to_iso(now()),
            expires_at=to_iso(now() + timedelta(hours=1)),
        )
        ref = hitl(svc, tenant_id)
        records, total = await ref.ask(ListPending(limit=10, offset=0))
        assert total == 1 and [r.id for r in records] == [current.request.id]
        resolved = await next_event(events)
        assert resolved["data"]["id"] == overdue.request.id and resolved["data"]["status"] == "expired"
        assert (await ref.ask(GetApproval(overdue.request.id))).status == "expired"


async def test_service_start_starts_timers_of_tenants_with_pending_requests(database_url: str) -> None:
    """Serving starts the HITL actor of every tenant with pending requests (and only those)."""
    from tests.support.app import live_server

    waiting, idle = str(uuid.uuid4()), str(uuid.uuid4())
    settings = settings_for(database_url)
    async with running_services(settings) as svc:
        repo = HitlRepo(svc.db)
        await repo.create(
            waiting,
            NewApproval("agent-1", "act", "res", {}, (), "", None, "test"),
            now=to_iso(now()),
            expires_at=to_iso(now() + timedelta(hours=1)),
        )
        done = await repo.create(
            idle,
            NewApproval("agent-2", "act", "res", {}, (), "", None, "test"),
            now=to_iso(now()),
            expires_at=to_iso(now() + timedelta(hours=1)),
        )
        await repo.decide(idle, done.request.id, "approved", by="user:x", comment=None, now=to_iso(now()))
    async with live_server(settings) as (_, running):
        names = {a["name"] for a in running.services.actors.stats()}
        assert f"hitl:{waiting}" in names
        assert f"hitl:{idle}" not in names


async def test_expired_identical_request_is_replaced(mock_clock: trio.testing.MockClock, app, tenant) -> None:
    ref = hitl(app.extensions["agentgov"], tenant["id"])
    agent = str(uuid.uuid4())
    first = await ref.ask(approval(agent))
    assert (await ref.ask(approval(agent))).id == first.id
    await advance(mock_clock, TIMEOUT + 1)
    second = await ref.ask(approval(agent))
    assert second.id != first.id and second.status == "pending" and not second.reused
    assert (await ref.ask(GetApproval(first.id))).status == "expired"


async def test_message_validation(sqlite_url: str) -> None:
    """What other actors may send: anything the policy check accepts, and nothing malformed."""
    async with running_services(settings_for(sqlite_url)) as svc:
        ref = hitl(svc, str(uuid.uuid4()))
        record = await ref.ask(approval(str(uuid.uuid4()), action=" ", resource=""))
        assert record.status == "pending" and (record.action, record.resource) == (" ", "")
    for change, message in (
        ({"agent_id": ""}, "agent_id must be a non-blank string"),
        ({"requested_by": " "}, "requested_by must be a non-blank string"),
        ({"resource": None}, "resource must be a string"),
        ({"context": []}, "context must be an object"),
        ({"policy_ids": [1]}, "policy_ids must be a list of strings"),
        ({"risk_score": 1.01}, "risk_score must be between 0.0 and 1.0"),
    ):
        with pytest.raises(ValueError, match=message):
            approval(**{"agent_id": "agent", **change})  # type: ignore[arg-type]
