"""POST /audit/log, GET /audit, GET /audit/{log_id}, GET /audit/verify over HTTP, on SQLite and PostgreSQL."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
import trio

from tests.audit.conftest import LOG, key_headers, log_entry, register_agent

ROLES = ("Developer", "Security Analyst", "Admin")


async def test_log_entry_returns_the_stored_signed_entry(client, tenant, agent) -> None:
    body = {
        "agent_id": agent["id"],
        "action": "refund",
        "resource": "payments://order/42",
        "input": {"amount": 12.5, "currency": "EUR"},
        "output": {"ok": True},
        "reasoning": ["customer asked", "within policy"],
        "risk_score": 0.4,
        "is_approved": False,
    }
    response = await client.post(LOG, json=body, headers=key_headers(tenant["api_key"]))
    entry = await response.get_json()
    assert response.status_code == 201, entry
    assert {k: entry[k] for k in body} == body
    assert entry["sequence"] == 1 and entry["kind"] == "action"
    assert entry["prev_signature"] == "0" * 64 and len(entry["signature"]) == 64
    assert entry["actor"].startswith("key:") and entry["created_at"].endswith("Z")
    uuid.UUID(entry["id"])

    fetched = await client.get(f"/api/v1/audit/{entry['id']}", headers=key_headers(tenant["api_key"]))
    assert fetched.status_code == 200 and await fetched.get_json() == entry


async def test_optional_fields_default_to_null(client, tenant, agent) -> None:
    entry = await log_entry(client, tenant["api_key"], agent["id"])
    assert entry["risk_score"] is None and entry["is_approved"] is None
    assert entry["input"] is None and entry["output"] is None and entry["reasoning"] is None


async def test_list_is_newest_first_filtered_and_paginated(client, tenant, agent) -> None:
    key = tenant["api_key"]
    other = await register_agent(client, key, "second-bot")
    for i in range(5):
        await log_entry(client, key, agent["id"], action="read" if i % 2 else "write")
    await log_entry(client, key, other["id"], action="read")

    response = await client.get("/api/v1/audit", headers=key_headers(key))
    body = await response.get_json()
    assert response.status_code == 200
    assert body["total"] == 6 and body["limit"] == 50 and body["offset"] == 0
    assert [e["sequence"] for e in body["items"]] == [6, 5, 4, 3, 2, 1]

    page = await (await client.get("/api/v1/audit?skip=1&limit=2", headers=key_headers(key))).get_json()
    assert [e["sequence"] for e in page["items"]] == [5, 4] and page["offset"] == 1 and page["total"] == 6

    by_agent = await (
        await client.get(f"/api/v1/audit?agent_id={agent['id']}&action=read", headers=key_headers(key))
    ).get_json()
    assert by_agent["total"] == 2
    assert all(e["agent_id"] == agent["id"] and e["action"] == "read" for e in by_agent["items"])


async def test_two_hundred_concurrent_writers_make_one_contiguous_verified_chain(client, tenant, agent) -> None:
    key = tenant["api_key"]
    statuses: list[int] = []
    sequences: list[int] = []

    async def write(i: int) -> None:
        response = await client.post(
            LOG, json={"agent_id": agent["id"], "action": f"a{i}", "resource": "r"}, headers=key_headers(key)
        )
        statuses.append(response.status_code)
        sequences.append((await response.get_json())["sequence"])

    async with trio.open_nursery() as nursery:
        for i in range(200):
            nursery.start_soon(write, i)
    assert statuses == [201] * 200
    assert sorted(sequences) == list(range(1, 201))
    report = await (await client.get("/api/v1/audit/verify", headers=key_headers(key))).get_json()
    assert report["intact"] is True and report["checked"] == 200
    assert report["head"]["sequence"] == 200 and report["findings"] == []


async def test_idempotency_key_stores_one_entry(client, tenant, agent) -> None:
    headers = {**key_headers(tenant["api_key"]), "Idempotency-Key": "retry-7"}
    body = {"agent_id": agent["id"], "action": "pay", "resource": "r"}
    first = await client.post(LOG, json=body, headers=headers)
    again = await client.post(LOG, json=body, headers=headers)
    assert first.status_code == again.status_code == 201
    assert (await first.get_json())["id"] == (await again.get_json())["id"]
    assert "Idempotent-Replayed" not in first.headers and again.headers["Idempotent-Replayed"] == "true"
    listing = await (await client.get("/api/v1/audit", headers=key_headers(tenant["api_key"]))).get_json()
    assert listing["total"] == 1
    bad = await client.post(LOG, json=body, headers={**headers, "Idempotency-Key": "has space"})
    assert bad.status_code == 422 and "Idempotency-Key" in (await bad.get_json())["detail"]


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"risk_score": 1.01}, "risk_score"),
        ({"risk_score": -0.1}, "risk_score"),
        ({"risk_score": "high"}, "risk_score"),
        ({"is_approved": "yes"}, "is_approved"),
        ({"reasoning": "one step"}, "reasoning"),
        ({"reasoning": [1, 2]}, "reasoning"),
        ({"input": ["not", "an", "object"]}, "input"),
        ({"output": "text"}, "output"),
        ({"action": ""}, "action"),
        ({"action": "   "}, "action"),
        ({"resource": None}, "resource"),
        ({"agent_id": "not-a-uuid"}, "agent_id"),
        ({"agent_id": None}, "agent_id"),
    ],
)
async def test_invalid_entry_is_422_naming_the_field(client, tenant, agent, change, field) -> None:
    body = {"agent_id": agent["id"], "action": "read", "resource": "r", **change}
    response = await client.post(LOG, json=body, headers=key_headers(tenant["api_key"]))
    detail = (await response.get_json())["detail"]
    assert response.status_code == 422, detail
    assert field in detail


@pytest.mark.parametrize("missing", ["agent_id", "action", "resource"])
async def test_missing_required_field_is_422(client, tenant, agent, missing) -> None:
    body = {"agent_id": agent["id"], "action": "read", "resource": "r"}
    del body[missing]
    response = await client.post(LOG, json=body, headers=key_headers(tenant["api_key"]))
    assert response.status_code == 422 and missing in (await response.get_json())["detail"]


@pytest.mark.parametrize("literal", ["NaN", "Infinity"])
async def test_non_finite_numbers_are_422_not_500(client, tenant, agent, literal) -> None:
    for body in (
        f'{{"agent_id": "{agent["id"]}", "action": "a", "resource": "r", "risk_score": {literal}}}',
        f'{{"agent_id": "{agent["id"]}", "action": "a", "resource": "r", "input": {{"x": {literal}}}}}',
    ):
        response = await client.post(
            LOG, data=body, headers={**key_headers(tenant["api_key"]), "Content-Type": "application/json"}
        )
        assert response.status_code == 422, await response.get_data(as_text=True)


async def test_non_json_and_malformed_bodies(client, tenant) -> None:
    headers = key_headers(tenant["api_key"])
    response = await client.post(LOG, data="x", headers={**headers, "Content-Type": "text/plain"})
    assert response.status_code == 415
    response = await client.post(LOG, data="{", headers={**headers, "Content-Type": "application/json"})
    assert response.status_code == 400
    response = await client.post(LOG, json=[1], headers=headers)
    assert response.status_code == 422


async def test_unknown_agent_is_404(client, tenant) -> None:
    body = {"agent_id": str(uuid.uuid4()), "action": "read", "resource": "r"}
    response = await client.post(LOG, json=body, headers=key_headers(tenant["api_key"]))
    assert response.status_code == 404
    assert (await response.get_json())["detail"] == "Agent not found"


@pytest.mark.parametrize(
    ("path", "field"),
    [
        ("/api/v1/audit/not-a-uuid", "log_id"),
        ("/api/v1/audit/1234", "log_id"),
        ("/api/v1/audit?agent_id=nope", "agent_id"),
        ("/api/v1/audit?limit=201", "limit"),
        ("/api/v1/audit?limit=0", "limit"),
        ("/api/v1/audit?skip=-1", "skip"),
        ("/api/v1/audit?action=", "action"),
    ],
)
async def test_malformed_ids_and_queries_are_422(client, tenant, path, field) -> None:
    response = await client.get(path, headers=key_headers(tenant["api_key"]))
    assert response.status_code == 422
    assert field in (await response.get_json())["detail"]


async def test_unknown_entry_is_404(client, tenant) -> None:
    response = await client.get(f"/api/v1/audit/{uuid.uuid4()}", headers=key_headers(tenant["api_key"]))
    assert response.status_code == 404
    assert (await response.get_json())["detail"] == "Audit entry not found"


async def test_other_tenant_sees_nothing_and_cannot_use_our_agents(client, tenant, other_tenant, agent) -> None:
    ours = await log_entry(client, tenant["api_key"], agent["id"])
    theirs = key_headers(other_tenant["api_key"])

    response = await client.get(f"/api/v1/audit/{ours['id']}", headers=theirs)
    assert response.status_code == 404 and (await response.get_json())["detail"] == "Audit entry not found"
    listing = await (await client.get("/api/v1/audit", headers=theirs)).get_json()
    assert listing["total"] == 0 and listing["items"] == []
    filtered = await (await client.get(f"/api/v1/audit?agent_id={agent['id']}", headers=theirs)).get_json()
    assert filtered["total"] == 0

    body = {"agent_id": agent["id"], "action": "read", "resource": "r"}
    response = await client.post(LOG, json=body, headers=theirs)
    assert response.status_code == 404 and (await response.get_json())["detail"] == "Agent not found"

    report = await (await client.get("/api/v1/audit/verify", headers=theirs)).get_json()
    assert report["intact"] is True and report["checked"] == 0 and report["tenant_id"] == other_tenant["id"]


async def test_chains_are_per_tenant(client, tenant, other_tenant, agent) -> None:
    their_agent = await register_agent(client, other_tenant["api_key"], "their-bot")
    for _ in range(3):
        await log_entry(client, tenant["api_key"], agent["id"])
    entry = await log_entry(client, other_tenant["api_key"], their_agent["id"])
    assert entry["sequence"] == 1 and entry["prev_signature"] == "0" * 64


@pytest.mark.parametrize("role", ROLES)
async def test_every_role_may_write_and_read(client, role_keys, agent, role) -> None:
    key = role_keys[role]
    entry = await log_entry(client, key, agent["id"])
    assert (await client.get(f"/api/v1/audit/{entry['id']}", headers=key_headers(key))).status_code == 200
    assert (await client.get("/api/v1/audit", headers=key_headers(key))).status_code == 200


@pytest.mark.parametrize(("role", "status"), [("Developer", 403), ("Security Analyst", 200), ("Admin", 200)])
async def test_verify_needs_security_analyst(client, role_keys, role, status) -> None:
    response = await client.get("/api/v1/audit/verify", headers=key_headers(role_keys[role]))
    body = await response.get_json()
    assert response.status_code == status, body
    if status == 403:
        assert "audit:verify" in body["detail"] and "Security Analyst" in body["detail"]


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("POST", LOG, {"agent_id": str(uuid.uuid4()), "action": "a", "resource": "r"}),
        ("GET", "/api/v1/audit", None),
        ("GET", "/api/v1/audit/00000000-0000-4000-8000-000000000001", None),
        ("GET", "/api/v1/audit/verify", None),
    ],
)
@pytest.mark.parametrize("key", [None, "agk_wrong"])
async def test_credentials_are_required(client, tenant, method, path, body: Any, key) -> None:
    headers = {} if key is None else {"X-API-Key": key}
    response = await client.open(path, method=method, json=body, headers=headers)
    assert response.status_code == 401
    assert json.loads(await response.get_data(as_text=True))["detail"]


async def test_openapi_documents_the_audit_and_webhook_routes(client) -> None:
    spec = await (await client.get("/openapi.json")).get_json()
    paths = spec["paths"]
    assert {"/api/v1/audit/log", "/api/v1/audit", "/api/v1/audit/verify", "/api/v1/audit/{log_id}"} <= set(paths)
    webhook = paths["/webhooks/agent"]["post"]
    assert any(p["name"] == "X-Webhook-Signature" for p in webhook["parameters"])
    assert "201" in paths["/api/v1/audit/log"]["post"]["responses"]
