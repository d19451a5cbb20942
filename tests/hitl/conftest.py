"""Fixtures and helpers of the HITL tests: registered agents and a direct subscription to a notifier."""

from __future__ import annotations

import json
from typing import Any

import pytest
from quart_trio import QuartTrio

from agentgov.actors.notifier import Subscribe, Subscription, notifier
from agentgov.security.roles import Role
from agentgov.services import Services


def key(api_key: str) -> dict[str, str]:
    return {"X-API-Key": api_key}


async def register_agent(client: Any, api_key: str, name: str = "mail dispatcher") -> str:
    response = await client.post("/api/v1/agents/register", json={"name": name, "type": "tool"}, headers=key(api_key))
    assert response.status_code == 201, await response.get_data(as_text=True)
    return (await response.get_json())["id"]


@pytest.fixture
async def agent_id(client, tenant) -> str:
    """An agent registered in `tenant`."""
    return await register_agent(client, tenant["api_key"])


@pytest.fixture
async def other_agent_id(client, other_tenant) -> str:
    """An agent registered in `other_tenant`."""
    return await register_agent(client, other_tenant["api_key"], "other agent")


async def subscribe(app_or_services: QuartTrio | Services, tenant_id: str, role: Role = Role.ADMIN) -> Subscription:
    """A subscription straight on the tenant's notifier (what a WebSocket connection holds).

    If this starts the notifier, its periodic `system.status` is turned off (a day apart), so that a test
    moving a mock clock by hours does not fill the buffer of a subscription it only reads later.
    """
    svc = app_or_services.extensions["agentgov"] if isinstance(app_or_services, QuartTrio) else app_or_services
    return await notifier(svc, tenant_id, status_interval=86400.0).ask(Subscribe(role, "test"))


async def next_event(subscription: Subscription, *, skip_status: bool = True) -> dict[str, Any]:
    """The next envelope on `subscription` (skipping `system.status` unless asked not to)."""
    while True:
        envelope = json.loads(await subscription.receive.receive())
        if not (skip_status and envelope["event"] == "system.status"):
            return envelope
