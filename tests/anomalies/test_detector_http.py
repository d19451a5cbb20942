"""The anomaly detector over HTTP on SQLite and PostgreSQL: back-filled history, training, versions and
rollback, scoring at ingest, reports, the policy decision's `anomaly`, and the bad paths."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import trio

from tests.anomalies.helpers import (
    API,
    backfill,
    key,
    register,
    train_and_wait,
    wait_for_scored,
)
from tests.support.polling import wait_until

MONDAY_10 = datetime(2026, 5, 25, 10, 0, tzinfo=UTC)


@pytest.fixture
async def trained(client, tenant) -> dict[str, Any]:
    """A tenant with two agents, two weeks of history and a trained version 1."""
    api_key = tenant["api_key"]
    agents = [await register(client, api_key, name) for name in ("billing-bot", "support-bot")]
    await backfill(client, api_key, [a["id"] for a in agents])
    task = await train_and_wait(client, api_key)
    assert task["status"] == "succeeded", task
    return {"api_key": api_key, "agents": agents, "task": task}


async def test_training_writes_an_active_version(client, trained) -> None:
    api_key, task = trained["api_key"], trained["task"]
    assert task["version"] == 1 and task["progress"] == 1.0 and task["phase"] == "succeeded"
    assert task["trigger"] == "manual" and task["requested_by"].startswith("key:")
    versions = await (await client.get(f"{API}/anomalies/detector/versions", headers=key(api_key))).get_json()
    (version,) = versions["items"]
    assert version["version"] == 1 and version["active"] is True and version["rows"] > 200
    assert version["training_window"]["start"] < version["training_window"]["end"]
    assert 0 < version["threshold"] < 1 and version["metrics"]["modelled_agents"] == 2
    status = await (await client.get(f"{API}/anomalies/detector/status", headers=key(api_key))).get_json()
    assert status["active_version"] == 1 and status["threshold"] == version["threshold"]
    assert status["running_task"] is None and status["last_task"]["task_id"] == task["task_id"]
    current = await (await client.get(f"{API}/anomalies/detector/training/status", headers=key(api_key))).get_json()
    assert current["task_id"] == task["task_id"]


async def test_entries_are_scored_at_ingest_and_anomalies_reported(client, trained) -> None:
    api_key, agent = trained["api_key"], trained["agents"][0]
    normal = await _log(client, api_key, agent["id"], "search_files", MONDAY_10)
    odd = await _log(client, api_key, agent["id"], "delete_repository", MONDAY_10 + timedelta(seconds=9))
    scored = await wait_for_scored(client, api_key, [normal["id"], odd["id"]])
    assert scored[normal["id"]]["is_anomaly"] is False, scored
    assert scored[normal["id"]]["model_version"] == 1
    flagged = scored[odd["id"]]
    assert flagged["is_anomaly"] is True and flagged["score"] > scored[normal["id"]]["score"]
    assert flagged["type"] == "new_tool"
    assert "tool delete_repository never used by this agent" in flagged["reasons"]
    found: list[dict] = []

    async def reported() -> bool:  # the report follows the verdict (stored with the entry) within a second
        reports = await (await client.get(f"{API}/anomalies", headers=key(api_key))).get_json()
        found[:] = [r for r in reports["items"] if r["audit_log_id"] == odd["id"]]
        return bool(found)

    await wait_until(reported, within=5)
    (report,) = found
    assert report["source"] == "detector" and report["type"] == "new_tool" and report["model_version"] == 1
    assert report["severity"] in ("medium", "high", "critical") and report["occurred_at"] == odd["timestamp"]
    stats = await (
        await client.get(f"{API}/anomalies/stats?since=2026-05-01T00:00:00Z", headers=key(api_key))
    ).get_json()
    assert stats["by_type"].get("new_tool", 0) >= 1 and stats["by_day"].get("2026-05-25", 0) >= 1


async def test_policy_decision_carries_the_anomaly_and_cedar_sees_the_score(client, trained) -> None:
    api_key, agent = trained["api_key"], trained["agents"][0]
    body = {
        "name": "block anomalies",
        "cedar": '@id("block")\n@severity("high")\n@reason("anomalous")\n'
        "forbid (principal, action, resource) when { context has anomaly_score && context.anomaly_score >= 5000 };\n"
        '@id("allow")\npermit (principal, action, resource);',
    }
    response = await client.post(f"{API}/policies", json=body, headers=key(api_key))
    assert response.status_code == 201, await response.get_json()
    decisions = []
    for _ in range(40):  # the first check of the tenant starts its scorer; it loads the model within a second
        check = {"agent_id": agent["id"], "action": "wipe_all_backups", "resource": "prod"}
        decisions.append(
            await (await client.post(f"{API}/policies/check", json=check, headers=key(api_key))).get_json()
        )
        if decisions[-1]["anomaly"] is not None:
            break
        await trio.sleep(0.1)
    decision = decisions[-1]
    assert decision["anomaly"]["is_anomaly"] is True and decision["anomaly"]["model_version"] == 1
    assert decision["allowed"] is False and "anomalous" in decision["reason"]
    usual = {"agent_id": agent["id"], "action": "search_files", "resource": "res:search_files"}
    answer = await (await client.post(f"{API}/policies/check", json=usual, headers=key(api_key))).get_json()
    assert answer["anomaly"]["score"] < decision["anomaly"]["score"]


async def test_rollback_activates_an_older_version(client, trained) -> None:
    api_key = trained["api_key"]
    second = await train_and_wait(client, api_key, {"target_alert_rate": 0.05})
    assert second["version"] == 2
    response = await client.post(f"{API}/anomalies/detector/rollback/1", headers=key(api_key))
    assert response.status_code == 200 and (await response.get_json())["version"] == 1
    versions = await (await client.get(f"{API}/anomalies/detector/versions", headers=key(api_key))).get_json()
    assert [(v["version"], v["active"]) for v in versions["items"]] == [(2, False), (1, True)]
    status = await (await client.get(f"{API}/anomalies/detector/status", headers=key(api_key))).get_json()
    assert status["active_version"] == 1
    assert (await client.post(f"{API}/anomalies/detector/rollback/7", headers=key(api_key))).status_code == 404
    for bad in ("0", "x", "-1", "99999999999", "\u00b2", "\uff11", "\u0661"):  # ², a full-width 1, an Arabic-Indic 1
        response = await client.post(f"{API}/anomalies/detector/rollback/{bad}", headers=key(api_key))
        assert response.status_code == 422, bad


async def test_threshold_can_be_set_per_tenant(client, trained) -> None:
    api_key = trained["api_key"]
    response = await client.put(f"{API}/anomalies/detector/threshold", json={"threshold": 0.99}, headers=key(api_key))
    answer = await response.get_json()
    assert response.status_code == 200 and answer["threshold"] == 0.99 and answer["threshold_overridden"] is True
    response = await client.put(f"{API}/anomalies/detector/threshold", json={"threshold": 1.5}, headers=key(api_key))
    assert response.status_code == 422
    response = await client.put(f"{API}/anomalies/detector/threshold", json={"threshold": None}, headers=key(api_key))
    assert (await response.get_json())["threshold_overridden"] is False


async def test_manual_report(client, trained, other_tenant) -> None:
    api_key, agent = trained["api_key"], trained["agents"][1]
    entry = await _log(client, api_key, agent["id"], "read_file", MONDAY_10)
    body = {"agent_id": agent["id"], "audit_log_id": entry["id"], "description": "exfiltration", "severity": "high"}
    response = await client.post(f"{API}/anomalies/report", json=body, headers=key(api_key))
    report = await response.get_json()
    assert response.status_code == 201, report
    assert report["source"] == "manual" and report["severity"] == "high" and report["occurred_at"] == entry["timestamp"]
    listed = await (await client.get(f"{API}/anomalies?severity=high&type=manual", headers=key(api_key))).get_json()
    assert [r["id"] for r in listed["items"]] == [report["id"]]
    # another tenant's agent or entry is not found; the other tenant sees none of these reports
    other_agent = await register(client, other_tenant["api_key"], "theirs")
    for bad in (
        {**body, "agent_id": other_agent["id"]},
        {**body, "audit_log_id": "00000000-0000-4000-8000-000000000000"},
    ):
        assert (await client.post(f"{API}/anomalies/report", json=bad, headers=key(api_key))).status_code == 404
    theirs = await (await client.get(f"{API}/anomalies", headers=key(other_tenant["api_key"]))).get_json()
    assert theirs["total"] == 0
    response = await client.post(
        f"{API}/anomalies/report", json={**body, "audit_log_id": entry["id"]}, headers=key(other_tenant["api_key"])
    )
    assert response.status_code == 404


async def _log(client, api_key: str, agent_id: str, action: str, at: datetime) -> dict[str, Any]:
    body = {"agent_id": agent_id, "action": action, "resource": f"res:{action}", "timestamp": at.isoformat()}
    response = await client.post(f"{API}/audit/log", json=body, headers=key(api_key))
    assert response.status_code == 201, await response.get_json()
    return await response.get_json()


async def test_once_the_model_is_loaded_the_verdict_is_stored_with_the_entry(client, trained) -> None:
    """The first entries after training may be scored just after their commit; from then on each entry is
    judged before its insert, so the 201 itself carries the verdict, in order within the agent's session."""
    api_key, agent = trained["api_key"], trained["agents"][0]
    first = await _log(client, api_key, agent["id"], "search_files", MONDAY_10)
    await wait_for_scored(client, api_key, [first["id"]])
    at = MONDAY_10 + timedelta(seconds=9)
    session = [await _log(client, api_key, agent["id"], "read_file", at)]
    session.append(await _log(client, api_key, agent["id"], "delete_repository", at + timedelta(seconds=8)))
    normal, odd = session
    assert normal["anomaly"] is not None and normal["anomaly"]["model_version"] == 1
    assert normal["anomaly"]["is_anomaly"] is False
    assert odd["anomaly"]["is_anomaly"] is True and odd["anomaly"]["type"] == "new_tool"
    stored = await (await client.get(f"{API}/audit/{odd['id']}", headers=key(api_key))).get_json()
    assert stored["anomaly"] == odd["anomaly"]
