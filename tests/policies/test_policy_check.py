"""POST /policies/check on SQLite and PostgreSQL: decisions, reasons, risk, defaults, freshness, audit."""

from __future__ import annotations

import json
import uuid

import pytest
import trio

from agentgov.actors.notifier import Subscribe, Unsubscribe, notifier
from agentgov.actors.policy import policy_view
from agentgov.actors.runtime import MailboxFull
from agentgov.checks import CheckResult, agent_attributes, record_decision
from agentgov.security.roles import Role
from tests.policies.helpers import (
    API,
    FORBID_DROP,
    PAYMENTS,
    PERMIT_ACTIVE,
    check,
    create_policy,
    flush_audit,
    key,
    register_agent,
)

RESPONSE_FIELDS = {
    "allowed",
    "reason",
    "severity",
    "required_approval",
    "risk_score",
    "risk",
    "anomaly",
    "approval_id",
    "decision_id",
    "determining_policies",
    "default_applied",
    "errors",
    "evaluated_at",
}


async def test_default_is_deny_and_can_be_changed(client, tenant) -> None:
    api_key = tenant["api_key"]
    agent = await register_agent(client, api_key)
    body = await check(client, api_key, agent["id"], "files.read")
    assert set(body) == RESPONSE_FIELDS
    assert body["allowed"] is False and body["default_applied"] is True
    assert body["reason"] == "No policy applies; the tenant default is to deny"
    assert body["severity"] is None and body["required_approval"] is False
    assert body["anomaly"] is None and body["approval_id"] is None
    assert body["determining_policies"] == [] and body["errors"] == []
    assert uuid.UUID(body["decision_id"])

    response = await client.put(f"{API}/policies/settings", json={"default_decision": "allow"}, headers=key(api_key))
    assert response.status_code == 200
    body = await check(client, api_key, agent["id"], "files.read")
    assert body["allowed"] is True and body["reason"] == "No policy applies; the tenant default is to allow"

    # a policy that applies overrides the default
    await create_policy(client, api_key, FORBID_DROP)
    body = await check(client, api_key, agent["id"], "sql.drop_table")
    assert body["allowed"] is False and body["default_applied"] is False


async def test_forbid_overrides_permit_and_reason_names_ids(client, tenant) -> None:
    api_key = tenant["api_key"]
    agent = await register_agent(client, api_key)
    await create_policy(client, api_key, PERMIT_ACTIVE, name="baseline")
    await create_policy(client, api_key, FORBID_DROP, name="guards")

    denied = await check(client, api_key, agent["id"], "sql.drop_table", "postgres:crm")
    assert denied["allowed"] is False
    assert denied["reason"] == "Denied by forbid policy 'no-sql-drop' (Destructive SQL is blocked)"
    assert denied["determining_policies"] == ["no-sql-drop"]
    assert denied["severity"] == "critical" and denied["required_approval"] is False

    allowed = await check(client, api_key, agent["id"], "sql.select", "postgres:crm")
    assert allowed["allowed"] is True
    assert allowed["reason"] == "Allowed by permit policy 'allow-active' (Active agents may act)"
    assert allowed["severity"] == "low"


async def test_required_approval(client, tenant) -> None:
    api_key = tenant["api_key"]
    agent = await register_agent(client, api_key, capabilities=["payments"])
    await create_policy(client, api_key, PAYMENTS)

    small = await check(client, api_key, agent["id"], "payments.transfer", "account:1", amount=500)
    assert small["allowed"] is True and small["required_approval"] is False
    assert small["determining_policies"] == ["pay-small"] and small["approval_id"] is None

    large = await check(client, api_key, agent["id"], "payments.transfer", "account:1", amount=5000)
    assert large["allowed"] is True and large["required_approval"] is True
    assert large["determining_policies"] == ["pay-large"] and large["severity"] == "high"
    assert "'pay-large' (Large payments need a human)" in large["reason"]
    assert "human approval required by 'pay-large'" in large["reason"]
    assert any(f["name"] == "approval_required" for f in large["risk"]["factors"])


async def test_risk_fields(client, tenant) -> None:
    api_key = tenant["api_key"]
    agent = await register_agent(client, api_key)
    await create_policy(client, api_key, PERMIT_ACTIVE)
    calm = await check(client, api_key, agent["id"], "files.read")
    hot = await check(
        client,
        api_key,
        agent["id"],
        "crm.export",
        pii=True,
        environment="production",
        data_classification="restricted",
        record_count=50_000,
    )
    for body in (calm, hot):
        assert 0.0 <= body["risk_score"] <= 1.0
        assert body["risk"]["score"] == body["risk_score"]
        assert body["risk"]["level"] in ("low", "medium", "high", "critical")
        assert all({"name", "weight", "detail"} == f.keys() for f in body["risk"]["factors"])
    names = {f["name"] for f in hot["risk"]["factors"]}
    assert {"pii", "pii_without_consent", "production", "classified_data", "bulk_records"} <= names
    assert hot["risk_score"] > calm["risk_score"]
    assert calm["risk"]["level"] == "low" and hot["risk"]["level"] in ("high", "critical")


async def test_agent_attributes_come_from_the_registry(client, tenant) -> None:
    api_key = tenant["api_key"]
    await create_policy(client, api_key, PERMIT_ACTIVE)
    await create_policy(
        client,
        api_key,
        '@id("needs-payments") @reason("payments capability required")\n'
        "forbid (principal, action, resource) when "
        '{ context.action like "payments.*" && !principal.capabilities.contains("payments") };',
        name="caps",
    )
    await create_policy(
        client,
        api_key,
        '@id("no-tools-on-shell") forbid (principal, action, resource) when '
        '{ principal.type == "tool" && context.action like "shell.*" };',
        name="types",
    )
    payer = await register_agent(client, api_key, capabilities=["payments"])
    chatter = await register_agent(client, api_key, name="chatter", capabilities=["chat"])
    tool = await register_agent(client, api_key, name="fetcher", type="tool")
    assert (await check(client, api_key, payer["id"], "payments.refund"))["allowed"] is True
    denied = await check(client, api_key, chatter["id"], "payments.refund")
    assert denied["allowed"] is False and denied["determining_policies"] == ["needs-payments"]
    assert (await check(client, api_key, tool["id"], "shell.exec"))["allowed"] is False
    assert (await check(client, api_key, payer["id"], "shell.exec"))["allowed"] is True

    # an update through the registry applies to the next check (the update's own read of the agent
    # is not served afterwards)
    response = await client.put(
        f"{API}/agents/{chatter['id']}", json={"capabilities": ["chat", "payments"]}, headers=key(api_key)
    )
    assert response.status_code == 200
    assert (await check(client, api_key, chatter["id"], "payments.refund"))["allowed"] is True

    # a status change through the registry applies to the next check
    response = await client.post(
        f"{API}/agents/{payer['id']}/heartbeat", json={"status": "inactive"}, headers=key(api_key)
    )
    assert response.status_code == 200
    body = await check(client, api_key, payer["id"], "payments.refund")
    assert body["allowed"] is False and body["default_applied"] is True


async def test_a_check_after_a_write_reflects_it(client, tenant) -> None:
    api_key = tenant["api_key"]
    agent = await register_agent(client, api_key)
    doc = await create_policy(client, api_key, PERMIT_ACTIVE)
    url = f"{API}/policies/{doc['id']}"
    assert (await check(client, api_key, agent["id"], "sql.drop_table"))["allowed"] is True

    response = await client.put(url, json={"cedar": PERMIT_ACTIVE + FORBID_DROP}, headers=key(api_key))
    assert response.status_code == 200
    assert (await check(client, api_key, agent["id"], "sql.drop_table"))["allowed"] is False

    await client.put(url, json={"is_active": False}, headers=key(api_key))
    body = await check(client, api_key, agent["id"], "sql.select")
    assert body["allowed"] is False and body["default_applied"] is True

    await client.put(url, json={"is_active": True}, headers=key(api_key))
    assert (await check(client, api_key, agent["id"], "sql.select"))["allowed"] is True
    assert (await client.delete(url, headers=key(api_key))).status_code == 204
    assert (await check(client, api_key, agent["id"], "sql.select"))["default_applied"] is True


async def test_checks_are_per_tenant(client, tenant, other_tenant) -> None:
    mine = await register_agent(client, tenant["api_key"])
    theirs = await register_agent(client, other_tenant["api_key"])
    await create_policy(client, other_tenant["api_key"], PERMIT_ACTIVE)
    # my agent is unknown in the other tenant, and the other tenant's permit does not apply to me
    response = await client.post(
        f"{API}/policies/check",
        json={"agent_id": mine["id"], "action": "a", "resource": "r"},
        headers=key(other_tenant["api_key"]),
    )
    assert response.status_code == 404 and (await response.get_json())["detail"] == "Agent not found"
    assert (await check(client, tenant["api_key"], mine["id"], "a"))["allowed"] is False
    assert (await check(client, other_tenant["api_key"], theirs["id"], "a"))["allowed"] is True


@pytest.mark.parametrize("role", ["Developer", "Security Analyst", "Admin"])
async def test_every_role_may_check(client, tenant, role_keys, role: str) -> None:
    agent = await register_agent(client, tenant["api_key"])
    body = await check(client, role_keys[role], agent["id"], "files.read")
    assert body["allowed"] is False


@pytest.mark.parametrize(
    ("body", "status", "fragment"),
    [
        ({"agent_id": "nope", "action": "a", "resource": "r"}, 422, "agent_id: not a valid UUID"),
        ({"agent_id": str(uuid.uuid4()), "action": "a", "resource": "r"}, 404, "Agent not found"),
        ({"action": "a", "resource": "r"}, 422, "agent_id"),
        ({"agent_id": "{agent}", "resource": "r"}, 422, "action"),
        ({"agent_id": "{agent}", "action": "", "resource": "r"}, 422, "action"),
        ({"agent_id": "{agent}", "action": "a"}, 422, "resource"),
        ({"agent_id": "{agent}", "action": "a", "resource": "r", "context": []}, 422, "context"),
        (
            {"agent_id": "{agent}", "action": "a", "resource": "r", "context": {"amount": "lots"}},
            422,
            "context.amount must be an integer",
        ),
        (
            {"agent_id": "{agent}", "action": "a", "resource": "r", "context": {"consent": "yes"}},
            422,
            "context.consent must be a boolean",
        ),
    ],
)
async def test_bad_check_requests(client, tenant, body: dict, status: int, fragment: str) -> None:
    agent = await register_agent(client, tenant["api_key"])
    if body.get("agent_id") == "{agent}":
        body = {**body, "agent_id": agent["id"]}
    response = await client.post(f"{API}/policies/check", json=body, headers=key(tenant["api_key"]))
    assert response.status_code == status
    assert fragment in (await response.get_json())["detail"]


async def test_undeclared_context_keys_are_accepted_and_ignored(client, tenant) -> None:
    agent = await register_agent(client, tenant["api_key"])
    await create_policy(client, tenant["api_key"], PERMIT_ACTIVE)
    body = await check(client, tenant["api_key"], agent["id"], "a", ticket="T-1", nested={"x": [1, 2]})
    assert body["allowed"] is True


async def test_decisions_are_recorded_in_the_audit_chain(app, client, tenant) -> None:
    api_key = tenant["api_key"]
    svc = app.extensions["agentgov"]
    agent = await register_agent(client, api_key)
    await create_policy(client, api_key, PERMIT_ACTIVE + FORBID_DROP)
    await create_policy(client, api_key, PAYMENTS, name="payments")
    denied = await check(client, api_key, agent["id"], "sql.drop_table", "postgres:crm", environment="prod")
    allowed = await check(client, api_key, agent["id"], "sql.select", "postgres:crm")
    pending = await check(client, api_key, agent["id"], "payments.transfer", "account:1", amount=5000)
    no_resource = await check(client, api_key, agent["id"], "sql.select", "")
    unstorable = await client.post(
        f"{API}/policies/check",
        data=f'{{"agent_id": "{agent["id"]}", "action": "a", "resource": "r", "context": {{"x": NaN}}}}',
        headers={**key(api_key), "Content-Type": "application/json"},
    )
    assert unstorable.status_code == 200
    unstorable_id = (await unstorable.get_json())["decision_id"]
    await flush_audit(svc, tenant["id"])

    response = await client.get(f"{API}/audit?agent_id={agent['id']}&limit=200", headers=key(api_key))
    listing = await response.get_json()
    assert response.status_code == 200, listing
    entries = {e["decision"]["decision_id"]: e for e in listing["items"] if e["kind"] == "policy_check"}
    assert set(entries) == {
        denied["decision_id"],
        allowed["decision_id"],
        pending["decision_id"],
        no_resource["decision_id"],
        unstorable_id,
    }
    assert entries[no_resource["decision_id"]]["resource"] == ""
    assert "unrecordable" in entries[unstorable_id]["input"]["context"]

    entry = entries[denied["decision_id"]]
    assert (entry["action"], entry["resource"], entry["agent_id"]) == ("sql.drop_table", "postgres:crm", agent["id"])
    assert entry["is_approved"] is False and entry["risk_score"] == denied["risk_score"]
    assert entry["input"] == {"context": {"environment": "prod"}}
    assert entry["actor"].startswith("key:") and entry["signature"]
    for field in ("allowed", "reason", "severity", "determining_policies", "risk", "default_applied"):
        assert entry["decision"][field] == denied[field], field
    assert entries[allowed["decision_id"]]["is_approved"] is True
    assert entries[pending["decision_id"]]["is_approved"] is None  # waits for a human
    assert entries[pending["decision_id"]]["decision"]["required_approval"] is True

    verify = await client.get(f"{API}/audit/verify", headers=key(api_key))
    assert verify.status_code == 200, await verify.get_json()


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_a_full_audit_mailbox_refuses_the_decision_instead_of_dropping_it(app, client, tenant, mode) -> None:
    import dataclasses

    from agentgov.actors.audit import AppendEntry, audit
    from agentgov.actors.registry import GetAgent, registry
    from agentgov.http.errors import api_error_for

    api_key = tenant["api_key"]
    svc = app.extensions["agentgov"]
    svc.settings = dataclasses.replace(svc.settings, decision_log=mode)
    registered = await register_agent(client, api_key)
    await check(client, api_key, registered["id"], "files.read")
    agent = await registry(svc, tenant["id"]).ask(GetAgent(registered["id"]))
    view = await policy_view(svc, tenant["id"])
    result = CheckResult(
        decision=view.evaluate(agent_attributes(agent), "files.read", "r:1", {}),
        decision_id=str(uuid.uuid4()),
        evaluated_at="2026-01-01T00:00:00.000000Z",
    )
    ref = audit(svc, tenant["id"])
    # fill the audit mailbox and record without yielding in between, so the actor cannot drain it
    # (a waiting receiver takes the first message directly, so fill until the runtime says it is full)
    filler = AppendEntry(agent.id, "fill", "r")
    with pytest.raises(MailboxFull):
        for _ in range(svc.settings.mailbox_capacity + 2):
            ref.tell(filler)
    with pytest.raises(MailboxFull) as raised:
        await record_decision(svc, tenant["id"], agent, "files.read", "r:1", {}, result, "key:test")
    error = api_error_for(raised.value)
    assert error.status == 503 and error.headers["Retry-After"] == "1"


async def test_denied_checks_publish_policy_violated(app, client, tenant) -> None:
    api_key = tenant["api_key"]
    svc = app.extensions["agentgov"]
    agent = await register_agent(client, api_key)
    await create_policy(client, api_key, PERMIT_ACTIVE + FORBID_DROP)
    ref = notifier(svc, tenant["id"])
    subscription = await ref.ask(Subscribe(Role.SECURITY_ANALYST, "test"))
    try:
        await check(client, api_key, agent["id"], "sql.select")
        denied = await check(client, api_key, agent["id"], "sql.drop_table", "postgres:crm")
        with trio.fail_after(5):
            while True:
                message = json.loads(await subscription.receive.receive())
                if message["event"] == "policy.violated":
                    break
    finally:
        ref.tell(Unsubscribe(subscription.id))
    data = message["data"]
    assert message["tenant_id"] == tenant["id"]
    assert data["decision_id"] == denied["decision_id"] and data["agent_id"] == agent["id"]
    assert data["determining_policies"] == ["no-sql-drop"] and data["severity"] == "critical"
    assert (data["action"], data["resource"]) == ("sql.drop_table", "postgres:crm")


async def test_approval_required_opens_a_hitl_request(client, tenant) -> None:
    api_key = tenant["api_key"]
    agent = await register_agent(client, api_key, capabilities=["payments"])
    await create_policy(client, api_key, PAYMENTS)
    body = await check(client, api_key, agent["id"], "payments.transfer", "account:1", amount=5000)
    assert body["required_approval"] is True and body["approval_id"]
    response = await client.get(f"{API}/hitl/status/{body['approval_id']}", headers=key(api_key))
    status = await response.get_json()
    assert response.status_code == 200, status
    assert status["status"] == "pending" and status["agent_id"] == agent["id"]
    # the same pending action asked again reuses the request
    again = await check(client, api_key, agent["id"], "payments.transfer", "account:1", amount=5000)
    assert again["approval_id"] == body["approval_id"]
