"""Helpers for the audit trail and webhook tests: registered agents, entries, signed deliveries."""

from __future__ import annotations

import hashlib
import hmac
import json
from typing import Any

import pytest

WEBHOOK_SECRET = "test-webhook-secret-0123456789"
LOG = "/api/v1/audit/log"
WEBHOOK = "/webhooks/agent"


def key_headers(api_key: str) -> dict[str, str]:
    return {"X-API-Key": api_key}


async def register_agent(client: Any, api_key: str, name: str = "billing-bot") -> dict[str, Any]:
    response = await client.post(
        "/api/v1/agents/register", json={"name": name, "type": "tool"}, headers=key_headers(api_key)
    )
    assert response.status_code == 201, await response.get_data(as_text=True)
    return await response.get_json()


async def log_entry(client: Any, api_key: str, agent_id: str, **fields: Any) -> dict[str, Any]:
    body = {"agent_id": agent_id, "action": "read", "resource": "db://orders", **fields}
    response = await client.post(LOG, json=body, headers=key_headers(api_key))
    assert response.status_code == 201, await response.get_data(as_text=True)
    return await response.get_json()


def signature(body: bytes, secret: str = WEBHOOK_SECRET) -> str:
    return hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


async def deliver(
    client: Any,
    api_key: str | None,
    event: Any,
    payload: Any,
    *,
    sign: bool = True,
    extra: dict[str, str] | None = None,
) -> Any:
    """POST a signed webhook delivery of `{"event": event, "payload": payload}`."""
    body = json.dumps({"event": event, "payload": payload}).encode()
    headers = {"Content-Type": "application/json", **(extra or {})}
    if api_key is not None:
        headers["X-API-Key"] = api_key
    if sign:
        headers["X-Webhook-Signature"] = signature(body)
    return await client.post(WEBHOOK, data=body, headers=headers)


@pytest.fixture
async def agent(client: Any, tenant: dict[str, Any]) -> dict[str, Any]:
    """An agent registered in `tenant`."""
    return await register_agent(client, tenant["api_key"])
