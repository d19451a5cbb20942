"""The agents API through Quart's test client against real storage (SQLite and PostgreSQL)."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from tests.support.app import ADMIN_KEY

BASE = "/api/v1/agents"
ROLES = ("Developer", "Security Analyst", "Admin")


def key(api_key: str) -> dict[str, str]:
    return {"X-API-Key": api_key}


async def register(client, api_key: str, **fields: Any) -> dict[str, Any]:
    body = {"name": "Mail Dispatcher Bot", "type": "tool", **fields}
    response = await client.post(f"{BASE}/register", json=body, headers=key(api_key))
    assert response.status_code == 201, await response.get_data(as_text=True)
    return await response.get_json()


async def test_register_get_list_update_delete(client, tenant) -> None:
    created = await register(
        client,
        tenant["api_key"],
        name="Mail Dispatcher Bot",
        description="Sends outbound email campaigns through SMTP",
        capabilities=["smtp.send", "bounce.handle"],
        owner="growth-team",
        metadata={"env": "prod"},
    )
    assert uuid.UUID(created["id"])
    assert created["status"] == "active"
    assert created["type"] == "tool"
    assert created["capabilities"] == ["smtp.send", "bounce.handle"]
    assert created["metadata"] == {"env": "prod"} and created["owner"] == "growth-team"
    assert created["predicted_type"] in {"llm", "tool", "workflow", "custom"}
    assert 0.25 <= created["predicted_type_confidence"] <= 1.0
    assert created["risk_score"] is None and created["last_heartbeat_at"] is None

    got = await client.get(f"{BASE}/{created['id']}", headers=key(tenant["api_key"]))
    assert got.status_code == 200 and await got.get_json() == created

    listed = await (await client.get(BASE, headers=key(tenant["api_key"]))).get_json()
    assert listed["total"] == 1 and listed["limit"] == 50 and listed["offset"] == 0
    assert listed["items"][0]["id"] == created["id"]
    assert "predicted_type" in listed["items"][0] and "risk_score" in listed["items"][0]

    put = await client.put(
        f"{BASE}/{created['id']}",
        json={"description": "Summarises legal contracts with an LLM", "type": "llm", "owner": None},
        headers=key(tenant["api_key"]),
    )
    updated = await put.get_json()
    assert put.status_code == 200
    assert updated["type"] == "llm" and updated["owner"] is None
    assert updated["name"] == "Mail Dispatcher Bot" and updated["capabilities"] == created["capabilities"]
    assert updated["updated_at"] > created["updated_at"]

    deleted = await client.delete(f"{BASE}/{created['id']}", headers=key(tenant["api_key"]))
    assert deleted.status_code == 204
    gone = await client.get(f"{BASE}/{created['id']}", headers=key(tenant["api_key"]))
    assert gone.status_code == 404 and (await gone.get_json())["detail"] == "Agent not found"
    again = await client.delete(f"{BASE}/{created['id']}", headers=key(tenant["api_key"]))
    assert again.status_code == 404


async def test_list_filters_and_pagination(client, tenant) -> None:
    api_key = tenant["api_key"]
    ids = []
    for i, agent_type in enumerate(["llm", "tool", "llm", "workflow", "llm"]):
        ids.append((await register(client, api_key, name=f"agent {i}", type=agent_type))["id"])
    await client.post(f"{BASE}/{ids[2]}/heartbeat", json={"status": "error"}, headers=key(api_key))

    llm = await (await client.get(f"{BASE}?type=llm", headers=key(api_key))).get_json()
    assert [a["id"] for a in llm["items"]] == [ids[0], ids[2], ids[4]] and llm["total"] == 3
    broken = await (await client.get(f"{BASE}?status=error", headers=key(api_key))).get_json()
    assert [a["id"] for a in broken["items"]] == [ids[2]]
    both = await (await client.get(f"{BASE}?type=llm&status=active", headers=key(api_key))).get_json()
    assert [a["id"] for a in both["items"]] == [ids[0], ids[4]]
    window = await (await client.get(f"{BASE}?limit=2&offset=1", headers=key(api_key))).get_json()
    assert [a["id"] for a in window["items"]] == ids[1:3]
    assert (window["total"], window["limit"], window["offset"]) == (5, 2, 1)
    beyond = await (await client.get(f"{BASE}?offset=10", headers=key(api_key))).get_json()
    assert beyond["items"] == [] and beyond["total"] == 5


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ("limit=201", "limit"),
        ("limit=0", "limit"),
        ("limit=ten", "limit"),
        ("offset=-1", "offset"),
        ("type=robot", "type"),
        ("status=sleeping", "status"),
    ],
)
async def test_list_rejects_bad_query(client, tenant, params: str, field: str) -> None:
    response = await client.get(f"{BASE}?{params}", headers=key(tenant["api_key"]))
    body = await response.get_json()
    assert response.status_code == 422
    assert [e["field"] for e in body["errors"]] == [field]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"type": "tool"}, "name"),
        ({"name": "  ", "type": "tool"}, "name"),
        ({"name": "\u007f\u008a", "type": "tool"}, "name"),  # control characters only: nothing visible
        ({"name": "\u200b\u2060 ", "type": "tool"}, "name"),  # zero-width characters only
        ({"name": "x" * 201, "type": "tool"}, "name"),
        ({"name": "A"}, "type"),
        ({"name": "A", "type": "robot"}, "type"),
        ({"name": "A", "type": "tool", "capabilities": "send"}, "capabilities"),
        ({"name": "A", "type": "tool", "capabilities": [1]}, "capabilities.0"),
        ({"name": "A", "type": "tool", "capabilities": [""]}, "capabilities.0"),
        ({"name": "A", "type": "tool", "capabilities": ["c"] * 101}, "capabilities"),
        ({"name": "A", "type": "tool", "metadata": []}, "metadata"),
        ({"name": "A", "type": "tool", "metadata": {"k": "v" * 17000}}, "metadata"),
        ({"name": "A", "type": "tool", "description": 3}, "description"),
        ({"name": "A", "type": "tool", "owner": ["x"]}, "owner"),
    ],
)
async def test_register_rejects_bad_bodies(client, tenant, body: dict[str, Any], field: str) -> None:
    response = await client.post(f"{BASE}/register", json=body, headers=key(tenant["api_key"]))
    answer = await response.get_json()
    assert response.status_code == 422, answer
    assert field in [e["field"] for e in answer["errors"]]
    assert answer["detail"].startswith("Invalid request body")


async def test_register_rejects_non_json(client, tenant) -> None:
    wrong_type = await client.post(
        f"{BASE}/register", data="name=x", headers={**key(tenant["api_key"]), "Content-Type": "text/plain"}
    )
    assert wrong_type.status_code == 415
    malformed = await client.post(
        f"{BASE}/register", data="{", headers={**key(tenant["api_key"]), "Content-Type": "application/json"}
    )
    assert malformed.status_code == 400 and "detail" in await malformed.get_json()
    not_object = await client.post(f"{BASE}/register", json=["x"], headers=key(tenant["api_key"]))
    assert not_object.status_code == 422


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ({}, "at least one field"),
        ({"name": None}, "name may not be null"),
        ({"type": None}, "type may not be null"),
        ({"status": "sleeping"}, "status"),
        ({"type": "robot"}, "type"),
        ({"capabilities": None}, "capabilities may not be null"),
    ],
)
async def test_update_rejects_bad_bodies(client, tenant, body: dict[str, Any], needle: str) -> None:
    agent = await register(client, tenant["api_key"])
    response = await client.put(f"{BASE}/{agent['id']}", json=body, headers=key(tenant["api_key"]))
    assert response.status_code == 422
    assert needle in (await response.get_json())["detail"]


async def test_heartbeat_sets_status_and_time(client, tenant) -> None:
    agent = await register(client, tenant["api_key"])
    plain = await client.post(f"{BASE}/{agent['id']}/heartbeat", headers=key(tenant["api_key"]))
    beat = await plain.get_json()
    assert plain.status_code == 200 and beat["status"] == "active" and beat["last_heartbeat_at"]
    assert beat["updated_at"] == agent["updated_at"]
    for status in ("inactive", "error", "active"):
        response = await client.post(
            f"{BASE}/{agent['id']}/heartbeat", json={"status": status}, headers=key(tenant["api_key"])
        )
        body = await response.get_json()
        assert response.status_code == 200 and body["status"] == status
        assert body["last_heartbeat_at"] >= beat["last_heartbeat_at"]
    stored = await (await client.get(f"{BASE}/{agent['id']}", headers=key(tenant["api_key"]))).get_json()
    assert stored["status"] == "active"


@pytest.mark.parametrize("body", [{"status": "sleeping"}, {"status": 1}])
async def test_heartbeat_rejects_bad_status(client, tenant, body: dict[str, Any]) -> None:
    agent = await register(client, tenant["api_key"])
    response = await client.post(f"{BASE}/{agent['id']}/heartbeat", json=body, headers=key(tenant["api_key"]))
    answer = await response.get_json()
    assert response.status_code == 422 and answer["errors"][0]["field"] == "status"
    stored = await (await client.get(f"{BASE}/{agent['id']}", headers=key(tenant["api_key"]))).get_json()
    assert stored["status"] == "active" and stored["last_heartbeat_at"] is None


async def test_heartbeat_rejects_non_json_body(client, tenant) -> None:
    agent = await register(client, tenant["api_key"])
    response = await client.post(
        f"{BASE}/{agent['id']}/heartbeat",
        data="status=error",
        headers={**key(tenant["api_key"]), "Content-Type": "text/plain"},
    )
    assert response.status_code == 415


@pytest.mark.parametrize(
    ("method", "suffix", "body"),
    [
        ("get", "", None),
        ("get", "/details", None),
        ("put", "", {"name": "x"}),
        ("delete", "", None),
        ("post", "/heartbeat", {"status": "error"}),
    ],
)
async def test_malformed_id_is_422_and_unknown_or_foreign_id_is_404(
    client, tenant, other_tenant, method: str, suffix: str, body: dict[str, Any] | None
) -> None:
    foreign = await register(client, other_tenant["api_key"], name="Theirs")
    send = getattr(client, method)
    kwargs: dict[str, Any] = {"headers": key(tenant["api_key"])}
    if body is not None:
        kwargs["json"] = body

    malformed = await send(f"{BASE}/not-a-uuid{suffix}", **kwargs)
    answer = await malformed.get_json()
    assert malformed.status_code == 422 and answer["errors"][0]["field"] == "agent_id"

    for agent_id in (str(uuid.uuid4()), foreign["id"]):
        response = await send(f"{BASE}/{agent_id}{suffix}", **kwargs)
        assert response.status_code == 404
        assert (await response.get_json())["detail"] == "Agent not found"

    # the other tenant's agent is untouched and still theirs
    theirs = await client.get(f"{BASE}/{foreign['id']}", headers=key(other_tenant["api_key"]))
    assert theirs.status_code == 200 and await theirs.get_json() == foreign


async def test_lists_and_search_never_show_another_tenants_agents(client, tenant, other_tenant) -> None:
    await register(client, other_tenant["api_key"], name="Mail Dispatcher Bot", description="Sends email")
    listed = await (await client.get(BASE, headers=key(tenant["api_key"]))).get_json()
    assert listed["items"] == [] and listed["total"] == 0
    search = await client.get(f"{BASE}/search?q=sends+email", headers=key(tenant["api_key"]))
    assert (await search.get_json())["items"] == []


@pytest.mark.parametrize("role", ROLES)
async def test_every_tenant_role_may_read_and_write_agents(client, role_keys, role: str) -> None:
    api_key = role_keys[role]
    agent = await register(client, api_key, name=f"{role} agent")
    assert (await client.get(BASE, headers=key(api_key))).status_code == 200
    assert (await client.get(f"{BASE}/{agent['id']}/details", headers=key(api_key))).status_code == 200
    assert (await client.get(f"{BASE}/search?q=agent", headers=key(api_key))).status_code == 200
    assert (await client.post(f"{BASE}/{agent['id']}/heartbeat", headers=key(api_key))).status_code == 200
    put = await client.put(f"{BASE}/{agent['id']}", json={"name": "renamed"}, headers=key(api_key))
    assert put.status_code == 200
    assert (await client.delete(f"{BASE}/{agent['id']}", headers=key(api_key))).status_code == 204


ROUTES = [
    ("post", "/register", {"name": "A", "type": "tool"}),
    ("get", "", None),
    ("get", "/search?q=x", None),
    ("get", "/{id}", None),
    ("get", "/{id}/details", None),
    ("put", "/{id}", {"name": "B"}),
    ("delete", "/{id}", None),
    ("post", "/{id}/heartbeat", None),
]


@pytest.mark.parametrize(("method", "path", "body"), ROUTES)
async def test_credentials_are_required(client, tenant, method: str, path: str, body: Any) -> None:
    agent = await register(client, tenant["api_key"])
    url = BASE + path.replace("{id}", agent["id"])
    send = getattr(client, method)
    kwargs: dict[str, Any] = {} if body is None else {"json": body}
    missing = await send(url, **kwargs)
    assert missing.status_code == 401 and "detail" in await missing.get_json()
    wrong = await send(url, headers=key("agk_nope.nope"), **kwargs)
    assert wrong.status_code == 401
    # the platform admin key is not a tenant credential
    admin = await send(url, headers={"X-Admin-Key": ADMIN_KEY}, **kwargs)
    assert admin.status_code == 401
    still = await client.get(f"{BASE}/{agent['id']}", headers=key(tenant["api_key"]))
    assert still.status_code == 200 and (await still.get_json())["name"] == agent["name"]
