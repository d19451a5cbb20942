"""The optional event `timestamp` of POST /audit/log and of the webhook's agent.action: stored beside the
receipt time, shown, signed into the chain, and refused when malformed or in the future."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from agentgov.storage.database import Connection
from tests.audit.conftest import LOG, deliver, key_headers, log_entry


async def entries_of(client, api_key: str) -> list[dict[str, Any]]:
    response = await client.get("/api/v1/audit?limit=200", headers=key_headers(api_key))
    return (await response.get_json())["items"]


async def test_event_time_is_stored_beside_the_receipt_time(client, tenant, agent) -> None:
    entry = await log_entry(client, tenant["api_key"], agent["id"], timestamp="2026-05-04T09:15:00+02:00")
    assert entry["timestamp"] == "2026-05-04T07:15:00.000000Z"  # normalised to UTC
    assert entry["created_at"] > entry["timestamp"]  # the receipt time is kept as well
    fetched = await client.get(f"/api/v1/audit/{entry['id']}", headers=key_headers(tenant["api_key"]))
    assert (await fetched.get_json())["timestamp"] == entry["timestamp"]
    assert (await entries_of(client, tenant["api_key"]))[0]["timestamp"] == entry["timestamp"]


async def test_without_event_time_the_timestamp_is_the_receipt_time(client, tenant, agent) -> None:
    entry = await log_entry(client, tenant["api_key"], agent["id"])
    assert entry["timestamp"] == entry["created_at"]
    assert entry["anomaly"] is None  # no detector model yet


async def test_a_little_clock_skew_is_accepted(client, tenant, agent) -> None:
    soon = (datetime.now(UTC) + timedelta(minutes=4)).isoformat()
    entry = await log_entry(client, tenant["api_key"], agent["id"], timestamp=soon)
    assert entry["timestamp"] > entry["created_at"]


@pytest.mark.parametrize(
    ("value", "needle"),
    [
        ("in 10 minutes", "5 minutes in the future"),
        ("2026-05-04T09:15:00", "timezone"),  # no zone: ambiguous
        ("yesterday", "datetime"),
        ("2026-13-40T00:00:00Z", "datetime"),
        (1714800000, "timezone"),
        ("1900-01-01T00:00:00Z", "2000"),
    ],
)
async def test_bad_event_times_are_422(client, tenant, agent, value: Any, needle: str) -> None:
    if value == "in 10 minutes":
        value = (datetime.now(UTC) + timedelta(minutes=10)).isoformat()
    body = {"agent_id": agent["id"], "action": "read", "resource": "db://orders", "timestamp": value}
    response = await client.post(LOG, json=body, headers=key_headers(tenant["api_key"]))
    answer = await response.get_json()
    assert response.status_code == 422, answer
    (error,) = answer["errors"]
    assert error["field"] == "timestamp" and needle in error["message"].lower()
    assert await entries_of(client, tenant["api_key"]) == []  # nothing stored


async def test_webhook_action_takes_an_event_time(client, tenant, agent) -> None:
    payload = {"agent_id": agent["id"], "action": "send", "timestamp": "2026-05-04T07:15:00Z"}
    response = await deliver(client, tenant["api_key"], "agent.action", payload)
    assert response.status_code == 200, await response.get_data(as_text=True)
    (entry,) = await entries_of(client, tenant["api_key"])
    assert entry["timestamp"] == "2026-05-04T07:15:00.000000Z"

    late = {"agent_id": agent["id"], "timestamp": (datetime.now(UTC) + timedelta(hours=1)).isoformat()}
    response = await deliver(client, tenant["api_key"], "agent.action", late)
    answer = await response.get_json()
    assert response.status_code == 422, answer
    assert [e["field"] for e in answer["errors"]] == ["payload.timestamp"]


async def test_event_time_is_part_of_the_signed_entry(app, client, tenant, agent) -> None:
    entries = [
        await log_entry(client, tenant["api_key"], agent["id"], timestamp=f"2026-05-04T07:1{i}:00Z") for i in range(3)
    ]

    def tamper(conn: Connection) -> None:
        conn.execute(
            "UPDATE audit_entries SET occurred_at = :v WHERE id = :id",
            {"v": "2026-05-03T07:10:00.000000Z", "id": entries[1]["id"]},
        )

    intact = await client.get("/api/v1/audit/verify", headers=key_headers(tenant["api_key"]))
    assert (await intact.get_json())["intact"] is True
    await app.extensions["agentgov"].db.write(tamper)
    report = await (await client.get("/api/v1/audit/verify", headers=key_headers(tenant["api_key"]))).get_json()
    assert report["intact"] is False
    assert [(f["kind"], f["entry_id"]) for f in report["findings"]] == [("modified", entries[1]["id"])]
    assert json.dumps(report)  # the report itself is plain JSON
