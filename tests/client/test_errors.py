"""Every error class, each from a real answer of the service (or a real failed connection)."""

from __future__ import annotations

import dataclasses

import pytest
import trio
from agentgov_client import (
    Agent,
    AgentgovError,
    APIConnectionError,
    APIStatusError,
    APITimeoutError,
    AsyncClient,
    AuthenticationError,
    ConflictError,
    CreatedTenant,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
    ValidationError,
)

from agentgov.siem.settings import SiemSettings
from tests.client.conftest import ADMIN_EMAIL, Service, running_service
from tests.support.app import ADMIN_KEY, settings_for
from tests.support.ports import free_port


async def test_401_403_404_409_422_and_400(
    service: Service, client: AsyncClient, tenant: CreatedTenant, agent: Agent
) -> None:
    async with AsyncClient(service.url, api_key="agk_not-a-real-key") as stranger:
        with pytest.raises(AuthenticationError) as unauthenticated:
            await stranger.list_agents()
    error = unauthenticated.value
    assert error.status_code == 401 and error.detail and error.request_id and isinstance(error, APIStatusError)
    assert error.method == "GET" and "/api/v1/agents?" in error.url and error.body["detail"] == error.detail

    developer = await client.create_user("dev@acme.example", "a long dev passphrase", role="Developer")
    async with AsyncClient(service.url) as session:
        await session.login("dev@acme.example", "a long dev passphrase")
        assert (await session.list_agents()).total == 1  # Developer may read agents
        with pytest.raises(PermissionDeniedError) as forbidden:
            await session.create_policy("mine", "permit (principal, action, resource) when { false };")
    assert forbidden.value.status_code == 403 and "policies:write" in forbidden.value.detail

    with pytest.raises(NotFoundError) as missing:
        await client.get_user("00000000-0000-4000-8000-000000000000")
    assert missing.value.status_code == 404 and missing.value.detail == "User not found"

    with pytest.raises(ConflictError) as duplicate:
        await client.create_user("dev@acme.example", "another long passphrase")
    assert duplicate.value.status_code == 409 and "already exists" in duplicate.value.detail
    with pytest.raises(ConflictError):
        await client.block_user(tenant.admin_user_id or "")  # the last active Admin
    assert (await client.get_user(developer.id)).role == "Developer"

    with pytest.raises(ValidationError) as invalid:
        await client.register_agent("", "robot", capabilities=[""])
    fields = {e.field for e in invalid.value.errors}
    assert invalid.value.status_code == 422 and {"name", "type"} <= fields
    assert all(e.message and e.type for e in invalid.value.errors)
    with pytest.raises(ValidationError) as weak:
        await client.create_user("weak@acme.example", "short")
    assert [e.field for e in weak.value.errors] == ["password"] and weak.value.errors[0].type == "weak_password"

    with pytest.raises(ValidationError) as unknown_event:
        await client.send_webhook("agent.sleep", {"agent_id": agent.id})
    assert unknown_event.value.status_code == 400 and unknown_event.value.detail == "Unknown event type"


async def test_429_from_login_throttling(service: Service, tenant: CreatedTenant) -> None:
    async with AsyncClient(service.url) as anonymous:
        for _ in range(5):
            with pytest.raises(AuthenticationError):
                await anonymous.login(ADMIN_EMAIL, "not the password at all")
        with pytest.raises(RateLimitError) as throttled:
            await anonymous.login(ADMIN_EMAIL, "not the password at all")
    assert throttled.value.status_code == 429
    assert throttled.value.retry_after is not None and 0 < throttled.value.retry_after <= 900


async def test_other_statuses_are_api_status_errors(sqlite_url: str) -> None:
    port = free_port()  # the SIEM destination refuses connections: /siem/test answers 502
    siem = SiemSettings(transport="syslog-tcp", host="127.0.0.1", port=port, format="json", timeout=3.0)
    settings = dataclasses.replace(settings_for(sqlite_url), siem=siem)
    async with running_service(settings) as service, AsyncClient(service.url, admin_key=ADMIN_KEY) as admin:
        assert (await admin.siem_status())["transport"] == "syslog-tcp"
        with pytest.raises(APIStatusError) as bad_gateway:
            await admin.siem_test()
    assert type(bad_gateway.value) is APIStatusError and bad_gateway.value.status_code == 502
    assert "did not accept" in bad_gateway.value.detail


async def test_connection_refused_and_timeout(service: Service, tenant: CreatedTenant) -> None:
    async with AsyncClient(f"http://127.0.0.1:{free_port()}", api_key=tenant.api_key, max_retries=0) as nowhere:
        with pytest.raises(APIConnectionError) as refused:
            await nowhere.health()
    assert not isinstance(refused.value, APITimeoutError) and refused.value.status_code is None

    listener = trio.socket.socket()  # accepts connections (backlog) but never answers
    await listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    try:
        url = f"http://127.0.0.1:{listener.getsockname()[1]}"
        async with AsyncClient(url, api_key=tenant.api_key, timeout=0.3, max_retries=0) as silent:
            with pytest.raises(APITimeoutError) as timed_out:
                await silent.health()
    finally:
        listener.close()
    assert isinstance(timed_out.value, APIConnectionError) and isinstance(timed_out.value, AgentgovError)


async def test_tenant_name_conflict_and_missing_admin_key(service: Service, tenant: CreatedTenant) -> None:
    async with AsyncClient(service.url, admin_key=ADMIN_KEY) as admin:
        with pytest.raises(ConflictError):
            await admin.create_tenant(tenant.name)
    async with AsyncClient(service.url, admin_key="wrong-admin-key-0123456789") as impostor:
        with pytest.raises(AuthenticationError):
            await impostor.create_tenant("Other")
