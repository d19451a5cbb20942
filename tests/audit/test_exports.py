"""Streamed audit exports on SQLite and PostgreSQL: CSV (RFC 4180, formula cells neutralised), JSON and JSON
Lines with chain fields, filters, roles, tenant isolation, and an export of several pages through real HTTP."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

import pytest

from agentgov.exports.formats import COLUMNS
from tests.audit.conftest import key_headers, log_entry, register_agent
from tests.support.app import ADMIN_KEY, live_server, settings_for

API = "/api/v1"
FORMULAS = ['=HYPERLINK("http://evil")', "+cmd|' /C calc'!A0", "-2+3", "@SUM(A1:A9)"]


@pytest.fixture
async def trail(client, tenant) -> dict[str, Any]:
    api_key = tenant["api_key"]
    billing = await register_agent(client, api_key, "billing-bot")
    support = await register_agent(client, api_key, "support-bot")
    entries = [
        await log_entry(client, api_key, billing["id"], action="read", timestamp="2026-05-01T09:00:00Z"),
        await log_entry(
            client,
            api_key,
            billing["id"],
            action="pay",
            resource='ledger "main", eu\nsecond line',
            input={"amount": 12.5, "to": "acme"},
            reasoning=["due today"],
            risk_score=0.4,
            timestamp="2026-05-02T09:00:00Z",
        ),
        *[
            await log_entry(
                client, api_key, support["id"], action="write", resource=text, timestamp="2026-05-03T09:00:00Z"
            )
            for text in FORMULAS
        ],
    ]
    return {"api_key": api_key, "billing": billing, "support": support, "entries": entries}


async def export(client: Any, api_key: str, path: str) -> tuple[Any, str]:
    response = await client.get(f"{API}{path}", headers=key_headers(api_key))
    return response, await response.get_data(as_text=True)


async def test_csv_is_rfc4180_with_chain_fields_and_neutralised_formulas(client, trail) -> None:
    response, text = await export(client, trail["api_key"], "/audit/export/csv")
    assert response.status_code == 200 and response.headers["Content-Type"].startswith("text/csv")
    assert response.headers["Content-Disposition"].startswith('attachment; filename="audit-')
    assert text.endswith("\r\n") and "\r\n" in text
    rows = list(csv.reader(io.StringIO(text, newline="")))
    assert tuple(rows[0]) == COLUMNS and len(rows) == 1 + len(trail["entries"])
    records = [dict(zip(COLUMNS, row, strict=True)) for row in rows[1:]]
    assert [int(r["sequence"]) for r in records] == sorted(int(r["sequence"]) for r in records)
    for record, entry in zip(records, trail["entries"], strict=True):
        assert record["id"] == entry["id"] and record["signature"] == entry["signature"]
        assert record["prev_signature"] == entry["prev_signature"] and int(record["sequence"]) == entry["sequence"]
    paid = records[1]
    assert paid["resource"] == 'ledger "main", eu\nsecond line'
    assert json.loads(paid["input"]) == {"amount": 12.5, "to": "acme"} and json.loads(paid["reasoning"]) == [
        "due today"
    ]
    assert paid["risk_score"] == "0.4" and paid["timestamp"] == "2026-05-02T09:00:00.000000Z"
    assert [r["resource"] for r in records[2:]] == ["'" + f for f in FORMULAS]
    assert records[0]["input"] == "" and records[0]["is_approved"] == ""


async def test_json_and_json_lines_hold_the_same_entries(client, trail) -> None:
    api_key = trail["api_key"]
    response, text = await export(client, api_key, "/audit/export/json")
    assert response.status_code == 200 and response.headers["Content-Type"] == "application/json"
    as_json = json.loads(text)
    response, text = await export(client, api_key, "/audit/export?format=jsonl")
    assert response.status_code == 200 and response.headers["Content-Type"] == "application/x-ndjson"
    as_lines = [json.loads(line) for line in text.splitlines()]
    assert as_json == as_lines and [e["id"] for e in as_json] == [e["id"] for e in trail["entries"]]
    assert as_json[1]["input"] == {"amount": 12.5, "to": "acme"} and as_json[2]["resource"] == FORMULAS[0]
    assert set(as_json[0]) == set(COLUMNS)
    response, text = await export(client, api_key, "/audit/export?format=csv")
    assert response.status_code == 200 and text.startswith("sequence,id,kind,")


async def test_filters(client, trail) -> None:
    api_key, billing = trail["api_key"], trail["billing"]

    async def ids(query: str) -> list[str]:
        response, text = await export(client, api_key, f"/audit/export?format=jsonl&{query}")
        assert response.status_code == 200, text
        return [json.loads(line)["id"] for line in text.splitlines()]

    entries = [e["id"] for e in trail["entries"]]
    assert await ids(f"agent_id={billing['id']}") == entries[:2]
    assert await ids("action=write") == entries[2:]
    assert await ids("kind=action") == entries and await ids("kind=policy_check") == []
    assert await ids("since=2026-05-02T00:00:00Z&until=2026-05-03T00:00:00Z") == entries[1:2]
    assert await ids("since=2026-05-03T09:00:00%2B00:00") == entries[2:]


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("format=xml", "format"),
        ("", "format"),
        ("format=csv&since=yesterday", "since"),
        ("format=csv&since=2026-05-02T00:00:00", "since"),
        ("format=csv&since=2026-05-03T00:00:00Z&until=2026-05-02T00:00:00Z", "since"),
        ("format=csv&agent_id=nope", "agent_id"),
    ],
)
async def test_bad_queries_are_422(client, tenant, query: str, field: str) -> None:
    response, text = await export(client, tenant["api_key"], f"/audit/export?{query}")
    body = json.loads(text)
    assert response.status_code == 422 and body["detail"] and field in str(body.get("errors", body["detail"]))
    if query == "format=xml":
        assert all(name in str(body) for name in ("csv", "json", "jsonl"))


@pytest.mark.parametrize("path", ["/audit/export?format=csv", "/audit/export/csv", "/audit/export/json"])
async def test_roles_and_tenants(client, trail, role_keys, other_tenant, path: str) -> None:
    assert (await client.get(f"{API}{path}")).status_code == 401
    response, _ = await export(client, role_keys["Developer"], path)
    assert response.status_code == 403
    response, text = await export(client, role_keys["Security Analyst"], path)
    assert response.status_code == 200 and trail["entries"][0]["id"] in text
    response, text = await export(client, other_tenant["api_key"], path)
    assert response.status_code == 200 and not any(e["id"] in text for e in trail["entries"])


async def test_an_export_of_several_pages_through_real_http(database_url: str) -> None:
    async with live_server(settings_for(database_url)) as (http, _running):
        tenant = (await http.post(f"{API}/tenants", json={"name": "Acme"}, headers={"X-Admin-Key": ADMIN_KEY})).json()
        headers = {"X-API-Key": tenant["api_key"]}
        agent = (await http.post(f"{API}/agents/register", json={"name": "bot", "type": "llm"}, headers=headers)).json()
        for n in range(1205):
            body = {"agent_id": agent["id"], "action": "read", "resource": f"r{n}"}
            assert (await http.post(f"{API}/audit/log", json=body, headers=headers)).status_code == 201
        lines: list[str] = []
        async with http.stream("GET", f"{API}/audit/export?format=jsonl", headers=headers) as response:
            assert response.status_code == 200
            async for line in response.aiter_lines():
                if line:
                    lines.append(line)
        records = [json.loads(line) for line in lines]
        assert [r["resource"] for r in records] == [f"r{n}" for n in range(1205)]
        assert [r["sequence"] for r in records] == list(range(records[0]["sequence"], records[0]["sequence"] + 1205))
