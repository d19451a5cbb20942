"""Who may do what on the /anomalies routes, and what another tenant can reach."""

from __future__ import annotations

import pytest

from tests.anomalies.helpers import API, key

READ = [
    ("GET", "/anomalies"),
    ("GET", "/anomalies/stats"),
    ("GET", "/anomalies/detector/status"),
    ("GET", "/anomalies/detector/metrics"),
    ("GET", "/anomalies/detector/versions"),
    ("GET", "/anomalies/detector/training/status"),
    ("GET", "/anomalies/detector/training-status/00000000-0000-4000-8000-000000000000"),
]
MANAGE = [
    ("POST", "/anomalies/detector/train"),
    ("POST", "/anomalies/detector/rollback/1"),
    ("DELETE", "/anomalies/detector/cancel"),
    ("PUT", "/anomalies/detector/threshold"),
]
REPORT = [("POST", "/anomalies/report")]


async def call(client, method: str, path: str, api_key: str | None):
    headers = {} if api_key is None else key(api_key)
    body = {"threshold": 0.5} if path.endswith("threshold") else {}
    return await client.open(f"{API}{path}", method=method, json=body, headers=headers)


@pytest.mark.parametrize(("method", "path"), READ + MANAGE + REPORT)
async def test_without_credentials_is_401(client, method: str, path: str) -> None:
    response = await call(client, method, path, None)
    assert response.status_code == 401 and (await response.get_json())["detail"]


@pytest.mark.parametrize(("method", "path"), READ + MANAGE)
async def test_developer_may_not_read_or_manage_the_detector(client, role_keys, method: str, path: str) -> None:
    response = await call(client, method, path, role_keys["Developer"])
    assert response.status_code == 403, await response.get_json()


@pytest.mark.parametrize(("method", "path"), MANAGE)
async def test_security_analyst_may_read_but_not_manage(client, role_keys, method: str, path: str) -> None:
    response = await call(client, method, path, role_keys["Security Analyst"])
    assert response.status_code == 403, await response.get_json()


@pytest.mark.parametrize(("method", "path"), READ)
async def test_security_analyst_reads(client, role_keys, method: str, path: str) -> None:
    response = await call(client, method, path, role_keys["Security Analyst"])
    assert response.status_code in (200, 404), await response.get_json()  # 404: no task of that id / none yet
    if response.status_code == 404:
        assert "training" in path


async def test_developer_may_report_an_anomaly(client, role_keys, tenant) -> None:
    response = await client.post(
        f"{API}/agents/register", json={"name": "bot", "type": "tool"}, headers=key(tenant["api_key"])
    )
    agent_id = (await response.get_json())["id"]
    body = {"agent_id": agent_id, "description": "strange late-night export"}
    response = await client.post(f"{API}/anomalies/report", json=body, headers=key(role_keys["Developer"]))
    report = await response.get_json()
    assert response.status_code == 201 and report["severity"] == "medium" and report["type"] == "manual"
    listed = await client.get(f"{API}/anomalies", headers=key(role_keys["Developer"]))
    assert listed.status_code == 403  # reporting is not reading


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("severity=extreme", "severity"),
        ("since=yesterday", "since"),
        ("until=2026-01-01T00:00:00", "until"),
        ("limit=0", "limit"),
        ("agent_id=nope", "agent_id"),
        ("skip=-1", "skip"),
    ],
)
async def test_bad_list_queries_are_422(client, tenant, query: str, field: str) -> None:
    response = await client.get(f"{API}/anomalies?{query}", headers=key(tenant["api_key"]))
    answer = await response.get_json()
    assert response.status_code == 422 and field in [e["field"] for e in answer["errors"]], answer


@pytest.mark.parametrize(
    "body",
    [
        {"description": "x"},
        {"agent_id": "nope", "description": "x"},
        {"agent_id": "00000000-0000-4000-8000-000000000000", "description": ""},
        {"agent_id": "00000000-0000-4000-8000-000000000000", "description": "x", "severity": "urgent"},
        {"agent_id": "00000000-0000-4000-8000-000000000000", "description": "x", "score": 1},
    ],
)
async def test_bad_reports_are_422(client, tenant, body) -> None:
    response = await client.post(f"{API}/anomalies/report", json=body, headers=key(tenant["api_key"]))
    assert response.status_code == 422, await response.get_json()


async def test_stats_window_must_be_ordered(client, tenant) -> None:
    query = "since=2026-05-02T00:00:00Z&until=2026-05-01T00:00:00Z"
    response = await client.get(f"{API}/anomalies/stats?{query}", headers=key(tenant["api_key"]))
    assert response.status_code == 422
