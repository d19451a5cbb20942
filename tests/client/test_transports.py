"""The same operations through each transport: the blocking `Client` (in a worker thread), `AsyncClient` under
asyncio; configuration from the environment; sessions, users and API keys; the integration header; webhooks."""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
from pathlib import Path
from typing import Any

import agentgov_client
import httpx
import pytest
import trio
from agentgov_client import (
    Agent,
    AsyncClient,
    AuthenticationError,
    Client,
    CreatedTenant,
    NotFoundError,
    Page,
    sign_webhook,
    webhook_body,
)

from tests.client.conftest import ADMIN_EMAIL, PASSWORD, WEBHOOK_SECRET, Service, eventually, running_service
from tests.support.app import ADMIN_KEY, settings_for


def _public(cls: type) -> set[str]:
    return {name for name in dir(cls) if not name.startswith("_")}


def test_both_clients_have_the_same_methods_written_once() -> None:
    shared = _public(Client) & _public(AsyncClient)
    assert _public(Client) - shared == {"close"} and _public(AsyncClient) - shared == {
        "aclose",
        "events",
    }  # live events: async only
    operations = [name for name in shared if hasattr(getattr(Client, name), "__wrapped__")]
    assert len(operations) > 90
    for name in operations:  # both methods run the one builder of the operation
        assert getattr(Client, name).__wrapped__ is getattr(AsyncClient, name).__wrapped__, name
    for name in ("export_audit_to_file", "download_export", "guarded", "paginate"):
        sync_params = inspect.signature(getattr(Client, name)).parameters.keys()
        assert sync_params == inspect.signature(getattr(AsyncClient, name)).parameters.keys(), name
    assert inspect.iscoroutinefunction(AsyncClient.check) and not inspect.iscoroutinefunction(Client.check)


async def test_sync_client_in_a_worker_thread(service: Service, tenant: CreatedTenant, tmp_path: Path) -> None:
    def scenario() -> dict[str, Any]:
        with Client(service.url, api_key=tenant.api_key, webhook_secret=WEBHOOK_SECRET) as client:
            agents = [client.register_agent(f"bot-{i}", "llm") for i in range(5)]
            listed = list(client.iter_agents(page_size=2))
            client.log_action(agents[0].id, "read", "db://orders", output={"rows": 2})
            receipt = client.send_webhook("agent.heartbeat", {"agent_id": agents[1].id, "status": "error"})
            with client.export_audit("jsonl") as stream:
                exported = stream.read()
            written = client.export_audit_to_file(tmp_path / "trail.csv", "csv")
            try:
                client.get_agent("00000000-0000-4000-8000-000000000000")
            except NotFoundError as exc:
                missing = exc.status_code
            return {
                "ids": [a.id for a in agents],
                "listed": [a.id for a in listed],
                "paged": [a.id for a in client.paginate(client.list_agents, page_size=3)],
                "status": client.get_agent(agents[1].id).status,
                "receipt": receipt,
                "exported": exported,
                "written": written,
                "missing": missing,
                "health": client.health(),
            }

    result = await trio.to_thread.run_sync(scenario)
    assert result["listed"] == result["ids"] == result["paged"]
    assert result["receipt"].agent_status == "error" and result["status"] == "error"
    assert result["exported"].count(b"\n") == 1  # the one logged action (a heartbeat is not an audit entry)
    assert result["written"].size == (tmp_path / "trail.csv").stat().st_size > 0
    assert result["missing"] == 404 and result["health"] == {"status": "ok"}


async def test_async_client_under_asyncio(service: Service, tenant: CreatedTenant) -> None:
    async def scenario() -> tuple[list[str], bool, int]:
        async with AsyncClient(service.url, api_key=tenant.api_key) as client:
            agent = await client.register_agent("asyncio-bot", "tool")
            await client.create_policy("allow", '@id("all")\npermit (principal, action, resource);')
            decision = await client.check(agent.id, "read", "db://orders")
            await client.log_action(agent.id, "read", "db://orders")
            kinds = [e.kind async for e in client.iter_audit(page_size=1)]
            result = await client.guarded(agent.id, "read", "db://x", {}, run=lambda: asyncio.sleep(0, result=7))
            return kinds, decision.allowed, result

    kinds, allowed, result = await trio.to_thread.run_sync(lambda: asyncio.run(scenario()))
    assert kinds == ["action", "policy_check"] and allowed and result == 7


async def test_configuration_from_the_environment(
    service: Service, tenant: CreatedTenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTGOV_URL", f"{service.url}/api/v1/")
    monkeypatch.setenv("AGENTGOV_API_KEY", tenant.api_key)
    monkeypatch.setenv("AGENTGOV_ADMIN_KEY", ADMIN_KEY)
    async with AsyncClient() as client:
        assert client.base_url == service.url and client.timeout == 30.0 and client.retry.max_retries == 3
        assert isinstance(await client.list_agents(), Page)
        assert (await client.create_tenant("From the environment")).api_key
    async with AsyncClient(api_key="agk_explicit-wins") as explicit:
        with pytest.raises(AuthenticationError):
            await explicit.list_agents()
    with Client(timeout=5) as sync:  # no request sent
        assert sync.api_key == tenant.api_key and sync.admin_key == ADMIN_KEY and sync.timeout == 5


async def test_login_session_users_and_api_keys(service: Service, tenant: CreatedTenant) -> None:
    async with AsyncClient(service.url) as admin:
        login = await admin.login(ADMIN_EMAIL, PASSWORD)
        assert "access_token" not in repr(login) and login.user.role == "Admin" and login.expires_in > 0
        me = await admin.me()
        assert me.email == ADMIN_EMAIL and "users:manage" in me.permissions
        assert (await admin.get_my_profile()).id == me.id
        assert (await admin.update_my_profile(full_name="Ada Admin")).full_name == "Ada Admin"

        users = [await admin.create_user(f"u{i}@acme.example", f"a long passphrase {i}") for i in range(3)]
        assert [u.email async for u in admin.iter_users(role="Developer", page_size=2)] == [u.email for u in users]
        assert (await admin.list_users(search="u1@")).items[0].id == users[1].id
        assert (await admin.update_user(users[0].id, full_name="Una")).full_name == "Una"
        assert (await admin.set_user_role(users[0].id, "Security Analyst")).role == "Security Analyst"
        assert not (await admin.block_user(users[1].id)).is_active
        assert (await admin.unblock_user(users[1].id)).is_active
        await admin.reset_password(users[2].id, "a brand new passphrase")
        await admin.delete_user(users[2].id)
        with pytest.raises(NotFoundError):
            await admin.get_user(users[2].id)

        key = await admin.create_api_key("ci", role="Developer")
        assert key.api_key and key.role == "Developer" and key.api_key not in repr(key)
        assert key.id in [k.id async for k in admin.iter_api_keys()]
        async with AsyncClient(service.url, api_key=key.api_key) as ci:
            assert (await ci.list_agents()).total == 0
            await admin.revoke_api_key(key.id)
            with pytest.raises(AuthenticationError):
                await ci.list_agents()

        await admin.logout()
        assert admin.access_token is None and admin.api_key is None  # the session's credentials are dropped
        async with AsyncClient(service.url, access_token=login.access_token) as stale:
            with pytest.raises(AuthenticationError):
                await stale.me()


async def test_super_admin_lists_tenants(sqlite_url: str) -> None:
    root, password = "root@platform.example", "a long root passphrase"
    settings = dataclasses.replace(settings_for(sqlite_url), superadmin_email=root, superadmin_password=password)
    async with running_service(settings) as service:
        async with AsyncClient(service.url, admin_key=ADMIN_KEY) as admin:
            created = [await admin.create_tenant(f"tenant-{i}") for i in range(3)]
            assert (await admin.siem_status())["enabled"] is False
        async with AsyncClient(service.url) as platform:
            await platform.login(root, password)
            names = [t.name async for t in platform.iter_tenants(page_size=2)]
            assert names == [t.name for t in created]
            assert (await platform.siem_status())["enabled"] is False  # the Super Admin's token works too


async def test_integration_header_is_counted(service: Service, tenant: CreatedTenant) -> None:
    async with AsyncClient(service.url, api_key=tenant.api_key, integration="langchain") as client:
        assert client.integration == f"langchain/{agentgov_client.__version__}"
        agent = await client.register_agent("langchain-agent", "llm")
        await client.create_policy("allow", '@id("all")\npermit (principal, action, resource);')
        await client.check(agent.id, "read", "db://orders")
        await client.log_action(agent.id, "read", "db://orders")

        async def counted() -> dict[str, Any] | None:
            usage = (await client.integration_status("langchain"))["usage"]
            return usage if usage["checks_last_24h"] and usage["actions_last_24h"] else None

        usage = await eventually(counted)
    assert usage["checks_last_24h"] == 1 and usage["actions_last_24h"] == 1 and usage["agents"] == 1


async def test_webhook_signature_matches_the_service(service: Service, client: AsyncClient, agent: Agent) -> None:
    body = webhook_body("agent.action", {"agent_id": agent.id, "action": "send_email", "output": {"ok": True}})
    headers = {
        "X-API-Key": client.api_key or "",
        "Content-Type": "application/json",
        "X-Webhook-Signature": sign_webhook(body, WEBHOOK_SECRET),
    }
    async with httpx.AsyncClient() as raw:  # the helper alone, with a plain HTTP client
        answer = await raw.post(f"{service.url}/webhooks/agent", content=body, headers=headers)
    assert answer.status_code == 200 and answer.json()["status"] == "accepted"

    first = await client.send_webhook("agent.action", {"agent_id": agent.id, "action": "x"}, delivery_id="d-1")
    again = await client.send_webhook("agent.action", {"agent_id": agent.id, "action": "x"}, delivery_id="d-1")
    assert not first.duplicate and again.duplicate and again.entry_id == first.entry_id
    with pytest.raises(AuthenticationError) as wrong:
        await client.send_webhook("agent.heartbeat", {"agent_id": agent.id}, secret="not-the-secret")
    assert wrong.value.detail == "Invalid webhook signature"
    with pytest.raises(NotFoundError):
        await client.send_webhook("agent.heartbeat", {"agent_id": "00000000-0000-4000-8000-000000000000"})
    entry = await client.get_audit_entry(answer.json()["entry_id"])
    assert entry.action == "send_email" and entry.output == {"ok": True}
