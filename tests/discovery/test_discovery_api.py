"""Shadow-agent discovery through the HTTP API on both backends."""

from __future__ import annotations

import uuid
from typing import Any

import trio
from sklearn.metrics import adjusted_rand_score

from agentgov.actors.discovery import WatchJob, agent_id_for, discovery
from agentgov.ml.discovery import fingerprint
from tests.support.app import ADMIN_KEY
from tests.support.discovery_stream import synthetic_event_stream

BASE = "/api/v1/discovery"
ROLES = ("Developer", "Security Analyst", "Admin")

EVENT: dict[str, Any] = {
    "source": "edr",
    "host": "build-07.corp.example.com",
    "process": "/usr/bin/python3.11 /opt/bots/summarizer.py --once [4411]",
    "endpoint": "api.openai.com:443",
    "client_address": "10.0.3.17",
    "observed_at": "2024-06-01T10:00:00Z",
    "metadata": {"bytes": 1200},
}


def key(api_key: str) -> dict[str, str]:
    return {"X-API-Key": api_key}


def event(**changes: Any) -> dict[str, Any]:
    return {**EVENT, **changes}


async def ingest(client, api_key: str, body: dict[str, Any]) -> dict[str, Any]:
    response = await client.post(f"{BASE}/ingest", json=body, headers=key(api_key))
    assert response.status_code == 200, await response.get_data(as_text=True)
    return await response.get_json()


async def candidates(client, api_key: str, query: str = "") -> dict[str, Any]:
    response = await client.get(f"{BASE}/candidates{query}", headers=key(api_key))
    assert response.status_code == 200
    return await response.get_json()


async def wait_for_job(app, tenant_id: str, job_id: str) -> None:
    """Wait until the job running in the discovery actor has ended (no polling, no sleeps)."""
    done = await discovery(app.extensions["agentgov"], tenant_id).ask(WatchJob(job_id))
    if done is not None:
        await done.wait()


async def test_ingest_creates_then_updates_a_candidate(client, tenant) -> None:
    api_key = tenant["api_key"]
    first = await ingest(client, api_key, EVENT)
    assert first["outcome"] == "candidate_created" and first["agent_id"] is None
    assert first["fingerprint"] == fingerprint(EVENT)
    # the same agent again: new pid, patch-level noise, later
    again = await ingest(
        client,
        api_key,
        event(process="/usr/bin/python3.11 /opt/bots/summarizer.py --once [9]", observed_at="2024-06-02T08:00:00Z"),
    )
    assert again == {**first, "outcome": "candidate_updated"}
    page = await candidates(client, api_key)
    assert page["total"] == 1
    cand = page["items"][0]
    assert cand["id"] == first["candidate_id"] and cand["status"] == "pending"
    assert cand["event_count"] == 2 and cand["fingerprints"] == [first["fingerprint"]]
    assert cand["first_seen_at"] == "2024-06-01T10:00:00.000000Z"
    assert cand["last_seen_at"] == "2024-06-02T08:00:00.000000Z"
    assert cand["suggested_name"] == "summarizer.py on build-07"
    assert cand["summary"]["hosts"] == ["build-07.corp.example.com"] and cand["summary"]["sources"] == ["edr"]
    single = await client.get(f"{BASE}/candidates/{cand['id']}", headers=key(api_key))
    assert await single.get_json() == cand


async def test_events_of_registered_agents_create_no_candidate(client, tenant) -> None:
    api_key = tenant["api_key"]
    agent = await (
        await client.post("/api/v1/agents/register", json={"name": "Report Bot", "type": "tool"}, headers=key(api_key))
    ).get_json()
    by_id = await ingest(client, api_key, event(metadata={"agent_id": agent["id"]}))
    by_name = await ingest(client, api_key, event(host="other-host", metadata={"agent_name": " report bot "}))
    assert by_id["outcome"] == by_name["outcome"] == "known_agent"
    assert by_id["agent_id"] == by_name["agent_id"] == agent["id"] and by_id["candidate_id"] is None
    # an id or name that is not registered here does not count
    unknown = await ingest(client, api_key, event(metadata={"agent_id": str(uuid.uuid4()), "agent_name": "nope"}))
    assert unknown["outcome"] == "candidate_created"
    assert (await candidates(client, api_key))["total"] == 1


async def test_confirm_registers_one_agent_even_when_repeated(client, tenant) -> None:
    api_key = tenant["api_key"]
    created = await ingest(client, api_key, EVENT)
    cand_id = created["candidate_id"]
    first = await client.post(f"{BASE}/candidates/{cand_id}/confirm", headers=key(api_key))
    agent = await first.get_json()
    assert first.status_code == 201, agent
    assert agent["id"] == agent_id_for(cand_id) and agent["name"] == "summarizer.py on build-07"
    assert agent["type"] in {"llm", "tool", "workflow", "custom"} and agent["status"] == "active"
    assert agent["metadata"]["discovery"]["candidate_id"] == cand_id

    second = await client.post(
        f"{BASE}/candidates/{cand_id}/confirm", json={"name": "Another name"}, headers=key(api_key)
    )
    assert second.status_code == 200 and await second.get_json() == agent
    agents = await (await client.get("/api/v1/agents", headers=key(api_key))).get_json()
    assert agents["total"] == 1

    confirmed = await candidates(client, api_key, "?status=confirmed")
    assert [c["id"] for c in confirmed["items"]] == [cand_id]
    assert confirmed["items"][0]["agent_id"] == agent["id"] and confirmed["items"][0]["resolved_at"]
    assert (await candidates(client, api_key, "?status=pending"))["total"] == 0
    # later events of the confirmed candidate are the agent's
    later = await ingest(client, api_key, event(observed_at="2024-06-03T00:00:00Z"))
    assert later["outcome"] == "known_agent" and later["agent_id"] == agent["id"]
    # a confirmed candidate cannot be dismissed
    conflict = await client.post(f"{BASE}/candidates/{cand_id}/dismiss", headers=key(api_key))
    assert conflict.status_code == 409 and agent["id"] in (await conflict.get_json())["detail"]


async def test_confirm_with_overrides(client, tenant) -> None:
    api_key = tenant["api_key"]
    created = await ingest(client, api_key, EVENT)
    response = await client.post(
        f"{BASE}/candidates/{created['candidate_id']}/confirm",
        json={
            "name": "Summariser",
            "type": "llm",
            "description": "Summarises build logs",
            "owner": "platform",
            "capabilities": ["logs.read"],
        },
        headers=key(api_key),
    )
    agent = await response.get_json()
    assert response.status_code == 201
    assert (agent["name"], agent["type"], agent["owner"], agent["capabilities"]) == (
        "Summariser",
        "llm",
        "platform",
        ["logs.read"],
    )
    found = await client.get("/api/v1/agents/search?q=summarise+build+logs", headers=key(api_key))
    assert (await found.get_json())["items"][0]["id"] == agent["id"]


async def test_deleted_agent_reopens_its_candidate_and_confirming_again_restores_it(client, tenant) -> None:
    api_key = tenant["api_key"]
    cand_id = (await ingest(client, api_key, EVENT))["candidate_id"]
    agent = await (await client.post(f"{BASE}/candidates/{cand_id}/confirm", headers=key(api_key))).get_json()
    assert (await client.delete(f"/api/v1/agents/{agent['id']}", headers=key(api_key))).status_code == 204
    reopened = await ingest(client, api_key, EVENT)
    assert reopened["outcome"] == "candidate_updated" and reopened["candidate_id"] == cand_id
    assert (await candidates(client, api_key, "?status=pending"))["items"][0]["id"] == cand_id
    again = await client.post(f"{BASE}/candidates/{cand_id}/confirm", headers=key(api_key))
    assert again.status_code == 201 and (await again.get_json())["id"] == agent["id"]


async def test_dismissed_fingerprint_stays_dismissed(client, tenant) -> None:
    api_key = tenant["api_key"]
    cand_id = (await ingest(client, api_key, EVENT))["candidate_id"]
    response = await client.post(f"{BASE}/candidates/{cand_id}/dismiss", headers=key(api_key))
    dismissed = await response.get_json()
    assert response.status_code == 200 and dismissed["status"] == "dismissed" and dismissed["resolved_at"]
    twice = await client.post(f"{BASE}/candidates/{cand_id}/dismiss", headers=key(api_key))
    assert twice.status_code == 200 and (await twice.get_json())["status"] == "dismissed"

    for pid in (1, 2, 3):
        later = await ingest(client, api_key, event(process=f"python3.12 /opt/bots/summarizer.py [{pid}]"))
        assert later == {
            "outcome": "dismissed",
            "fingerprint": later["fingerprint"],
            "candidate_id": cand_id,
            "agent_id": None,
        }
    batch = await client.post(
        f"{BASE}/ingest/batch", json={"events": [EVENT, EVENT], "cluster": True}, headers=key(api_key)
    )
    assert [r["outcome"] for r in (await batch.get_json())["results"]] == ["dismissed", "dismissed"]
    assert (await candidates(client, api_key, "?status=pending"))["total"] == 0
    assert (await candidates(client, api_key))["items"][0]["event_count"] == 6
    # a different agent on the same host is still discovered
    other = await ingest(client, api_key, event(process="node dist/server.js", user_agent="axios/1.6.8"))
    assert other["outcome"] == "candidate_created"


async def test_batch_ingest_clusters_in_the_same_call(client, tenant) -> None:
    api_key = tenant["api_key"]
    stream = synthetic_event_stream(n_agents=6, seed=3, noise=0.2)
    events = [_as_body(e) for e in stream.events]
    plain = await client.post(f"{BASE}/ingest/batch", json={"events": events[:20]}, headers=key(api_key))
    body = await plain.get_json()
    assert plain.status_code == 200 and body["accepted"] == 20 and body["clustered"] is False
    clustered = await client.post(
        f"{BASE}/ingest/batch", json={"events": events[20:], "cluster": True}, headers=key(api_key)
    )
    result = await clustered.get_json()
    assert clustered.status_code == 200 and result["clustered"] is True
    assert len(result["results"]) == len(events) - 20
    total = (await candidates(client, api_key, "?limit=200"))["total"]
    distinct_fps = len({fingerprint(e) for e in stream.events})
    assert total < distinct_fps  # clustering joined events whose fingerprints differ


def _as_body(e: Any) -> dict[str, Any]:
    return {
        "source": e.source,
        "host": e.host,
        "process": e.process,
        "user_agent": e.user_agent,
        "endpoint": e.endpoint,
        "model": e.model,
        "client_address": e.client_address,
        "observed_at": e.observed_at,
        "metadata": dict(e.metadata),
    }


async def test_adjusted_rand_index_through_the_endpoints(app, client, tenant) -> None:
    """Quality of discovery on a labelled synthetic stream, measured through the real API.

    1. one batch with `cluster: true`: each event's candidate against the true agent;
    2. events ingested without clustering (fingerprint candidates), then `POST /discovery/cluster`.
    """
    stream = synthetic_event_stream(n_agents=20, seed=101, noise=0.3)
    events = [_as_body(e) for e in stream.events]
    api_key = tenant["api_key"]
    response = await client.post(f"{BASE}/ingest/batch", json={"events": events, "cluster": True}, headers=key(api_key))
    results = (await response.get_json())["results"]
    ari_batch = adjusted_rand_score(stream.labels, [r["candidate_id"] for r in results])

    other = await (
        await client.post("/api/v1/tenants", json={"name": "Second"}, headers={"X-Admin-Key": ADMIN_KEY})
    ).get_json()
    other_key = other["api_key"]
    response = await client.post(f"{BASE}/ingest/batch", json={"events": events}, headers=key(other_key))
    plain = (await response.get_json())["results"]
    ari_fingerprints = adjusted_rand_score(stream.labels, [r["candidate_id"] for r in plain])
    accepted = await client.post(f"{BASE}/cluster", headers=key(other_key))
    job = await accepted.get_json()
    assert accepted.status_code == 202 and job["status"] == "queued"
    assert accepted.headers["Location"] == job["status_url"] == f"/api/v1/discovery/jobs/{job['id']}"
    await wait_for_job(app, other["id"], job["id"])
    finished = await (await client.get(job["status_url"], headers=key(other_key))).get_json()
    assert finished["status"] == "succeeded", finished
    assert finished["result"]["candidates_merged"] > 0
    final = {}
    for cand_id in {r["candidate_id"] for r in plain}:
        cand = await (await client.get(f"{BASE}/candidates/{cand_id}", headers=key(other_key))).get_json()
        final[cand_id] = cand["merged_into"] or cand_id
    ari_merged = adjusted_rand_score(stream.labels, [final[r["candidate_id"]] for r in plain])
    print(f"ARI batch-clustered={ari_batch:.3f} fingerprints-only={ari_fingerprints:.3f} merged={ari_merged:.3f}")
    assert ari_batch >= 0.9
    assert ari_merged > ari_fingerprints


async def test_concurrent_ingests_of_one_agent_make_one_candidate(client, tenant) -> None:
    api_key = tenant["api_key"]
    outcomes: list[dict[str, Any]] = []

    async def send(i: int) -> None:
        outcomes.append(await ingest(client, api_key, event(process=f"python /opt/bots/summarizer.py [{i}]")))

    async with trio.open_nursery() as nursery:
        for i in range(25):
            nursery.start_soon(send, i)
    assert sorted(o["outcome"] for o in outcomes) == ["candidate_created"] + ["candidate_updated"] * 24
    assert len({o["candidate_id"] for o in outcomes}) == 1
    page = await candidates(client, api_key)
    assert page["total"] == 1 and page["items"][0]["event_count"] == 25
