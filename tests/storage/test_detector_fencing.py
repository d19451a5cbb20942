"""A training whose task was failed as orphaned (its process stalled past the lease) cannot store its model
afterwards, on both backends: the task row fences the version, as a lease token fences a duty's writes."""

from __future__ import annotations

import pytest

from agentgov.storage.database import Database
from agentgov.storage.detectors import DetectorRepo, NewVersion, StateChanged, TaskNotLive
from tests.storage.test_repository_contract import tenants


def _version(task_id: str) -> NewVersion:
    return NewVersion(
        task_id=task_id,
        trained_by="key:x",
        window_start=None,
        window_end=None,
        rows=10,
        params={},
        metrics={},
        threshold=0.5,
        model="{}",
    )


async def test_a_version_of_a_task_no_longer_live_is_refused(db: Database) -> None:
    acme, _ = await tenants(db)
    repo = DetectorRepo(db, "anomaly")
    stalled = await repo.create_task(acme, requested_by="key:x", trigger="manual", params={}, owner="stalled")
    await repo.progress(acme, stalled.id, phase="fitting", progress=0.2)
    assert await repo.fail_orphaned_tasks(lease_seconds=0, owner="another-process") == 1
    successor = await repo.create_task(acme, requested_by="key:x", trigger="manual", params={}, owner="other")
    stored = await repo.add_version(acme, _version(successor.id), keep=5)
    assert stored.version == 1

    with pytest.raises(TaskNotLive):
        await repo.add_version(acme, _version(stalled.id), keep=5)  # the stalled process finishes late
    versions, total = await repo.versions(acme, limit=10, offset=0)
    assert total == 1 and versions[0].task_id == successor.id
    assert (await repo.state(acme)).active_version == 1


async def test_an_automatic_training_decided_on_an_old_state_is_not_started(db: Database) -> None:
    acme, _ = await tenants(db)
    repo = DetectorRepo(db, "anomaly")
    seen = await repo.state(acme)  # this process decides to train automatically...
    auto: dict = {"requested_by": "system:auto-train", "trigger": "automatic", "params": {}}
    other = await repo.create_task(acme, owner="b", **auto)
    await repo.add_version(acme, _version(other.id), keep=5)  # ...while another process's training ends
    assert await repo.finish(acme, other.id, "succeeded", version=1)

    with pytest.raises(StateChanged):
        await repo.create_task(acme, owner="a", if_generation=seen.generation, **auto)
    assert await repo.live_task(acme) is None
    fresh = await repo.state(acme)
    task = await repo.create_task(acme, owner="a", if_generation=fresh.generation, **auto)
    assert task.status == "queued"
