"""Clustering jobs when several processes share the database, with a real app on both backends: a job waits
`queued` while another process's job holds the tenant's clustering lease and runs once it is released; a job
whose process died (its heartbeat stopped) is failed by the `orphaned-jobs` duty."""

from __future__ import annotations

from datetime import timedelta

import trio

from agentgov.actors.discovery import clustering_lease
from agentgov.duties import RunDuties, duties
from agentgov.storage.discovery import ORPHANED_JOB, DiscoveryRepo
from agentgov.storage.leases import LeaseRepo
from agentgov.timeutil import now, to_iso
from tests.support.app import ADMIN_KEY, app_for, settings_for
from tests.support.polling import wait_until

EVENTS = [
    {"source": "proxy", "host": f"build-{i}", "process": "python report.py", "endpoint": "api.openai.com"}
    for i in range(4)
]


async def test_a_job_waits_for_the_other_process_and_orphans_are_failed(database_url: str) -> None:
    async with app_for(settings_for(database_url, lease_seconds=0.6)) as app:
        svc = app.extensions["agentgov"]
        client = app.test_client()
        tenant = await (
            await client.post("/api/v1/tenants", json={"name": "Acme"}, headers={"X-Admin-Key": ADMIN_KEY})
        ).get_json()
        key = {"X-API-Key": tenant["api_key"]}
        assert (
            await client.post("/api/v1/discovery/ingest/batch", json={"events": EVENTS}, headers=key)
        ).status_code == 200
        leases, repo = LeaseRepo(svc.db), DiscoveryRepo(svc.db)
        lease = clustering_lease(tenant["id"])
        assert await leases.acquire(lease, "another-process", 3600) == 1  # its job is running

        accepted = await client.post("/api/v1/discovery/cluster", headers=key)
        assert accepted.status_code == 202
        job = await accepted.get_json()

        async def status() -> str:
            return (await (await client.get(job["status_url"], headers=key)).get_json())["status"]

        for _ in range(4):  # several lease periods: still waiting, and its heartbeat shows it is not orphaned
            await trio.sleep(0.4)
            assert await status() == "queued"
            await duties(svc).ask(RunDuties())
        assert await status() == "queued"

        await leases.release(lease, "another-process")  # the other job finished
        await wait_until(lambda: _is(status, "succeeded"), within=30, every=0.1)
        holder = await leases.holder(lease)
        assert holder is not None and holder[0] == svc.instance_id and holder[1] == 2  # taken over, new token

        # A job of a process that died: its heartbeat stopped a while ago.
        orphan = await repo.create_job(tenant["id"], "cluster", {}, owner="a-process-that-died")
        stale = to_iso(now() - timedelta(seconds=5))
        await svc.db.write(
            lambda conn: conn.execute(
                "UPDATE discovery_jobs SET heartbeat_at = :at WHERE id = :id", {"at": stale, "id": orphan.id}
            )
        )
        await duties(svc).ask(RunDuties())
        failed = await (await client.get(f"/api/v1/discovery/jobs/{orphan.id}", headers=key)).get_json()
        assert failed["status"] == "failed" and failed["error"] == ORPHANED_JOB


async def _is(status, wanted: str) -> bool:
    return await status() == wanted
