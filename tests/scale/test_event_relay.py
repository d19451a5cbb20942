"""Live notifications across processes: two real `python run.py` processes sharing PostgreSQL and Redis; a
WebSocket subscriber connected to one receives the events the other produces (relayed through Redis pub/sub),
only its own tenant's, and its own process's events exactly once."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
import trio
from trio_websocket import open_websocket_url

from tests.policies.helpers import FORBID_DROP, PERMIT_ACTIVE
from tests.scale.processes import ADMIN, PASSWORD, two_processes


async def _tenant(a: httpx.AsyncClient, b: httpx.AsyncClient, name: str) -> tuple[dict, str]:
    email = f"admin@{name.lower()}.example"
    created = await a.post(
        "/api/v1/tenants", json={"name": name, "admin_email": email, "admin_password": PASSWORD}, headers=ADMIN
    )
    assert created.status_code == 201, created.text
    login = await b.post("/api/v1/auth/login", json={"email": email, "password": PASSWORD})
    assert login.status_code == 200, login.text
    return created.json(), login.json()["access_token"]


async def _next_event(ws, name: str) -> dict:
    while True:
        message = json.loads(await ws.get_message())
        if message["event"] == name:
            return message


@pytest.mark.postgres
async def test_an_event_produced_on_one_process_reaches_a_subscriber_of_the_other(tmp_path: Path) -> None:
    async with two_processes(tmp_path) as (a, b):
        tenant, token = await _tenant(a, b, "Acme")
        other, other_token = await _tenant(a, b, "Other")
        ws_b = str(b.base_url).replace("http://", "ws://").rstrip("/")
        key = {"X-API-Key": tenant["api_key"]}
        async with (
            open_websocket_url(f"{ws_b}/api/v1/ws?token={token}") as ws,
            open_websocket_url(f"{ws_b}/api/v1/ws?token={other_token}") as other_ws,
        ):
            with trio.fail_after(20):
                await _next_event(ws, "system.status")
                await _next_event(other_ws, "system.status")
            for name, cedar in (("permit", PERMIT_ACTIVE), ("forbid", FORBID_DROP)):
                assert (
                    await a.post("/api/v1/policies", json={"name": name, "cedar": cedar}, headers=key)
                ).status_code == 201
            agent = (await a.post("/api/v1/agents/register", json={"name": "bot", "type": "llm"}, headers=key)).json()
            check = {"agent_id": agent["id"], "action": "sql.drop_table", "resource": "db://orders", "context": {}}
            decided = await a.post("/api/v1/policies/check", json=check, headers=key)  # on process A
            assert decided.status_code == 200 and decided.json()["allowed"] is False
            with trio.fail_after(20):
                event = await _next_event(ws, "policy.violated")  # received on process B
            assert event["tenant_id"] == tenant["id"]
            assert event["data"]["decision_id"] == decided.json()["decision_id"]

            local = await b.post("/api/v1/policies/check", json=check, headers=key)  # on process B itself
            with trio.fail_after(20):
                again = await _next_event(ws, "policy.violated")
            assert again["data"]["decision_id"] == local.json()["decision_id"]  # once: not also via Redis
            with trio.move_on_after(1):
                extra = await _next_event(ws, "policy.violated")
                raise AssertionError(f"an event arrived twice: {extra}")
            with trio.move_on_after(0.5):
                leaked = await _next_event(other_ws, "policy.violated")
                raise AssertionError(f"another tenant's event reached this subscriber: {leaked}")
            assert other["id"] != tenant["id"]
