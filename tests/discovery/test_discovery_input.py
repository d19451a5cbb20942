"""Discovery: bad input, credentials, roles, malformed and cross-tenant ids (both backends)."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from tests.discovery.test_discovery_api import BASE, EVENT, event, ingest, key, wait_for_job
from tests.support.app import ADMIN_KEY


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({k: v for k, v in EVENT.items() if k != "source"}, "source"),
        (event(source="  "), "source"),
        (event(source="x" * 101), "source"),
        ({"source": "proxy", "model": "gpt-4o"}, "an event needs at least one of"),
        ({"source": "proxy", "host": "  "}, "an event needs at least one of"),
        (event(host="h" * 256), "host"),
        (event(process=5), "process"),
        (event(client_address="not-an-ip"), "client_address"),
        (event(client_address="10.0.0.1:99999"), "client_address"),
        (event(client_address="10.0.0.1:\uff18\uff10"), "client_address"),  # full-width digits are no port
        (event(observed_at="yesterday"), "observed_at"),
        (event(metadata=["x"]), "metadata"),
        (event(metadata={"blob": "x" * 9000}), "metadata"),
    ],
)
async def test_ingest_rejects_bad_events(client, tenant, body: dict[str, Any], field: str) -> None:
    response = await client.post(f"{BASE}/ingest", json=body, headers=key(tenant["api_key"]))
    answer = await response.get_json()
    assert response.status_code == 422, answer
    assert field in answer["detail"]
    listed = await (await client.get(f"{BASE}/candidates", headers=key(tenant["api_key"]))).get_json()
    assert listed["total"] == 0


@pytest.mark.parametrize("address", ["10.0.0.5", "10.0.0.5:51234", "2001:db8::1", "[2001:db8::1]:443"])
async def test_ingest_accepts_addresses_with_or_without_port(client, tenant, address: str) -> None:
    result = await ingest(client, tenant["api_key"], {"source": "proxy", "client_address": address})
    assert result["outcome"] == "candidate_created"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "events"),
        ({"events": []}, "events"),
        ({"events": [EVENT] * 1001}, "events"),
        ({"events": [EVENT, {"source": "edr"}]}, "events.1"),
        ({"events": [EVENT], "cluster": "sometimes"}, "cluster"),
        ({"events": EVENT}, "events"),
    ],
)
async def test_batch_rejects_bad_bodies_and_stores_nothing(client, tenant, body: dict[str, Any], field: str) -> None:
    response = await client.post(f"{BASE}/ingest/batch", json=body, headers=key(tenant["api_key"]))
    answer = await response.get_json()
    assert response.status_code == 422, answer
    assert any(e["field"].startswith(field) for e in answer["errors"]) or field in answer["detail"]
    listed = await (await client.get(f"{BASE}/candidates", headers=key(tenant["api_key"]))).get_json()
    assert listed["total"] == 0


async def test_batch_at_the_size_limit_is_accepted(client, tenant) -> None:
    events = [event(host=f"host-{i % 7}") for i in range(1000)]
    response = await client.post(f"{BASE}/ingest/batch", json={"events": events}, headers=key(tenant["api_key"]))
    body = await response.get_json()
    assert response.status_code == 200 and body["accepted"] == 1000 and body["candidates_created"] == 7


@pytest.mark.parametrize(
    ("path", "body", "needle"),
    [
        ("/cluster", {"distance_threshold": 0}, "distance_threshold"),
        ("/cluster", {"distance_threshold": 2.5}, "distance_threshold"),
        ("/cluster", {"distance_threshold": "far"}, "distance_threshold"),
        ("/candidates/{id}/confirm", {"type": "robot"}, "type"),
        ("/candidates/{id}/confirm", {"name": " "}, "name"),
        ("/candidates/{id}/confirm", {"capabilities": [""]}, "capabilities"),
    ],
)
async def test_bad_optional_bodies_are_422(client, tenant, path: str, body: dict[str, Any], needle: str) -> None:
    cand_id = (await ingest(client, tenant["api_key"], EVENT))["candidate_id"]
    response = await client.post(BASE + path.replace("{id}", cand_id), json=body, headers=key(tenant["api_key"]))
    assert response.status_code == 422
    assert needle in (await response.get_json())["detail"]
    listed = await (await client.get(f"{BASE}/candidates", headers=key(tenant["api_key"]))).get_json()
    assert listed["items"][0]["status"] == "pending"


@pytest.mark.parametrize(
    ("params", "field"),
    [("status=maybe", "status"), ("limit=201", "limit"), ("limit=0", "limit"), ("offset=-1", "offset")],
)
async def test_candidate_list_rejects_bad_query(client, tenant, params: str, field: str) -> None:
    response = await client.get(f"{BASE}/candidates?{params}", headers=key(tenant["api_key"]))
    assert response.status_code == 422
    assert (await response.get_json())["errors"][0]["field"] == field


async def test_candidate_list_paginates_and_filters(client, tenant) -> None:
    api_key = tenant["api_key"]
    ids = [(await ingest(client, api_key, event(host=f"host-{i}")))["candidate_id"] for i in range(5)]
    await client.post(f"{BASE}/candidates/{ids[1]}/dismiss", headers=key(api_key))
    window = await (await client.get(f"{BASE}/candidates?limit=2&offset=1", headers=key(api_key))).get_json()
    assert [c["id"] for c in window["items"]] == ids[1:3]
    assert (window["total"], window["limit"], window["offset"]) == (5, 2, 1)
    pending = await (await client.get(f"{BASE}/candidates?status=pending", headers=key(api_key))).get_json()
    assert [c["id"] for c in pending["items"]] == [ids[0], *ids[2:]]
    dismissed = await (await client.get(f"{BASE}/candidates?status=dismissed", headers=key(api_key))).get_json()
    assert [c["id"] for c in dismissed["items"]] == [ids[1]]


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("get", "/candidates/{id}"),
        ("post", "/candidates/{id}/confirm"),
        ("post", "/candidates/{id}/dismiss"),
        ("get", "/jobs/{id}"),
    ],
)
async def test_malformed_unknown_and_foreign_ids(client, tenant, other_tenant, method: str, path: str) -> None:
    theirs = (await ingest(client, other_tenant["api_key"], EVENT))["candidate_id"]
    their_job = await (await client.post(f"{BASE}/cluster", headers=key(other_tenant["api_key"]))).get_json()
    send = getattr(client, method)
    malformed = await send(BASE + path.replace("{id}", "12345"), headers=key(tenant["api_key"]))
    assert malformed.status_code == 422
    assert (await malformed.get_json())["errors"][0]["field"] in ("candidate_id", "job_id")
    foreign = their_job["id"] if "jobs" in path else theirs
    for some_id in (str(uuid.uuid4()), foreign):
        response = await send(BASE + path.replace("{id}", some_id), headers=key(tenant["api_key"]))
        assert response.status_code == 404
        assert (await response.get_json())["detail"] in ("Candidate not found", "Job not found")
    # the other tenant's candidate is untouched, and nothing was registered here
    still = await (await client.get(f"{BASE}/candidates/{theirs}", headers=key(other_tenant["api_key"]))).get_json()
    assert still["status"] == "pending"
    agents = await (await client.get("/api/v1/agents", headers=key(tenant["api_key"]))).get_json()
    assert agents["total"] == 0


async def test_tenants_see_only_their_own_candidates(client, tenant, other_tenant) -> None:
    await ingest(client, other_tenant["api_key"], EVENT)
    mine = await (await client.get(f"{BASE}/candidates", headers=key(tenant["api_key"]))).get_json()
    assert mine["total"] == 0
    # the same fingerprint in my tenant is a new candidate of mine
    result = await ingest(client, tenant["api_key"], EVENT)
    assert result["outcome"] == "candidate_created"


@pytest.mark.parametrize("role", ["Developer", "Security Analyst", "Admin"])
async def test_every_tenant_role_may_use_discovery(app, client, tenant, role_keys, role: str) -> None:
    api_key = role_keys[role]
    cand_id = (await ingest(client, api_key, EVENT))["candidate_id"]
    other_id = (await ingest(client, api_key, event(host="elsewhere", process="node x.js")))["candidate_id"]
    assert (await client.get(f"{BASE}/candidates", headers=key(api_key))).status_code == 200
    batch = await client.post(f"{BASE}/ingest/batch", json={"events": [EVENT]}, headers=key(api_key))
    assert batch.status_code == 200
    job = await client.post(f"{BASE}/cluster", json={}, headers=key(api_key))
    assert job.status_code == 202
    await wait_for_job(app, tenant["id"], (await job.get_json())["id"])
    assert (await client.get((await job.get_json())["status_url"], headers=key(api_key))).status_code == 200
    assert (await client.post(f"{BASE}/candidates/{cand_id}/confirm", headers=key(api_key))).status_code == 201
    assert (await client.post(f"{BASE}/candidates/{other_id}/dismiss", headers=key(api_key))).status_code == 200


ROUTES = [
    ("post", "/ingest", EVENT),
    ("post", "/ingest/batch", {"events": [EVENT]}),
    ("post", "/cluster", None),
    ("get", "/candidates", None),
    ("get", "/candidates/{id}", None),
    ("post", "/candidates/{id}/confirm", None),
    ("post", "/candidates/{id}/dismiss", None),
    ("get", "/jobs/{id}", None),
]


@pytest.mark.parametrize(("method", "path", "body"), ROUTES)
async def test_credentials_are_required(client, tenant, method: str, path: str, body: Any) -> None:
    cand_id = (await ingest(client, tenant["api_key"], EVENT))["candidate_id"]
    url = BASE + path.replace("{id}", cand_id)
    kwargs: dict[str, Any] = {} if body is None else {"json": body}
    send = getattr(client, method)
    for headers in ({}, key("agk_wrong.key"), {"X-Admin-Key": ADMIN_KEY}):
        response = await send(url, headers=headers, **kwargs)
        assert response.status_code == 401 and "detail" in await response.get_json()
    listed = await (await client.get(f"{BASE}/candidates", headers=key(tenant["api_key"]))).get_json()
    assert listed["total"] == 1 and listed["items"][0]["status"] == "pending"
    assert listed["items"][0]["event_count"] == 1
