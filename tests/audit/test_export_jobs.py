"""Export jobs on SQLite and PostgreSQL: written in the background, downloaded with the same content and a
verifiable manifest; 409 before the file is ready, 410 once expired, 404 for another tenant's job; a job left
running by a stopped process is reported failed after restart."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentgov.cli import main
from agentgov.storage.exports import ExportJobRepo
from tests.audit.conftest import key_headers, log_entry, register_agent
from tests.support.app import ADMIN_KEY, app_for, settings_for
from tests.support.polling import wait_until

API = "/api/v1"


@pytest.fixture
async def logged(client, tenant) -> list[dict[str, Any]]:
    agent = await register_agent(client, tenant["api_key"])
    return [
        await log_entry(client, tenant["api_key"], agent["id"], action="pay" if n % 2 else "read", resource=f"r{n}")
        for n in range(8)
    ]


async def start(client: Any, api_key: str, body: dict[str, Any]) -> dict[str, Any]:
    response = await client.post(f"{API}/audit/export/async", json=body, headers=key_headers(api_key))
    accepted = await response.get_json()
    assert response.status_code == 202, accepted
    assert response.headers["Location"] == accepted["status_url"]
    return accepted


async def finished(client: Any, api_key: str, job: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = {}

    async def done() -> bool:
        found.update(await (await client.get(job["status_url"], headers=key_headers(api_key))).get_json())
        return found["status"] not in ("queued", "running")

    await wait_until(done, within=30)
    return found


async def test_a_job_writes_the_same_file_as_the_stream(client, tenant, logged, tmp_path) -> None:
    api_key = tenant["api_key"]
    job = await start(client, api_key, {"format": "jsonl", "action": "pay"})
    assert job["status"] == "queued" and job["filters"] == {"action": "pay"} and job["row_count"] is None
    status = await finished(client, api_key, job)
    assert status["status"] == "succeeded", status
    assert status["row_count"] == 4 and status["rows_written"] == 4 and status["expires_at"] > status["finished_at"]
    response = await client.get(job["download_url"], headers=key_headers(api_key))
    data = await response.get_data()
    assert response.status_code == 200 and response.headers["X-Export-Id"] == job["job_id"]
    assert len(data) == status["size"] and int(response.headers["Content-Length"]) == status["size"]
    streamed = await (
        await client.get(f"{API}/audit/export?format=jsonl&action=pay", headers=key_headers(api_key))
    ).get_data()
    assert data == streamed  # the same rows, the same bytes
    assert [json.loads(line)["resource"] for line in data.decode().splitlines()] == ["r1", "r3", "r5", "r7"]
    manifest = await (await client.get(job["manifest_url"], headers=key_headers(api_key))).get_json()
    public = await (await client.get(f"{API}/audit/export/public-key")).get_json()
    assert manifest["sha256"] == status["sha256"] and manifest["rows"] == 4
    (tmp_path / "f").write_bytes(data)
    (tmp_path / "m").write_text(json.dumps(manifest))
    (tmp_path / "k").write_text(public["public_key_pem"])
    assert (
        main(
            [
                "verify-export",
                str(tmp_path / "f"),
                "--manifest",
                str(tmp_path / "m"),
                "--public-key",
                str(tmp_path / "k"),
            ]
        )
        == 0
    )


async def test_not_ready_expired_and_foreign_jobs(app, client, tenant, other_tenant, logged) -> None:
    api_key, svc = tenant["api_key"], app.extensions["agentgov"]
    repo = ExportJobRepo(svc.db)
    waiting = await repo.create(tenant["id"], fmt="csv", filters={}, requested_by="test", owner=svc.instance_id)
    response = await client.get(f"{API}/audit/export/download/{waiting.id}", headers=key_headers(api_key))
    assert response.status_code == 409 and "is queued" in (await response.get_json())["detail"]

    job = await start(client, api_key, {"format": "csv"})
    assert (await finished(client, api_key, job))["status"] == "succeeded"
    for url in (job["status_url"], job["download_url"], job["manifest_url"]):
        response = await client.get(url, headers=key_headers(other_tenant["api_key"]))
        assert response.status_code == 404, url
    await svc.db.write(
        lambda c: c.execute(
            "UPDATE export_jobs SET expires_at = '2000-01-01T00:00:00.000000Z' WHERE id = :id", {"id": job["job_id"]}
        )
    )
    expired = await repo.expire_due()
    assert [j.id for j in expired] == [job["job_id"]]
    response = await client.get(job["download_url"], headers=key_headers(api_key))
    assert response.status_code == 410 and "expired" in (await response.get_json())["detail"]
    assert (await (await client.get(job["status_url"], headers=key_headers(api_key))).get_json())["status"] == "expired"


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"format": "xml"},
        {"format": "csv", "since": "yesterday"},
        {"format": "csv", "colour": "red"},
        {"format": "csv", "since": "2026-05-03T00:00:00Z", "until": "2026-05-02T00:00:00Z"},
    ],
)
async def test_bad_job_requests_are_422(client, tenant, body: dict) -> None:
    response = await client.post(f"{API}/audit/export/async", json=body, headers=key_headers(tenant["api_key"]))
    assert response.status_code == 422, await response.get_json()


async def test_roles_and_bad_ids(client, tenant, role_keys) -> None:
    response = await client.post(
        f"{API}/audit/export/async", json={"format": "csv"}, headers=key_headers(role_keys["Developer"])
    )
    assert response.status_code == 403
    assert (await client.post(f"{API}/audit/export/async", json={"format": "csv"})).status_code == 401
    for path in ("status", "download"):
        bad = await client.get(f"{API}/audit/export/{path}/nope", headers=key_headers(tenant["api_key"]))
        assert bad.status_code == 422
        unknown = f"{API}/audit/export/{path}/00000000-0000-4000-8000-000000000000"
        assert (await client.get(unknown, headers=key_headers(tenant["api_key"]))).status_code == 404


async def test_a_job_of_a_stopped_process_is_failed_after_restart(database_url: str, tmp_path: Path) -> None:
    settings = settings_for(database_url, data_dir=tmp_path)
    async with app_for(settings) as first, first.test_app():
        client = first.test_client()
        tenant = await (
            await client.post(f"{API}/tenants", json={"name": "Acme"}, headers={"X-Admin-Key": ADMIN_KEY})
        ).get_json()
        svc = first.extensions["agentgov"]
        repo = ExportJobRepo(svc.db)
        job = await repo.create(tenant["id"], fmt="csv", filters={}, requested_by="test", owner=svc.instance_id)
        await repo.start(job.id)  # running when its process goes away
        await svc.db.write(
            lambda c: c.execute(
                "UPDATE export_jobs SET heartbeat_at = '2000-01-01T00:00:00.000000Z' WHERE id = :id", {"id": job.id}
            )
        )
    async with app_for(settings) as second, second.test_app():
        client = second.test_client()
        status = await (
            await client.get(f"{API}/audit/export/status/{job.id}", headers=key_headers(tenant["api_key"]))
        ).get_json()
    assert status["status"] == "failed" and "stopped before it finished" in status["error"]
