"""`AsyncClient.events()`: live notifications over the real WebSocket, under trio and asyncio; refused without
or with a bad token; only the tenant's events. And the single sign-on helpers."""

from __future__ import annotations

import asyncio

import pytest
import trio
from agentgov_client import AgentgovError, AsyncClient, AuthenticationError, CreatedTenant

from tests.client.conftest import ADMIN_EMAIL, PASSWORD, Service
from tests.support.app import ADMIN_KEY


async def _logged_in(service: Service, email: str = ADMIN_EMAIL) -> AsyncClient:
    client = AsyncClient(service.url)
    await client.login(email, PASSWORD)
    return client


async def test_events_of_the_tenant_arrive_in_order(
    service: Service, tenant: CreatedTenant, client, agent, policy
) -> None:
    async with AsyncClient(service.url, admin_key=ADMIN_KEY) as admin:
        other = await admin.create_tenant("Other")
    watcher = await _logged_in(service)
    try:
        async with watcher.events(names={"system.status", "policy.violated"}) as stream:
            events = aiter(stream)
            first = await anext(events)
            assert first.event == "system.status" and first.tenant_id == tenant.id
            async with AsyncClient(service.url, api_key=other.api_key) as outsider:
                foreign = await outsider.register_agent("other-bot", "llm")
                await outsider.check(foreign.id, "delete", "db://x")  # the other tenant: never seen here
            decision = await client.check(agent.id, "delete", "db://orders")
            assert not decision.allowed
            with trio.fail_after(10):
                violated = await anext(events)
            assert violated.event == "policy.violated" and violated.tenant_id == tenant.id
            assert violated.data["decision_id"] == decision.decision_id and violated.data["agent_id"] == agent.id
    finally:
        await watcher.aclose()


async def test_refusals(service: Service, tenant: CreatedTenant) -> None:
    async with AsyncClient(service.url, api_key=tenant.api_key) as keyed:
        with pytest.raises(ValueError, match="access token"):
            keyed.events()
    async with AsyncClient(service.url, access_token="not-a-token") as bad:
        with pytest.raises(AuthenticationError) as refused:
            async with bad.events():
                pass
        assert refused.value.status_code == 401


async def test_events_under_asyncio(service: Service, tenant: CreatedTenant) -> None:
    async def run() -> str:
        async with AsyncClient(service.url) as client:
            await client.login(ADMIN_EMAIL, PASSWORD)
            async with client.events() as stream:
                async for event in stream:
                    return event.event
        return ""

    assert await trio.to_thread.run_sync(lambda: asyncio.run(run())) == "system.status"


async def test_single_sign_on_helpers(service: Service) -> None:
    async with AsyncClient(service.url) as client:
        providers = await client.sso_providers()
        assert {p["id"] for p in providers} >= {"google", "microsoft", "okta", "oidc"}
        assert all(p["enabled"] is False for p in providers)  # none configured in this service
        url = client.sso_login_url("okta", redirect="https://app.example/done")
        assert url.startswith(f"{service.url}/api/v1/auth/sso/login?provider=okta&redirect=https")
        with pytest.raises(AgentgovError) as refused:
            await client.sso_exchange("no-such-code-0123456789")
        assert refused.value.status_code in (400, 401, 422) and client.access_token is None
