"""Shared helpers of the policy HTTP tests."""

from __future__ import annotations

from typing import Any

API = "/api/v1"

PERMIT_ACTIVE = """
@id("allow-active") @reason("Active agents may act") @severity("low")
permit (principal, action, resource) when { principal.status == "active" };
"""

FORBID_DROP = """
@id("no-sql-drop") @reason("Destructive SQL is blocked") @severity("critical")
forbid (principal, action, resource) when { context.action like "sql.drop*" };
"""

PAYMENTS = """
@id("pay-small") @reason("Small payments are fine") @severity("low")
permit (principal, action == Action::"payments.transfer", resource)
when { context has amount && context.amount <= 1000 };

@id("pay-large") @reason("Large payments need a human") @severity("high") @requires_approval("true")
permit (principal, action == Action::"payments.transfer", resource)
when { context has amount && context.amount > 1000 };
"""


def key(api_key: str) -> dict[str, str]:
    return {"X-API-Key": api_key}


async def create_policy(client: Any, api_key: str, cedar: str, name: str = "doc", **extra: Any) -> dict:
    response = await client.post(f"{API}/policies", json={"name": name, "cedar": cedar, **extra}, headers=key(api_key))
    body = await response.get_json()
    assert response.status_code == 201, body
    return body


async def register_agent(
    client: Any,
    api_key: str,
    *,
    name: str = "billing-bot",
    type: str = "llm",
    capabilities: list[str] | None = None,
    status: str = "active",
) -> dict:
    """Register an agent over HTTP; a status other than active is then set with a heartbeat."""
    response = await client.post(
        f"{API}/agents/register",
        json={"name": name, "type": type, "capabilities": capabilities or []},
        headers=key(api_key),
    )
    agent = await response.get_json()
    assert response.status_code == 201, agent
    if status != "active":
        response = await client.post(
            f"{API}/agents/{agent['id']}/heartbeat", json={"status": status}, headers=key(api_key)
        )
        agent = await response.get_json()
        assert response.status_code == 200 and agent["status"] == status, agent
    return agent


async def check(client: Any, api_key: str, agent_id: str, action: str, resource: str = "r:1", **context: Any) -> dict:
    response = await client.post(
        f"{API}/policies/check",
        json={"agent_id": agent_id, "action": action, "resource": resource, "context": context},
        headers=key(api_key),
    )
    body = await response.get_json()
    assert response.status_code == 200, body
    return body


async def flush_audit(services: Any, tenant_id: str) -> None:
    """Wait until every entry queued for the tenant's audit chain so far is committed.

    The audit actor handles its mailbox in order, so the answer to an append queued now comes after the
    entries queued before it are durable. The probe entry is an ordinary one (action `test.flush`).
    """
    from agentgov.actors.audit import AppendEntry, audit

    await audit(services, tenant_id).ask(AppendEntry("00000000-0000-4000-8000-000000000000", "test.flush", "-"))
