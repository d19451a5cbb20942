"""Discovery clustering jobs across processes (`agentgov.storage.discovery`), on both backends: a job whose
process stopped heartbeating is failed, a live one is not; with SQLite every live job of another process is
failed at once; a merge or job update fenced by a lease token that is no longer current writes nothing."""

from __future__ import annotations

from datetime import timedelta

import pytest

from agentgov.actors.discovery import prepare
from agentgov.storage.database import Connection, Database
from agentgov.storage.discovery import ORPHANED_JOB, DiscoveryRepo
from agentgov.storage.leases import LeaseLost, LeaseRepo
from agentgov.timeutil import now, to_iso
from tests.storage.test_repository_contract import UNKNOWN_EVENTS, tenants


def _age(job_id: str, seconds: float):
    def run(conn: Connection) -> None:
        conn.execute(
            "UPDATE discovery_jobs SET heartbeat_at = :at WHERE id = :id",
            {"at": to_iso(now() - timedelta(seconds=seconds)), "id": job_id},
        )

    return run


async def test_jobs_of_a_stopped_process_are_failed_and_live_ones_kept(db: Database) -> None:
    acme, other = await tenants(db)
    repo = DiscoveryRepo(db)
    dead_running = await repo.create_job(acme, "cluster", {}, owner="dead")
    assert await repo.update_job(acme, dead_running.id, status="running")
    dead_queued = await repo.create_job(other, "cluster", {}, owner="dead")
    alive = await repo.create_job(acme, "cluster", {}, owner="alive")
    for job in (dead_running, dead_queued, alive):
        await db.write(_age(job.id, 60))
    await repo.heartbeat_jobs([alive.id])  # its process is still running it

    assert await repo.fail_orphaned_jobs(lease_seconds=15) == 2
    for tenant, job in ((acme, dead_running), (other, dead_queued)):
        failed = await repo.get_job(tenant, job.id)
        assert failed is not None and failed.status == "failed" and failed.error == ORPHANED_JOB
        assert failed.finished_at is not None
    kept = await repo.get_job(acme, alive.id)
    assert kept is not None and kept.status == "queued"
    assert not await repo.update_job(acme, dead_running.id, status="succeeded", result={})  # too late

    # one process owns an SQLite database: at its start every live job of another owner is failed at once
    assert await repo.fail_orphaned_jobs(lease_seconds=0, owner="restarted") == 1
    assert (await repo.get_job(acme, alive.id)).status == "failed"  # type: ignore[union-attr]
    mine = await repo.create_job(acme, "cluster", {}, owner="restarted")
    assert await repo.fail_orphaned_jobs(lease_seconds=0, owner="restarted") == 0
    assert (await repo.get_job(acme, mine.id)).status == "queued"  # type: ignore[union-attr]


async def test_writes_fenced_by_a_lost_lease_change_nothing(db: Database) -> None:
    acme, _ = await tenants(db)
    repo, leases = DiscoveryRepo(db), LeaseRepo(db)
    results = await repo.ingest(acme, [prepare(e) for e in UNKNOWN_EVENTS])
    target, source = (r.candidate_id for r in results)
    assert target and source
    job = await repo.create_job(acme, "cluster", {}, owner="a")
    token = await leases.acquire("discovery-clustering:t", "a", 15)
    assert token == 1
    await leases.release("discovery-clustering:t", "a")
    assert await leases.acquire("discovery-clustering:t", "b", 15) == 2  # b took over

    stale = ("discovery-clustering:t", 1)
    with pytest.raises(LeaseLost):
        await repo.merge(acme, target, [source], lease=stale)
    with pytest.raises(LeaseLost):
        await repo.update_job(acme, job.id, status="running", lease=stale)
    assert (await repo.get(acme, source)).status == "pending"  # type: ignore[union-attr]
    assert (await repo.get_job(acme, job.id)).status == "queued"  # type: ignore[union-attr]

    current = ("discovery-clustering:t", 2)
    assert await repo.merge(acme, target, [source], lease=current) == [source]
    assert (await repo.get(acme, source)).status == "merged"  # type: ignore[union-attr]
