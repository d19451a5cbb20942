"""`guarded()` against the real service: allowed, denied, approval approved (by another task), rejected and
timed out, a failing action, and an unreachable service failing closed or open; async and sync."""

from __future__ import annotations

import logging
from typing import Any

import pytest
import trio
from agentgov_client import (
    ActionDenied,
    Agent,
    AsyncClient,
    AuditEntry,
    Client,
    CreatedTenant,
    Policy,
    ServiceUnreachable,
)

from tests.client.conftest import Service
from tests.support.ports import free_port


async def _actions(client: AsyncClient, agent_id: str) -> list[AuditEntry]:
    """The agent's logged actions (not its policy checks), newest first."""
    return [e async for e in client.iter_audit(agent_id=agent_id) if e.kind == "action"]


async def _decide_when_pending(client: AsyncClient, resource: str, approve: bool = True) -> None:
    """Approve (or reject) the pending request about `resource` once it appears."""
    with trio.fail_after(10):
        while True:
            found = [a async for a in client.iter_pending_approvals() if a.resource == resource]
            if found:
                decide = client.approve if approve else client.reject
                await decide(found[0].id, comment="reviewed")
                return
            await trio.sleep(0.05)


async def test_allowed_action_runs_and_is_logged(client: AsyncClient, agent: Agent, policy: Policy) -> None:
    async def fetch() -> dict[str, Any]:
        await trio.lowlevel.checkpoint()
        return {"rows": 3}

    assert await client.guarded(agent.id, "read", "db://orders", {"environment": "prod"}, run=fetch) == {"rows": 3}
    assert await client.guarded(agent.id, "read", "db://customers", None, run=lambda: 42) == 42
    assert await client.guarded(agent.id, "read", "db://blob", None, run=lambda: object()) is not None
    actions = await _actions(client, agent.id)
    outputs = [e.output for e in actions]
    assert outputs[1:] == [{"result": 42}, {"rows": 3}]
    assert (outputs[0] or {})["result"].startswith("<object object")
    assert actions[2].input == {"environment": "prod"} and actions[2].is_approved is True


async def test_denied_action_does_not_run(client: AsyncClient, agent: Agent, policy: Policy) -> None:
    ran: list[bool] = []
    with pytest.raises(ActionDenied) as denied:
        await client.guarded(agent.id, "delete", "db://orders", {}, run=lambda: ran.append(True))
    assert not ran and denied.value.decision is not None and not denied.value.decision.allowed
    assert denied.value.decision.severity == "high" and "change ticket" in denied.value.reason
    assert not isinstance(denied.value, ServiceUnreachable)
    assert [e.kind async for e in client.iter_audit(agent_id=agent.id)] == ["policy_check"]


async def test_approval_approved_by_another_task(
    service: Service, client: AsyncClient, tenant: CreatedTenant, agent: Agent, policy: Policy
) -> None:
    async with AsyncClient(service.url, api_key=tenant.api_key) as reviewer, trio.open_nursery() as nursery:
        nursery.start_soon(_decide_when_pending, reviewer, "invoice-1")
        result = await client.guarded(
            agent.id, "pay", "invoice-1", {"amount": 100}, run=lambda: "paid", approval_timeout=10
        )
    assert result == "paid"
    entry = (await _actions(client, agent.id))[0]
    assert entry.output == {"result": "paid"} and entry.is_approved is True


async def test_approval_rejected_or_timed_out_is_denied(
    service: Service, client: AsyncClient, tenant: CreatedTenant, agent: Agent, policy: Policy
) -> None:
    ran: list[str] = []
    with pytest.raises(ActionDenied) as timed_out:
        await client.guarded(agent.id, "pay", "invoice-2", {}, run=lambda: ran.append("x"), approval_timeout=0.4)
    assert timed_out.value.approval is not None and timed_out.value.approval.pending
    assert timed_out.value.decision is not None and timed_out.value.decision.required_approval

    async with AsyncClient(service.url, api_key=tenant.api_key) as reviewer, trio.open_nursery() as nursery:
        nursery.start_soon(_decide_when_pending, reviewer, "invoice-3", False)
        with pytest.raises(ActionDenied) as rejected:
            await client.guarded(agent.id, "pay", "invoice-3", {}, run=lambda: ran.append("y"), approval_timeout=10)
    assert not ran and rejected.value.approval is not None and rejected.value.approval.status == "rejected"


async def test_failing_action_is_logged_and_raised(client: AsyncClient, agent: Agent, policy: Policy) -> None:
    def broken() -> None:
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError, match="disk full"):
        await client.guarded(agent.id, "read", "db://orders", {}, run=broken)
    entry = (await _actions(client, agent.id))[0]
    assert entry.output == {"error": "RuntimeError: disk full"}


async def test_unreachable_service_fails_closed_or_open(caplog: pytest.LogCaptureFixture) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    ran: list[str] = []
    async with AsyncClient(url, api_key="agk_any", max_retries=1) as client:
        with pytest.raises(ServiceUnreachable) as closed:
            await client.guarded("00000000-0000-4000-8000-000000000001", "read", "db", {}, run=lambda: ran.append("c"))
        assert not ran and isinstance(closed.value, ActionDenied) and closed.value.__cause__ is not None
        with caplog.at_level(logging.WARNING, logger="agentgov_client"):
            result = await client.guarded(
                "00000000-0000-4000-8000-000000000001", "read", "db", {}, run=lambda: "ran", on_unreachable="fail_open"
            )
    assert result == "ran"
    messages = [r.getMessage() for r in caplog.records if r.name == "agentgov_client"]
    assert any("fail-open" in m for m in messages) and any("could not log" in m for m in messages)


async def test_sync_client_guarded_in_a_worker_thread(
    service: Service, client: AsyncClient, tenant: CreatedTenant, agent: Agent, policy: Policy
) -> None:
    def scenario() -> list[Any]:
        outcomes: list[Any] = []
        with Client(service.url, api_key=tenant.api_key) as sync:
            outcomes.append(sync.guarded(agent.id, "read", "db://orders", {}, run=lambda: {"rows": 1}))
            try:
                sync.guarded(agent.id, "delete", "db://orders", {}, run=lambda: "never")
            except ActionDenied as exc:
                outcomes.append(exc.decision.severity if exc.decision else None)
            outcomes.append(
                sync.guarded(agent.id, "pay", "invoice-4", {"amount": 5}, run=lambda: "paid", approval_timeout=10)
            )
        return outcomes

    async with trio.open_nursery() as nursery:
        nursery.start_soon(_decide_when_pending, client, "invoice-4")  # approved from the trio side
        outcomes = await trio.to_thread.run_sync(scenario)
    assert outcomes == [{"rows": 1}, "high", "paid"]

    def refuses_coroutines() -> None:
        async def job() -> None:
            return None

        with Client(service.url, api_key=tenant.api_key) as sync, pytest.raises(TypeError, match="AsyncClient"):
            sync.guarded(agent.id, "read", "db://orders", {}, run=job)

    await trio.to_thread.run_sync(refuses_coroutines)
