"""POST /webhooks/agent: signature first, the spec's error table, defaults, heartbeats, duplicate deliveries."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest

from tests.audit.conftest import WEBHOOK, deliver, key_headers, register_agent, signature
from tests.support.app import ADMIN_KEY, app_for, settings_for


async def entries_of(client, api_key: str) -> list[dict[str, Any]]:
    body = await (await client.get("/api/v1/audit", headers=key_headers(api_key))).get_json()
    return body["items"]


async def test_action_creates_an_entry_with_the_spec_defaults(client, tenant, agent) -> None:
    response = await deliver(client, tenant["api_key"], "agent.action", {"agent_id": agent["id"]})
    body = await response.get_json()
    assert response.status_code == 200, body
    assert body["status"] == "accepted" and body["event"] == "agent.action" and body["duplicate"] is False
    entry = await (
        await client.get(f"/api/v1/audit/{body['entry_id']}", headers=key_headers(tenant["api_key"]))
    ).get_json()
    assert entry["sequence"] == body["sequence"] == 1
    assert (entry["action"], entry["resource"], entry["is_approved"]) == ("webhook_action", "webhook", True)
    assert entry["agent_id"] == agent["id"] and entry["actor"].startswith("webhook/key:")
    assert entry["risk_score"] is None


async def test_action_with_every_field(client, tenant, agent) -> None:
    payload = {
        "agent_id": agent["id"],
        "action": "send_email",
        "resource": "mailto:ceo@example.com",
        "input": {"subject": "hi"},
        "output": {"sent": True},
        "reasoning": ["asked to", "allowed"],
        "risk_score": 0.7,
        "is_approved": False,
    }
    body = await (await deliver(client, tenant["api_key"], "agent.action", payload)).get_json()
    entry = await (
        await client.get(f"/api/v1/audit/{body['entry_id']}", headers=key_headers(tenant["api_key"]))
    ).get_json()
    assert {k: entry[k] for k in payload} == payload


async def test_uppercase_hex_signature_is_accepted(client, tenant, agent) -> None:
    raw = json.dumps({"event": "agent.action", "payload": {"agent_id": agent["id"]}}).encode()
    response = await client.post(
        WEBHOOK,
        data=raw,
        headers={
            "X-API-Key": tenant["api_key"],
            "Content-Type": "application/json",
            "X-Webhook-Signature": signature(raw).upper(),
        },
    )
    assert response.status_code == 200


async def _post(client, raw: bytes, headers: dict[str, str]) -> tuple[int, str]:
    response = await client.post(WEBHOOK, data=raw, headers={"Content-Type": "application/json", **headers})
    return response.status_code, (await response.get_json())["detail"]


async def test_signature_is_checked_before_anything_else(client, tenant, agent) -> None:
    raw = json.dumps({"event": "agent.action", "payload": {"agent_id": agent["id"]}}).encode()
    missing = (401, "Missing X-Webhook-Signature header")
    invalid = (401, "Invalid webhook signature")
    assert await _post(client, raw, {"X-API-Key": tenant["api_key"]}) == missing
    assert await _post(client, raw, {}) == missing
    assert await _post(client, raw, {"X-API-Key": "agk_garbage"}) == missing
    assert await _post(client, raw, {"X-API-Key": tenant["api_key"], "X-Webhook-Signature": "0" * 64}) == invalid
    assert await _post(client, raw, {"X-Webhook-Signature": ""}) == invalid
    assert await _post(client, raw, {"X-Webhook-Signature": "zz\u00e9"}) == invalid
    assert await _post(client, raw, {"X-Webhook-Signature": signature(raw, "another-secret-0123456789")}) == invalid
    tampered = raw.replace(b"agent.action", b"agent.heartbeat")
    assert await _post(client, tampered, {"X-API-Key": tenant["api_key"], "X-Webhook-Signature": signature(raw)}) == (
        invalid
    )
    assert await entries_of(client, tenant["api_key"]) == []


async def test_signed_request_still_needs_a_valid_api_key(client, tenant, agent) -> None:
    raw = json.dumps({"event": "agent.action", "payload": {"agent_id": agent["id"]}}).encode()
    status, detail = await _post(client, raw, {"X-Webhook-Signature": signature(raw)})
    assert (status, detail) == (401, "Missing credentials: send X-API-Key")
    status, detail = await _post(client, raw, {"X-Webhook-Signature": signature(raw), "X-API-Key": "agk_nope"})
    assert (status, detail) == (401, "Invalid API key")
    status, _ = await _post(client, raw, {"X-Webhook-Signature": signature(raw), "X-Admin-Key": ADMIN_KEY})
    assert status == 401


@pytest.mark.parametrize("event", ["agent.deleted", "AGENT.ACTION", "", "agent.action "])
async def test_unknown_event_type_is_400(client, tenant, agent, event) -> None:
    response = await deliver(client, tenant["api_key"], event, {"agent_id": agent["id"]})
    assert response.status_code == 400
    assert (await response.get_json())["detail"] == "Unknown event type"


@pytest.mark.parametrize("event", ["agent.action", "agent.heartbeat"])
async def test_unregistered_agent_is_404(client, tenant, event) -> None:
    response = await deliver(client, tenant["api_key"], event, {"agent_id": str(uuid.uuid4())})
    assert response.status_code == 404
    assert (await response.get_json())["detail"] == "Agent not found"


@pytest.mark.parametrize("event", ["agent.action", "agent.heartbeat"])
async def test_another_tenants_agent_is_404(client, tenant, other_tenant, agent, event) -> None:
    payload = {"agent_id": agent["id"], **({"status": "error"} if event == "agent.heartbeat" else {})}
    response = await deliver(client, other_tenant["api_key"], event, payload)
    assert response.status_code == 404
    assert (await response.get_json())["detail"] == "Agent not found"
    assert await entries_of(client, tenant["api_key"]) == []
    assert await entries_of(client, other_tenant["api_key"]) == []


@pytest.mark.parametrize(
    ("event", "payload", "field"),
    [
        ("agent.action", {}, "payload.agent_id"),
        ("agent.action", {"agent_id": "not-a-uuid"}, "payload.agent_id"),
        ("agent.action", {"agent_id": "AGENT", "risk_score": 2}, "payload.risk_score"),
        ("agent.action", {"agent_id": "AGENT", "risk_score": -1}, "payload.risk_score"),
        ("agent.action", {"agent_id": "AGENT", "is_approved": "no"}, "payload.is_approved"),
        ("agent.action", {"agent_id": "AGENT", "reasoning": "x"}, "payload.reasoning"),
        ("agent.action", {"agent_id": "AGENT", "input": [1]}, "payload.input"),
        ("agent.action", {"agent_id": "AGENT", "action": ""}, "payload.action"),
        ("agent.heartbeat", {"agent_id": "AGENT", "status": "sleeping"}, "payload.status"),
        ("agent.heartbeat", {"agent_id": "AGENT", "status": 3}, "payload.status"),
        ("agent.heartbeat", {"status": "active"}, "payload.agent_id"),
        ("agent.action", "not an object", "payload"),
        ("agent.action", None, "payload"),
    ],
)
async def test_invalid_payload_is_422_naming_the_field(client, tenant, agent, event, payload, field) -> None:
    if isinstance(payload, dict) and payload.get("agent_id") == "AGENT":
        payload = {**payload, "agent_id": agent["id"]}
    response = await deliver(client, tenant["api_key"], event, payload)
    detail = (await response.get_json())["detail"]
    assert response.status_code == 422, detail
    assert field in detail


async def test_envelope_problems(client, tenant) -> None:
    def signed(raw: bytes, content_type: str = "application/json") -> dict[str, str]:
        return {"X-API-Key": tenant["api_key"], "X-Webhook-Signature": signature(raw), "Content-Type": content_type}

    raw = b'{"event": "agent.action", "payload": {}}'
    response = await client.post(WEBHOOK, data=raw, headers=signed(raw, "text/plain"))
    assert response.status_code == 415
    response = await client.post(WEBHOOK, data=b"{nope", headers=signed(b"{nope"))
    assert response.status_code == 400 and "not valid JSON" in (await response.get_json())["detail"]
    response = await client.post(WEBHOOK, data=b"[]", headers=signed(b"[]"))
    assert response.status_code == 422
    raw = b'{"payload": {}}'
    response = await client.post(WEBHOOK, data=raw, headers=signed(raw))
    assert response.status_code == 422 and "event" in (await response.get_json())["detail"]
    assert (await client.get(WEBHOOK)).status_code == 405


async def test_heartbeat_sets_the_status(client, tenant, agent) -> None:
    for status in ("error", "inactive", "active"):
        response = await deliver(
            client, tenant["api_key"], "agent.heartbeat", {"agent_id": agent["id"], "status": status}
        )
        body = await response.get_json()
        assert response.status_code == 200, body
        assert body == {
            "status": "accepted",
            "event": "agent.heartbeat",
            "duplicate": False,
            "agent_id": agent["id"],
            "agent_status": status,
        }
        stored = await (
            await client.get(f"/api/v1/agents/{agent['id']}", headers=key_headers(tenant["api_key"]))
        ).get_json()
        assert stored["status"] == status and stored["last_heartbeat_at"]
    response = await deliver(client, tenant["api_key"], "agent.heartbeat", {"agent_id": agent["id"]})
    assert response.status_code == 200 and (await response.get_json())["agent_status"] == "active"


async def test_duplicate_delivery_stores_one_entry(client, tenant, agent) -> None:
    payload = {"agent_id": agent["id"], "action": "pay"}
    first = await (await deliver(client, tenant["api_key"], "agent.action", payload)).get_json()
    again = await (await deliver(client, tenant["api_key"], "agent.action", payload)).get_json()
    assert first["duplicate"] is False and again["duplicate"] is True
    assert again["entry_id"] == first["entry_id"] and again["sequence"] == first["sequence"]
    assert len(await entries_of(client, tenant["api_key"])) == 1


async def test_delivery_id_header_identifies_deliveries(client, tenant, agent) -> None:
    payload = {"agent_id": agent["id"], "action": "pay"}
    one = await (
        await deliver(client, tenant["api_key"], "agent.action", payload, extra={"X-Webhook-Id": "d-1"})
    ).get_json()
    two = await (
        await deliver(client, tenant["api_key"], "agent.action", payload, extra={"X-Webhook-Id": "d-2"})
    ).get_json()
    retry = await (
        await deliver(client, tenant["api_key"], "agent.action", payload, extra={"X-Delivery-Id": "d-1"})
    ).get_json()
    assert one["entry_id"] != two["entry_id"] and not one["duplicate"] and not two["duplicate"]
    assert retry["duplicate"] is True and retry["entry_id"] == one["entry_id"]
    assert len(await entries_of(client, tenant["api_key"])) == 2
    bad = await deliver(client, tenant["api_key"], "agent.action", payload, extra={"X-Webhook-Id": "a b"})
    assert bad.status_code == 422 and "X-Webhook-Id" in (await bad.get_json())["detail"]


async def test_same_delivery_in_two_tenants_is_two_entries(client, tenant, other_tenant, agent) -> None:
    theirs = await register_agent(client, other_tenant["api_key"], "theirs")
    extra = {"X-Webhook-Id": "shared-id"}
    ours = await (
        await deliver(client, tenant["api_key"], "agent.action", {"agent_id": agent["id"]}, extra=extra)
    ).get_json()
    other = await (
        await deliver(client, other_tenant["api_key"], "agent.action", {"agent_id": theirs["id"]}, extra=extra)
    ).get_json()
    assert ours["duplicate"] is False and other["duplicate"] is False and ours["entry_id"] != other["entry_id"]


async def test_duplicate_delivery_after_a_restart_stores_one_entry(database_url: str) -> None:
    settings = settings_for(database_url)
    async with app_for(settings) as first_app:
        client = first_app.test_client()
        response = await client.post("/api/v1/tenants", json={"name": "Acme"}, headers={"X-Admin-Key": ADMIN_KEY})
        api_key = (await response.get_json())["api_key"]
        agent = await register_agent(client, api_key)
        first = await (await deliver(client, api_key, "agent.action", {"agent_id": agent["id"]})).get_json()
        assert first["duplicate"] is False

    async with app_for(settings) as second_app:
        client = second_app.test_client()
        again = await (await deliver(client, api_key, "agent.action", {"agent_id": agent["id"]})).get_json()
        assert again == {**first, "duplicate": True}
        assert len(await entries_of(client, api_key)) == 1
        report = await (await client.get("/api/v1/audit/verify", headers=key_headers(api_key))).get_json()
        assert report["intact"] is True and report["checked"] == 1


@pytest.mark.parametrize("role", ["Developer", "Security Analyst", "Admin"])
async def test_every_tenant_role_may_deliver(client, role_keys, agent, role) -> None:
    response = await deliver(client, role_keys[role], "agent.action", {"agent_id": agent["id"], "action": role})
    assert response.status_code == 200
