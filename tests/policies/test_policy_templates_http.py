"""Every template example, run through the HTTP API: the documented decision is the served one.

For each example: a fresh tenant, the rendered template stored as its only policy, the tenant default the
example names, an agent registered with the example's attributes (status set by heartbeat, risk score
through the registry), and `POST /policies/check`. The tenant's policy actor is started with a clock fixed
at the example's evaluation time, so time-of-day templates are deterministic.
"""

from __future__ import annotations

import pytest

from agentgov.actors.policy import PolicyActor
from agentgov.actors.registry import SetRiskScore, registry
from agentgov.policy import TEMPLATES, PolicyTemplate
from agentgov.policy.templates import TemplateExample
from agentgov.storage.policies import PolicyRepo
from tests.policies.helpers import API, create_policy, key, register_agent
from tests.support.app import ADMIN_KEY

# An example with a detector score needs a trained model: the anomaly tests cover those end to end.
EXAMPLES = [(t, e) for t in TEMPLATES for e in t.examples if e.anomaly_score is None]


@pytest.mark.parametrize(
    ("template", "example"),
    EXAMPLES,
    ids=[f"{t.id}:{e.description}" for t, e in EXAMPLES],
)
async def test_template_example_through_the_api(
    app, client, template: PolicyTemplate, example: TemplateExample
) -> None:
    svc = app.extensions["agentgov"]
    response = await client.post(
        f"{API}/tenants", json={"name": f"t-{template.id}"}, headers={"X-Admin-Key": ADMIN_KEY}
    )
    tenant = await response.get_json()
    api_key = tenant["api_key"]
    svc.actors.get_or_spawn(
        f"policy:{tenant['id']}", lambda: PolicyActor(tenant["id"], PolicyRepo(svc.db), clock=lambda: example.now)
    )

    served = await (await client.get(f"{API}/policies/templates?limit=200", headers=key(api_key))).get_json()
    (listed,) = [t for t in served["items"] if t["id"] == template.id]
    await create_policy(client, api_key, listed["cedar"], name=template.name)
    default = "allow" if example.default_allow else "deny"
    response = await client.put(f"{API}/policies/settings", json={"default_decision": default}, headers=key(api_key))
    assert response.status_code == 200

    agent = await register_agent(
        client,
        api_key,
        name=example.agent["name"],
        type=example.agent["type"],
        capabilities=list(example.agent["capabilities"]),
        status=example.agent["status"],
    )
    if example.agent.get("risk_score") is not None:
        await registry(svc, tenant["id"]).ask(SetRiskScore(agent["id"], example.agent["risk_score"]))

    response = await client.post(
        f"{API}/policies/check",
        json={
            "agent_id": agent["id"],
            "action": example.action,
            "resource": example.resource,
            "context": dict(example.context),
        },
        headers=key(api_key),
    )
    decision = await response.get_json()
    assert response.status_code == 200, decision
    documented = next(e for e in listed["examples"] if e["description"] == example.description)["decision"]
    assert {k: decision[k] for k in ("allowed", "required_approval", "severity")} == documented, decision["reason"]
    assert decision["errors"] == []
    if not decision["default_applied"]:
        assert all(ref.startswith(template.id) for ref in decision["determining_policies"])
        assert all(f"'{ref}'" in decision["reason"] for ref in decision["determining_policies"])
