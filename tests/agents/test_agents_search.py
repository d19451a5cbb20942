"""Semantic search, predicted types, stored embeddings and details, through the HTTP API on both backends."""

from __future__ import annotations

from typing import Any

import pytest
import trio.testing

from agentgov.actors.registry import AgentNotFound, GetAgent, Heartbeat, SearchAgents, SetRiskScore, registry
from agentgov.http.app import create_app
from agentgov.ml.embedding import default_embedder
from tests.support.app import ADMIN_KEY, running_services, settings_for

BASE = "/api/v1/agents"

AGENTS: list[dict[str, Any]] = [
    {
        "name": "Mail Dispatcher Bot",
        "type": "tool",
        "description": "Delivers outbound newsletters and transactional messages over SMTP.",
        "capabilities": ["smtp.send", "bounce.handle"],
    },
    {
        "name": "Invoice Reconciler",
        "type": "workflow",
        "description": "Matches supplier invoices against purchase orders and flags mismatches.",
        "capabilities": ["erp.read", "ledger.write"],
    },
    {
        "name": "Contract Summariser",
        "type": "llm",
        "description": "Reads legal agreements and writes short plain-language summaries.",
        "capabilities": ["document.read"],
    },
    {
        "name": "On-call Pager",
        "type": "tool",
        "description": "Watches production alerts and phones the engineer on duty.",
        "capabilities": ["alerts.subscribe", "phone.call"],
    },
    {
        "name": "Translator",
        "type": "llm",
        "description": "Translates support tickets from Spanish, French and German into English.",
        "capabilities": ["ticket.read", "ticket.comment"],
    },
    {
        "name": "Recruiting Screener",
        "type": "workflow",
        "description": "Screens job applications and schedules interviews with candidates.",
        "capabilities": ["calendar.write", "ats.read"],
    },
]

QUERIES = [
    ("agent that sends emails", "Mail Dispatcher Bot"),
    ("who pays attention to bills from vendors", "Invoice Reconciler"),
    ("summarize contracts", "Contract Summariser"),
    ("wake up an engineer when the site is down", "On-call Pager"),
    ("convert customer messages to english", "Translator"),
    ("hiring candidates interviews", "Recruiting Screener"),
]


def key(api_key: str) -> dict[str, str]:
    return {"X-API-Key": api_key}


async def register_all(client, api_key: str) -> dict[str, str]:
    ids = {}
    for body in AGENTS:
        response = await client.post(f"{BASE}/register", json=body, headers=key(api_key))
        assert response.status_code == 201
        ids[body["name"]] = (await response.get_json())["id"]
    return ids


async def test_search_finds_agents_by_meaning_right_after_registration(client, tenant) -> None:
    await register_all(client, tenant["api_key"])
    hits_at_1 = 0
    for q, expected in QUERIES:
        response = await client.get(f"{BASE}/search", query_string={"q": q}, headers=key(tenant["api_key"]))
        body = await response.get_json()
        assert response.status_code == 200
        names = [item["name"] for item in body["items"]]
        assert expected in names[:3], (q, names)
        hits_at_1 += names[0] == expected
        scores = [item["score"] for item in body["items"]]
        assert scores == sorted(scores, reverse=True) and all(-1.0 <= s <= 1.0 for s in scores)
        assert len(body["items"]) == len(AGENTS) and body["total"] == len(AGENTS)
    assert hits_at_1 >= len(QUERIES) - 1


async def test_search_limit_and_changes_are_reflected(client, tenant) -> None:
    ids = await register_all(client, tenant["api_key"])
    api_key = tenant["api_key"]
    limited = await (await client.get(f"{BASE}/search?q=email&limit=2", headers=key(api_key))).get_json()
    assert len(limited["items"]) == 2 and limited["limit"] == 2

    # rewrite the translator into a mail agent: the next search sees the new text
    put = await client.put(
        f"{BASE}/{ids['Translator']}",
        json={"name": "Bulk Email Sender", "description": "Sends marketing email blasts to customers."},
        headers=key(api_key),
    )
    assert put.status_code == 200
    first = await (await client.get(f"{BASE}/search?q=send+email&limit=2", headers=key(api_key))).get_json()
    assert {i["name"] for i in first["items"]} == {"Bulk Email Sender", "Mail Dispatcher Bot"}

    # a deleted agent is never returned again
    assert (await client.delete(f"{BASE}/{ids['Mail Dispatcher Bot']}", headers=key(api_key))).status_code == 204
    after = await (await client.get(f"{BASE}/search?q=send+email", headers=key(api_key))).get_json()
    assert ids["Mail Dispatcher Bot"] not in [i["id"] for i in after["items"]]
    assert after["items"][0]["name"] == "Bulk Email Sender"


@pytest.mark.parametrize(
    ("params", "field"),
    [("", "q"), ("q=", "q"), ("q=%20%20", "q"), ("q=x&limit=0", "limit"), ("q=x&limit=201", "limit")],
)
async def test_search_rejects_blank_query_and_bad_limit(client, tenant, params: str, field: str) -> None:
    response = await client.get(f"{BASE}/search?{params}", headers=key(tenant["api_key"]))
    body = await response.get_json()
    assert response.status_code == 422, body
    assert body["errors"][0]["field"] in (field, "query parameters")
    assert field in body["detail"]


async def test_search_of_empty_registry_is_empty(client, tenant) -> None:
    response = await client.get(f"{BASE}/search?q=anything", headers=key(tenant["api_key"]))
    assert response.status_code == 200
    assert await response.get_json() == {"items": [], "total": 0, "limit": 10, "offset": 0}


async def test_predicted_type_follows_the_description(client, tenant) -> None:
    api_key = tenant["api_key"]
    llm = await client.post(
        f"{BASE}/register",
        json={
            "name": "support-chatbot",
            "type": "custom",
            "description": "Conversational assistant that answers customer questions using GPT-4",
            "capabilities": ["chat.completion", "prompt.answer"],
        },
        headers=key(api_key),
    )
    body = await llm.get_json()
    assert body["type"] == "custom" and body["predicted_type"] == "llm"
    put = await client.put(
        f"{BASE}/{body['id']}",
        json={
            "name": "nightly-etl-pipeline",
            "description": "Multi-step pipeline: extract, transform and load data on a schedule",
            "capabilities": ["dag.run", "step.retry", "schedule.cron"],
        },
        headers=key(api_key),
    )
    assert (await put.get_json())["predicted_type"] == "workflow"
    listed = await (await client.get(BASE, headers=key(api_key))).get_json()
    assert listed["items"][0]["predicted_type"] == "workflow"


async def test_details_show_embedding_summary_and_activity(app, client, tenant) -> None:
    api_key = tenant["api_key"]
    created = await (await client.post(f"{BASE}/register", json=AGENTS[0], headers=key(api_key))).get_json()
    await trio.testing.wait_all_tasks_blocked()
    # a search makes sure the background embedding is done
    await client.get(f"{BASE}/search?q=mail", headers=key(api_key))
    response = await client.get(f"{BASE}/{created['id']}/details", headers=key(api_key))
    details = await response.get_json()
    assert response.status_code == 200
    assert details["id"] == created["id"] and details["name"] == created["name"]
    embedding = details["embedding"]
    assert embedding["model"] == default_embedder().model_name
    assert embedding["dimension"] == default_embedder().dimension == 384
    assert embedding["stale"] is False and embedding["updated"] and len(embedding["content_hash"]) == 64
    activity = details["activity"]
    assert set(activity) == {"available", "total", "last_24h", "last_7d", "last_activity_at"}
    assert activity["total"] == activity["last_24h"] == activity["last_7d"] == 0


async def test_heartbeat_refreshes_a_stale_embedding(app, client, tenant) -> None:
    api_key = tenant["api_key"]
    created = await (await client.post(f"{BASE}/register", json=AGENTS[1], headers=key(api_key))).get_json()
    await client.get(f"{BASE}/search?q=invoices", headers=key(api_key))
    before = (await (await client.get(f"{BASE}/{created['id']}/details", headers=key(api_key))).get_json())["embedding"]
    assert before["stale"] is False

    # the stored vector was made by another model version: it is stale
    db = app.extensions["agentgov"].db
    await db.write(
        lambda conn: conn.execute(
            "UPDATE agent_embeddings SET model = 'old-model', content_hash = 'x' WHERE agent_id = :id",
            {"id": created["id"]},
        )
    )
    stale = (await (await client.get(f"{BASE}/{created['id']}/details", headers=key(api_key))).get_json())["embedding"]
    assert stale["stale"] is True and stale["model"] == "old-model"

    beat = await client.post(f"{BASE}/{created['id']}/heartbeat", headers=key(api_key))
    assert beat.status_code == 200
    after = (await (await client.get(f"{BASE}/{created['id']}/details", headers=key(api_key))).get_json())["embedding"]
    assert after["stale"] is False
    assert after["model"] == default_embedder().model_name and after["content_hash"] == before["content_hash"]
    assert after["updated"] > before["updated"]


async def test_registry_interface_for_other_modules(app, client, tenant) -> None:
    svc = app.extensions["agentgov"]
    created = await (await client.post(f"{BASE}/register", json=AGENTS[2], headers=key(tenant["api_key"]))).get_json()
    ref = registry(svc, tenant["id"])
    agent = await ref.ask(GetAgent(created["id"]))
    assert agent.id == created["id"] and agent.tenant_id == tenant["id"] and agent.to_public() == created
    beat = await ref.ask(Heartbeat(created["id"], "error"))
    assert beat.status == "error" and beat.last_heartbeat_at is not None
    with pytest.raises(ValueError, match="status must be one of"):
        await ref.ask(Heartbeat(created["id"], "sleeping"))
    with pytest.raises(AgentNotFound):
        await ref.ask(GetAgent("00000000-0000-0000-0000-000000000000"))
    with pytest.raises(AgentNotFound):
        await ref.ask(Heartbeat("not-even-a-uuid"))
    scored = await ref.ask(SetRiskScore(created["id"], 0.75))
    assert scored.risk_score == 0.75
    with pytest.raises(ValueError):
        await ref.ask(SetRiskScore(created["id"], 1.5))
    listed = await (await client.get(BASE, headers=key(tenant["api_key"]))).get_json()
    assert listed["items"][0]["risk_score"] == 0.75
    # another tenant's registry does not know the agent
    other = await client.post("/api/v1/tenants", json={"name": "Initech"}, headers={"X-Admin-Key": ADMIN_KEY})
    with pytest.raises(AgentNotFound):
        await registry(svc, (await other.get_json())["id"]).ask(GetAgent(created["id"]))


async def test_two_processes_sharing_a_database_see_each_others_agents(sqlite_url: str) -> None:
    settings = settings_for(sqlite_url)
    async with running_services(settings) as first, running_services(settings) as second:
        a, b = create_app(first).test_client(), create_app(second).test_client()
        tenant = await (
            await a.post("/api/v1/tenants", json={"name": "Shared"}, headers={"X-Admin-Key": ADMIN_KEY})
        ).get_json()
        api_key = tenant["api_key"]
        await a.post(f"{BASE}/register", json=AGENTS[0], headers=key(api_key))
        assert (await (await b.get(f"{BASE}/search?q=email", headers=key(api_key))).get_json())["total"] == 1
        # b has the registry cached; a registers another agent: b's next search must see it
        await a.post(f"{BASE}/register", json=AGENTS[3], headers=key(api_key))
        hits = await registry(second, tenant["id"]).ask(SearchAgents("page the on-call engineer", 5))
        assert hits[0].agent.name == "On-call Pager"
        # and b deletes one: a's cache drops it
        mail = next(h.agent.id for h in hits if h.agent.name == "Mail Dispatcher Bot")
        assert (await b.delete(f"{BASE}/{mail}", headers=key(api_key))).status_code == 204
        left = await registry(first, tenant["id"]).ask(SearchAgents("send email", 5))
        assert [h.agent.name for h in left] == ["On-call Pager"]


async def test_details_count_the_agents_audit_activity(client, tenant) -> None:
    api_key = tenant["api_key"]
    mine = await (await client.post(f"{BASE}/register", json=AGENTS[0], headers=key(api_key))).get_json()
    other = await (await client.post(f"{BASE}/register", json=AGENTS[1], headers=key(api_key))).get_json()
    for agent_id, action in ((mine["id"], "send"), (mine["id"], "send"), (other["id"], "read")):
        logged = await client.post(
            "/api/v1/audit/log",
            json={"agent_id": agent_id, "action": action, "resource": "smtp://relay"},
            headers=key(api_key),
        )
        assert logged.status_code in (200, 201), await logged.get_data(as_text=True)
    details = await (await client.get(f"{BASE}/{mine['id']}/details", headers=key(api_key))).get_json()
    activity = details["activity"]
    assert activity["available"] is True
    assert (activity["total"], activity["last_24h"], activity["last_7d"]) == (2, 2, 2)
    assert activity["last_activity_at"] is not None


async def test_cached_ranking_matches_a_cold_one_after_mixed_writes(sqlite_url: str) -> None:
    settings = settings_for(sqlite_url)
    async with running_services(settings) as svc:
        client = create_app(svc).test_client()
        tenant = await (
            await client.post("/api/v1/tenants", json={"name": "Warm"}, headers={"X-Admin-Key": ADMIN_KEY})
        ).get_json()
        api_key = tenant["api_key"]
        ids = await register_all(client, api_key)
        ref = registry(svc, tenant["id"])
        await ref.ask(SearchAgents("warm the cache", 50))
        # new rows, a changed row, a deleted row, each patched into the cached matrix
        extra = await (
            await client.post(f"{BASE}/register", json={"name": "Parcel Tracker", "type": "tool"}, headers=key(api_key))
        ).get_json()
        await client.put(f"{BASE}/{ids['Translator']}", json={"description": "Books travel"}, headers=key(api_key))
        await client.delete(f"{BASE}/{ids['Invoice Reconciler']}", headers=key(api_key))
        warm = await ref.ask(SearchAgents("book a trip", 50))
    async with running_services(settings) as fresh:
        cold = await registry(fresh, tenant["id"]).ask(SearchAgents("book a trip", 50))
    assert [(h.agent.id, h.score) for h in warm] == [(h.agent.id, h.score) for h in cold]
    assert len(warm) == len(AGENTS) and extra["id"] in {h.agent.id for h in warm}
    assert warm[0].agent.id == ids["Translator"]
