"""HITL approvals through the HTTP API, on SQLite and PostgreSQL."""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

import pytest
import trio

from agentgov.security import api_keys
from agentgov.timeutil import parse_iso
from tests.hitl.conftest import key, next_event, register_agent, subscribe

BASE = "/api/v1/hitl"


def body(agent_id: str, **extra: Any) -> dict[str, Any]:
    return {"agent_id": agent_id, "action": "send_email", "resource": "mailbox:ceo", **extra}


async def create(client, api_key: str, payload: dict[str, Any], expected: int = 201) -> dict[str, Any]:
    response = await client.post(f"{BASE}/request", json=payload, headers=key(api_key))
    data = await response.get_json()
    assert response.status_code == expected, data
    return data


async def test_request_creates_a_pending_approval(client, tenant, agent_id) -> None:
    created = await create(
        client,
        tenant["api_key"],
        body(agent_id, context={"recipients": 40}, reason="bulk mail", risk_score=0.8, policy_ids=["p1"]),
    )
    assert uuid.UUID(created["id"])
    assert created["status"] == "pending" and created["approved"] is None
    assert created["agent_id"] == agent_id
    assert (created["action"], created["resource"]) == ("send_email", "mailbox:ceo")
    assert created["context"] == {"recipients": 40}
    assert created["reason"] == "bulk mail" and created["risk_score"] == 0.8 and created["policy_ids"] == ["p1"]
    assert created["requested_by"].startswith("key:")
    assert created["decided_at"] is None and created["decided_by"] is None and created["comment"] is None
    lifetime = parse_iso(created["expires_at"]) - parse_iso(created["created_at"])
    assert lifetime == timedelta(seconds=3600)
    status = await client.get(f"{BASE}/status/{created['id']}", headers=key(tenant["api_key"]))
    assert status.status_code == 200 and await status.get_json() == created


async def test_identical_pending_request_is_reused(client, tenant, agent_id) -> None:
    api_key = tenant["api_key"]
    first = await create(client, api_key, body(agent_id, context={"a": 1, "b": {"y": 2, "x": 1}}))
    # Same agent, action, resource and context (key order does not matter): the same request, 200.
    again = await create(client, api_key, body(agent_id, context={"b": {"x": 1, "y": 2}, "a": 1}), expected=200)
    assert again["id"] == first["id"] and again["status"] == "pending"
    # A different context, action or resource is a different request.
    other_context = await create(client, api_key, body(agent_id, context={"a": 2, "b": {"y": 2, "x": 1}}))
    other_action = await create(client, api_key, {**body(agent_id, context={"a": 1}), "action": "delete"})
    assert len({first["id"], other_context["id"], other_action["id"]}) == 3
    pending = await (await client.get(f"{BASE}/pending", headers=key(api_key))).get_json()
    assert pending["total"] == 3
    # Once decided, an identical request is new again.
    await client.post(f"{BASE}/reject/{first['id']}", headers=key(api_key))
    fresh = await create(client, api_key, body(agent_id, context={"a": 1, "b": {"y": 2, "x": 1}}))
    assert fresh["id"] != first["id"]


async def test_approve_records_reviewer_and_comment(client, tenant, role_keys, agent_id) -> None:
    created = await create(client, role_keys["Developer"], body(agent_id))
    response = await client.post(
        f"{BASE}/approve/{created['id']}",
        json={"comment": "looks fine"},
        headers=key(role_keys["Security Analyst"]),
    )
    decided = await response.get_json()
    assert response.status_code == 200, decided
    assert decided["status"] == "approved" and decided["approved"] is True
    assert decided["comment"] == "looks fine"
    analyst_key_id = api_keys.split(role_keys["Security Analyst"])[0]
    assert decided["decided_by"] == f"key:{analyst_key_id}"
    assert decided["decided_by"] != created["requested_by"]
    assert decided["decided_at"] >= created["created_at"]
    stored = await (await client.get(f"{BASE}/status/{created['id']}", headers=key(tenant["api_key"]))).get_json()
    assert stored == decided


@pytest.mark.parametrize("payload", [None, b"", {}, {"comment": None}])
async def test_reject_takes_an_optional_body(client, tenant, agent_id, payload) -> None:
    created = await create(client, tenant["api_key"], body(agent_id))
    headers = key(tenant["api_key"])
    if isinstance(payload, dict):
        response = await client.post(f"{BASE}/reject/{created['id']}", json=payload, headers=headers)
    else:
        response = await client.post(f"{BASE}/reject/{created['id']}", data=payload, headers=headers)
    decided = await response.get_json()
    assert response.status_code == 200, decided
    assert decided["status"] == "rejected" and decided["approved"] is False and decided["comment"] is None


@pytest.mark.parametrize(
    ("first", "second", "status"),
    [("approve", "approve", "approved"), ("approve", "reject", "approved"), ("reject", "approve", "rejected")],
)
async def test_deciding_twice_is_409(client, tenant, agent_id, first: str, second: str, status: str) -> None:
    created = await create(client, tenant["api_key"], body(agent_id))
    headers = key(tenant["api_key"])
    assert (await client.post(f"{BASE}/{first}/{created['id']}", headers=headers)).status_code == 200
    response = await client.post(f"{BASE}/{second}/{created['id']}", json={"comment": "late"}, headers=headers)
    data = await response.get_json()
    assert response.status_code == 409
    assert data["detail"] == f"Conflict: approval request {created['id']} was already {status}"
    assert data["current_status"] == status
    stored = await (await client.get(f"{BASE}/status/{created['id']}", headers=headers)).get_json()
    assert stored["status"] == status and stored["comment"] is None


async def test_concurrent_decisions_have_one_winner(client, tenant, agent_id) -> None:
    created = await create(client, tenant["api_key"], body(agent_id))
    codes: list[int] = []

    async def decide(verb: str) -> None:
        response = await client.post(f"{BASE}/{verb}/{created['id']}", headers=key(tenant["api_key"]))
        codes.append(response.status_code)

    async with trio.open_nursery() as nursery:
        for verb in ("approve", "reject", "approve", "reject"):
            nursery.start_soon(decide, verb)
    assert sorted(codes) == [200, 409, 409, 409]


async def test_pending_list_is_paginated_and_filtered(client, tenant, agent_id) -> None:
    api_key = tenant["api_key"]
    second_agent = await register_agent(client, api_key, "report writer")
    ids = [(await create(client, api_key, body(agent_id, context={"n": n})))["id"] for n in range(3)]
    ids.append((await create(client, api_key, body(second_agent)))["id"])
    listing = await (await client.get(f"{BASE}/pending?limit=2", headers=key(api_key))).get_json()
    assert listing["total"] == 4 and listing["limit"] == 2 and listing["offset"] == 0
    assert [item["id"] for item in listing["items"]] == ids[:2]
    rest = await (await client.get(f"{BASE}/pending?limit=2&offset=2", headers=key(api_key))).get_json()
    assert [item["id"] for item in rest["items"]] == ids[2:]
    only = await (await client.get(f"{BASE}/pending?agent_id={second_agent}", headers=key(api_key))).get_json()
    assert only["total"] == 1 and only["items"][0]["id"] == ids[3]
    await client.post(f"{BASE}/approve/{ids[0]}", headers=key(api_key))
    after = await (await client.get(f"{BASE}/pending", headers=key(api_key))).get_json()
    assert after["total"] == 3 and ids[0] not in [item["id"] for item in after["items"]]
    assert after["limit"] == 50


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ("limit=201", "limit"),
        ("limit=0", "limit"),
        ("offset=-1", "offset"),
        ("limit=x", "limit"),
        ("agent_id=nope", "agent_id"),
    ],
)
async def test_bad_pending_query_is_422(client, tenant, params: str, field: str) -> None:
    response = await client.get(f"{BASE}/pending?{params}", headers=key(tenant["api_key"]))
    data = await response.get_json()
    assert response.status_code == 422
    assert [e["field"] for e in data["errors"]] == [field]


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"agent_id": None}, "agent_id"),
        ({"agent_id": "not-a-uuid"}, "agent_id"),
        ({"action": "   "}, "action"),
        ({"action": "x" * 201}, "action"),
        ({"resource": ""}, "resource"),
        ({"context": ["not", "an", "object"]}, "context"),
        ({"risk_score": 1.5}, "risk_score"),
        ({"risk_score": -0.1}, "risk_score"),
        ({"risk_score": "high"}, "risk_score"),
        ({"reason": "x" * 2001}, "reason"),
        ({"policy_ids": "p1"}, "policy_ids"),
    ],
)
async def test_bad_request_body_is_422_naming_the_field(client, tenant, agent_id, change, field: str) -> None:
    payload = {k: v for k, v in {**body(agent_id), **change}.items() if v is not None}
    response = await client.post(f"{BASE}/request", json=payload, headers=key(tenant["api_key"]))
    data = await response.get_json()
    assert response.status_code == 422, data
    assert field in data["detail"]
    assert data["errors"][0]["field"].split(".")[0] == field


async def test_non_json_and_malformed_bodies(client, tenant, agent_id) -> None:
    headers = key(tenant["api_key"])
    response = await client.post(f"{BASE}/request", data="agent_id=1", headers=headers)
    assert response.status_code == 415
    response = await client.post(
        f"{BASE}/request", data="{not json", headers={**headers, "Content-Type": "application/json"}
    )
    assert response.status_code == 400 and "not valid JSON" in (await response.get_json())["detail"]
    created = await create(client, tenant["api_key"], body(agent_id))
    response = await client.post(f"{BASE}/approve/{created['id']}", data="ok", headers=headers)
    assert response.status_code == 415
    response = await client.post(f"{BASE}/approve/{created['id']}", json={"comment": 5}, headers=headers)
    assert response.status_code == 422 and (await response.get_json())["errors"][0]["field"] == "comment"
    response = await client.post(f"{BASE}/approve/{created['id']}", json={"comment": "x" * 2001}, headers=headers)
    assert response.status_code == 422
    response = await client.post(f"{BASE}/approve/{created['id']}", json=["x"], headers=headers)
    assert response.status_code == 422
    # None of these decided it.
    status = await (await client.get(f"{BASE}/status/{created['id']}", headers=headers)).get_json()
    assert status["status"] == "pending"


async def test_unknown_agent_is_404(client, tenant) -> None:
    response = await client.post(f"{BASE}/request", json=body(str(uuid.uuid4())), headers=key(tenant["api_key"]))
    assert response.status_code == 404
    assert (await response.get_json())["detail"] == "Agent not found"


async def test_other_tenants_agent_is_404(client, tenant, other_agent_id) -> None:
    response = await client.post(f"{BASE}/request", json=body(other_agent_id), headers=key(tenant["api_key"]))
    assert response.status_code == 404
    assert (await response.get_json())["detail"] == "Agent not found"


@pytest.mark.parametrize(
    ("method", "path"),
    [("post", "approve"), ("post", "reject"), ("get", "status")],
)
async def test_malformed_and_unknown_ids(client, tenant, method: str, path: str) -> None:
    headers = key(tenant["api_key"])
    response = await getattr(client, method)(f"{BASE}/{path}/12345", headers=headers)
    data = await response.get_json()
    assert response.status_code == 422
    assert data["errors"] == [{"field": "approval_id", "message": "not a valid UUID", "type": "uuid_parsing"}]
    response = await getattr(client, method)(f"{BASE}/{path}/{uuid.uuid4()}", headers=headers)
    assert response.status_code == 404
    assert (await response.get_json())["detail"] == "Approval request not found"


async def test_other_tenant_cannot_see_or_decide(client, tenant, other_tenant, agent_id) -> None:
    created = await create(client, tenant["api_key"], body(agent_id))
    intruder = key(other_tenant["api_key"])
    for method, path in (("get", "status"), ("post", "approve"), ("post", "reject")):
        response = await getattr(client, method)(f"{BASE}/{path}/{created['id']}", headers=intruder)
        assert response.status_code == 404, (path, await response.get_json())
        assert (await response.get_json())["detail"] == "Approval request not found"
    listing = await (await client.get(f"{BASE}/pending", headers=intruder)).get_json()
    assert listing == {"items": [], "total": 0, "limit": 50, "offset": 0}
    status = await (await client.get(f"{BASE}/status/{created['id']}", headers=key(tenant["api_key"]))).get_json()
    assert status["status"] == "pending"


# (endpoint, minimum role) for every HITL route; lower roles get 403.
ROLE_ORDER = ["Developer", "Security Analyst", "Admin"]
ROUTES = [
    ("request", "Developer"),
    ("approve", "Security Analyst"),
    ("reject", "Security Analyst"),
    ("status", "Developer"),
    ("pending", "Developer"),
]


@pytest.mark.parametrize("role", ROLE_ORDER)
@pytest.mark.parametrize(("route", "minimum"), ROUTES)
async def test_permissions_per_role(client, tenant, role_keys, agent_id, role: str, route: str, minimum: str) -> None:
    created = await create(client, tenant["api_key"], body(agent_id))
    headers = key(role_keys[role])
    if route == "request":
        response = await client.post(f"{BASE}/request", json=body(agent_id, context={"r": role}), headers=headers)
    elif route in ("approve", "reject"):
        response = await client.post(f"{BASE}/{route}/{created['id']}", headers=headers)
    elif route == "status":
        response = await client.get(f"{BASE}/status/{created['id']}", headers=headers)
    else:
        response = await client.get(f"{BASE}/pending", headers=headers)
    allowed = ROLE_ORDER.index(role) >= ROLE_ORDER.index(minimum)
    data = await response.get_json()
    if allowed:
        assert response.status_code in (200, 201), data
    else:
        assert response.status_code == 403
        assert data["detail"] == f"Forbidden: hitl:decide requires a role of at least {minimum} (you are {role})"
        status = await (await client.get(f"{BASE}/status/{created['id']}", headers=key(tenant["api_key"]))).get_json()
        assert status["status"] == "pending"


@pytest.mark.parametrize("headers", [{}, {"X-API-Key": "agk_nope_nope"}, {"Authorization": "Bearer x"}])
async def test_credentials_are_required(client, headers: dict[str, str]) -> None:
    for method, path in (
        ("post", "request"),
        ("post", f"approve/{uuid.uuid4()}"),
        ("post", f"reject/{uuid.uuid4()}"),
        ("get", f"status/{uuid.uuid4()}"),
        ("get", "pending"),
    ):
        response = await getattr(client, method)(f"{BASE}/{path}", headers=headers)
        assert response.status_code == 401, path
        assert (await response.get_json())["detail"]


async def test_request_and_decision_publish_events(app, client, tenant, other_tenant, agent_id) -> None:
    mine = await subscribe(app, tenant["id"])
    theirs = await subscribe(app, other_tenant["id"])
    created = await create(client, tenant["api_key"], body(agent_id))
    with trio.fail_after(10):
        requested = await next_event(mine)
    assert requested["event"] == "hitl.requested" and requested["tenant_id"] == tenant["id"]
    assert requested["data"] == created
    # The reuse of a pending request is not a new request: no event.
    await create(client, tenant["api_key"], body(agent_id), expected=200)
    decided = await (
        await client.post(f"{BASE}/approve/{created['id']}", json={"comment": "ok"}, headers=key(tenant["api_key"]))
    ).get_json()
    with trio.fail_after(10):
        resolved = await next_event(mine)
    assert resolved["event"] == "hitl.resolved" and resolved["data"] == decided
    # The other tenant saw nothing but its status.
    with pytest.raises(trio.WouldBlock):
        while True:
            envelope = theirs.receive.receive_nowait()
            assert '"system.status"' in envelope
