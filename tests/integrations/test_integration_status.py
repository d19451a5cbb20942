"""`GET /integrations/{integration}/status`: public facts without credentials, the tenant's usage with an
`X-API-Key` (counted from the `X-Agentgov-Integration` header of checks and logged actions), 404 for any
other name, 401 for a bad key, and no tenant sees another's usage. Both backends."""

from __future__ import annotations

from tests.policies.helpers import PERMIT_ACTIVE, create_policy, register_agent
from tests.support.polling import wait_until

API = "/api/v1"


async def _check(client, key: str, agent_id: str, integration: str | None) -> None:
    headers = {"X-API-Key": key} | ({"X-Agentgov-Integration": integration} if integration else {})
    response = await client.post(
        f"{API}/policies/check",
        json={"agent_id": agent_id, "action": "db.read", "resource": "db://x", "context": {}},
        headers=headers,
    )
    assert response.status_code == 200, await response.get_json()


async def _log(client, key: str, agent_id: str, integration: str) -> None:
    response = await client.post(
        f"{API}/audit/log",
        json={"agent_id": agent_id, "action": "tool.search", "resource": "web://q"},
        headers={"X-API-Key": key, "X-Agentgov-Integration": integration},
    )
    assert response.status_code == 201


async def _usage(client, name: str, key: str) -> dict:
    response = await client.get(f"{API}/integrations/{name}/status", headers={"X-API-Key": key})
    assert response.status_code == 200, await response.get_json()
    return (await response.get_json())["usage"]


async def test_public_facts_and_unknown_names(client) -> None:
    for name, framework in (("langchain", "langchain"), ("openai-agents", "openai-agents")):
        response = await client.get(f"{API}/integrations/{name}/status")
        body = await response.get_json()
        assert response.status_code == 200
        assert body["integration"] == name and body["framework"] == framework and body["enabled"] is True
        assert body["supported_versions"] and body["header"] == "X-Agentgov-Integration"
        assert body["usage"] is None
    response = await client.get(f"{API}/integrations/crewai/status")
    assert response.status_code == 404
    assert "langchain, openai-agents" in (await response.get_json())["detail"]
    bad = await client.get(f"{API}/integrations/langchain/status", headers={"X-API-Key": "agk_0000000000000000_x"})
    assert bad.status_code == 401 and "detail" in await bad.get_json()


async def test_usage_is_counted_per_tenant_and_integration(client, tenant, other_tenant, role_keys) -> None:
    key = tenant["api_key"]
    await create_policy(client, key, PERMIT_ACTIVE)
    first = await register_agent(client, key, name="lc-one")
    second = await register_agent(client, key, name="lc-two")
    assert await _usage(client, "langchain", role_keys["Developer"]) == {
        "tenant_id": tenant["id"],
        "agents": 0,
        "agents_last_24h": 0,
        "checks_last_24h": 0,
        "actions_last_24h": 0,
        "last_seen_at": None,
    }
    for agent in (first, first, second):
        await _check(client, key, agent["id"], "langchain/0.1.0")
    await _log(client, key, first["id"], "LangChain/0.1.0")
    await _log(client, key, second["id"], "langchain")
    await _check(client, key, first["id"], "openai-agents/0.1.0")
    await _check(client, key, first["id"], "crewai/1.0")  # not an integration: not counted anywhere
    await _check(client, key, first["id"], None)

    async def counted() -> bool:
        usage = await _usage(client, "langchain", key)
        return usage["checks_last_24h"] == 3 and usage["actions_last_24h"] == 2

    await wait_until(counted, within=10)
    usage = await _usage(client, "langchain", role_keys["Developer"])
    assert usage["agents"] == usage["agents_last_24h"] == 2 and usage["last_seen_at"] is not None
    await wait_until(lambda: _usage_is(client, "openai-agents", key, checks=1), within=10)
    other = await _usage(client, "langchain", other_tenant["api_key"])
    assert other["tenant_id"] == other_tenant["id"] and other["checks_last_24h"] == 0 and other["agents"] == 0


async def _usage_is(client, name: str, key: str, *, checks: int) -> bool:
    usage = await _usage(client, name, key)
    return usage["checks_last_24h"] == checks and usage["agents"] == 1


async def test_checks_served_by_the_hot_path_are_counted(sqlite_url: str) -> None:
    """Through real hypercorn, where `POST /policies/check` is answered in front of Quart."""
    from tests.support.app import ADMIN_KEY, live_server, settings_for

    async with live_server(settings_for(sqlite_url)) as (http, _):
        created = await http.post(f"{API}/tenants", json={"name": "Acme"}, headers={"X-Admin-Key": ADMIN_KEY})
        key = {"X-API-Key": created.json()["api_key"]}
        await http.post(f"{API}/policies", json={"name": "p", "cedar": PERMIT_ACTIVE}, headers=key)
        agent = (await http.post(f"{API}/agents/register", json={"name": "bot", "type": "llm"}, headers=key)).json()
        for _ in range(2):
            response = await http.post(
                f"{API}/policies/check",
                json={"agent_id": agent["id"], "action": "a", "resource": "r", "context": {}},
                headers={**key, "X-Agentgov-Integration": "openai-agents/0.3.0"},
            )
            assert response.status_code == 200 and response.json()["allowed"] is True

        async def counted() -> bool:
            status = (await http.get(f"{API}/integrations/openai-agents/status", headers=key)).json()
            return status["usage"]["checks_last_24h"] == 2 and status["usage"]["agents"] == 1

        await wait_until(counted, within=10)
