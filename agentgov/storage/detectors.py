"""Detector training tasks and model versions (tables `detector_tasks`, `detector_versions`, `detector_state`,
m0008), shared by every detector (`anomaly`, `guard`).

Tasks. States `queued` -> `running` -> `succeeded` | `failed` | `cancelled`; the three outcomes are final and
every transition out of a live state is conditional (`WHERE status IN ('queued', 'running')`). A partial
unique index allows one live task per tenant and detector, whichever process created it: `create_task` raises
`TrainingInProgress` naming the live task. The process running a task refreshes its `heartbeat_at`; a live
task whose heartbeat is older than the lease (its process died) is failed by `fail_orphaned_tasks`, which every
process runs at start and periodically, so no task stays `running` forever.

Versions. Every successful training adds an immutable version (1, 2, 3, ... per tenant and detector) holding
the model as JSON text (never a pickle) with its parameters, metrics and threshold. `detector_state` names the
active version and carries a `generation` that moves on every change, which every process polls to serve the
active version within about a second. Retention keeps the newest `keep` versions and always the active one.
"""

from __future__ import annotations

import dataclasses
import json
import uuid
from typing import Any

from agentgov.storage.database import Connection, Database, IntegrityError, Row
from agentgov.storage.orphans import orphaned
from agentgov.timeutil import now_iso

QUEUED = "queued"
RUNNING = "running"
SUCCEEDED = "succeeded"
FAILED = "failed"
CANCELLED = "cancelled"
LIVE = (QUEUED, RUNNING)
TASK_STATUSES = (QUEUED, RUNNING, SUCCEEDED, FAILED, CANCELLED)
ORPHANED = "the process running this training stopped before it finished"


class TaskNotLive(Exception):
    """The task a version was trained by is no longer live (it was failed as orphaned while its process
    stalled, and another training may have run since): its version must not be stored."""


class StateChanged(Exception):
    """The detector's state moved on (a version was stored, a rollback, a threshold) since the caller read it:
    a decision taken on the old state (to train automatically) no longer holds."""


class TrainingInProgress(Exception):
    """A task of this tenant and detector is already queued or running (`task` is it)."""

    def __init__(self, task: TrainingTask) -> None:
        super().__init__(f"training task {task.id} is already {task.status}")
        self.task = task


class VersionNotFound(LookupError):
    """No stored version of that number for this tenant and detector."""


@dataclasses.dataclass(frozen=True)
class TrainingTask:
    id: str
    tenant_id: str
    detector: str
    status: str
    phase: str
    progress: float
    params: dict[str, Any]
    requested_by: str
    trigger: str
    version: int | None
    error: str | None
    created_at: str
    started_at: str | None
    finished_at: str | None

    @classmethod
    def from_row(cls, row: Row) -> TrainingTask:
        return cls(
            id=row["id"],
            tenant_id=row["tenant_id"],
            detector=row["detector"],
            status=row["status"],
            phase=row["phase"],
            progress=float(row["progress"]),
            params=json.loads(row["params"]),
            requested_by=row["requested_by"],
            trigger=row["trigger"],
            version=None if row["version"] is None else int(row["version"]),
            error=row["error"],
            created_at=row["created_at"],
            started_at=row["started_at"],
            finished_at=row["finished_at"],
        )

    @property
    def live(self) -> bool:
        return self.status in LIVE

    def to_public(self) -> dict[str, Any]:
        return {
            "task_id": self.id,
            "detector": self.detector,
            "status": self.status,
            "phase": self.phase,
            "progress": round(self.progress, 4),
            "params": self.params,
            "requested_by": self.requested_by,
            "trigger": self.trigger,
            "version": self.version,
            "error": self.error,
            "created_at": self.created_at,
            "started_at": self.started_at,
            "finished_at": self.finished_at,
        }


@dataclasses.dataclass(frozen=True)
class NewVersion:
    """What a successful training stores (the version number is assigned on insert)."""

    task_id: str | None
    trained_by: str
    window_start: str | None
    window_end: str | None
    rows: int
    params: dict[str, Any]
    metrics: dict[str, Any]
    threshold: float
    model: str  # the model document as JSON text


@dataclasses.dataclass(frozen=True)
class ModelVersion:
    """A stored version; `model` is None when it was listed without its document."""

    tenant_id: str
    detector: str
    version: int
    task_id: str | None
    trained_by: str
    created_at: str
    window_start: str | None
    window_end: str | None
    rows: int
    params: dict[str, Any]
    metrics: dict[str, Any]
    threshold: float
    model: str | None = None

    @classmethod
    def from_row(cls, row: Row) -> ModelVersion:
        return cls(
            tenant_id=row["tenant_id"],
            detector=row["detector"],
            version=int(row["version"]),
            task_id=row["task_id"],
            trained_by=row["trained_by"],
            created_at=row["created_at"],
            window_start=row["window_start"],
            window_end=row["window_end"],
            rows=int(row["rows"]),
            params=json.loads(row["params"]),
            metrics=json.loads(row["metrics"]),
            threshold=float(row["threshold"]),
            model=row.get("model"),
        )

    def to_public(self, *, active: bool) -> dict[str, Any]:
        return {
            "version": self.version,
            "active": active,
            "created_at": self.created_at,
            "trained_by": self.trained_by,
            "task_id": self.task_id,
            "training_window": {"start": self.window_start, "end": self.window_end},
            "rows": self.rows,
            "params": self.params,
            "metrics": self.metrics,
            "threshold": self.threshold,
        }


@dataclasses.dataclass(frozen=True)
class DetectorState:
    """The active version (None before any, or after the kind's default was restored), a per-tenant threshold
    override, the change generation, and `updated_at`: when the state last changed, which is when the model in
    use became active (trained, rolled back to, or restored), or its threshold was overridden."""

    active_version: int | None
    threshold: float | None
    generation: int
    updated_at: str | None


_NO_STATE = DetectorState(active_version=None, threshold=None, generation=0, updated_at=None)
_VERSION_COLUMNS = (
    "tenant_id, detector, version, task_id, trained_by, created_at, window_start, window_end, rows, params, "
    "metrics, threshold"
)


def _state(conn: Connection, tenant_id: str, detector: str) -> DetectorState:
    row = conn.fetchone(
        "SELECT * FROM detector_state WHERE tenant_id = :t AND detector = :d", {"t": tenant_id, "d": detector}
    )
    if row is None:
        return _NO_STATE
    return DetectorState(
        active_version=None if row["active_version"] is None else int(row["active_version"]),
        threshold=None if row["threshold"] is None else float(row["threshold"]),
        generation=int(row["generation"]),
        updated_at=row["updated_at"],
    )


def _set_state(conn: Connection, tenant_id: str, detector: str, **changes: Any) -> DetectorState:
    """Apply `changes` (active_version, threshold) and move the generation on."""
    current = _state(conn, tenant_id, detector)
    merged = dataclasses.replace(current, **changes, generation=current.generation + 1, updated_at=now_iso())
    params = {
        "t": tenant_id,
        "d": detector,
        "v": merged.active_version,
        "th": merged.threshold,
        "g": merged.generation,
        "at": merged.updated_at,
    }
    if current.updated_at is None:
        conn.execute(
            """INSERT INTO detector_state (tenant_id, detector, active_version, threshold, generation, updated_at)
               VALUES (:t, :d, :v, :th, :g, :at)""",
            params,
        )
    else:
        conn.execute(
            """UPDATE detector_state SET active_version = :v, threshold = :th, generation = :g, updated_at = :at
               WHERE tenant_id = :t AND detector = :d""",
            params,
        )
    return merged


def _make_active(conn: Connection, tenant_id: str, detector: str, version: int | None) -> DetectorState:
    """Make `version` (None: the kind's default) active without a threshold override; when it already is,
    nothing changes, so `updated_at` keeps telling when it became active."""
    current = _state(conn, tenant_id, detector)
    if current.active_version == version and current.threshold is None:
        return current
    return _set_state(conn, tenant_id, detector, active_version=version, threshold=None)


class DetectorRepo:
    """Tasks, versions and state of one detector kind (`detector`), every call scoped to a tenant."""

    def __init__(self, db: Database, detector: str) -> None:
        self.db = db
        self.detector = detector

    # ---------------------------------------------------------------------------------------------- tasks

    async def create_task(
        self,
        tenant_id: str,
        *,
        requested_by: str,
        trigger: str,
        params: dict[str, Any],
        owner: str,
        if_generation: int | None = None,
    ) -> TrainingTask:
        """A new `queued` task. Raises `TrainingInProgress` when a live one exists (in any process) and, with
        `if_generation`, `StateChanged` when the state's generation is no longer that one (checked in the same
        transaction: an automatic training decided on a state another process's training just changed is not
        started twice)."""
        stamp = now_iso()
        row = {
            "id": str(uuid.uuid4()),
            "tenant_id": tenant_id,
            "detector": self.detector,
            "status": QUEUED,
            "phase": "queued",
            "progress": 0.0,
            "params": json.dumps(params, sort_keys=True),
            "requested_by": requested_by,
            "trigger": trigger,
            "version": None,
            "error": None,
            "owner": owner,
            "heartbeat_at": stamp,
            "created_at": stamp,
            "started_at": None,
            "finished_at": None,
        }

        def run(conn: Connection) -> None:
            if if_generation is not None and _state(conn, tenant_id, self.detector).generation != if_generation:
                raise StateChanged(f"the {self.detector} detector's state changed since it was read")
            conn.insert_rows("detector_tasks", [row])

        for _ in range(3):
            try:
                await self.db.write(run)
                return TrainingTask.from_row(row)
            except IntegrityError:
                live = await self.live_task(tenant_id)
                if live is not None:
                    raise TrainingInProgress(live) from None
                # the live task ended between the insert and the read: try again
        raise TrainingInProgress(await self._latest_or_fail(tenant_id))

    async def _latest_or_fail(self, tenant_id: str) -> TrainingTask:
        task = await self.latest_task(tenant_id)
        if task is None:
            raise RuntimeError("training tasks keep conflicting but none is stored")
        return task

    async def progress(self, tenant_id: str, task_id: str, *, phase: str, progress: float) -> None:
        """Mark the task `running` in `phase` (also its heartbeat)."""
        stamp = now_iso()
        await self.db.write(
            lambda conn: conn.execute(
                """UPDATE detector_tasks SET status = 'running', phase = :phase, progress = :p, heartbeat_at = :at,
                       started_at = COALESCE(started_at, :at)
                   WHERE tenant_id = :t AND id = :id AND status IN ('queued', 'running')""",
                {"phase": phase, "p": progress, "at": stamp, "t": tenant_id, "id": task_id},
            )
        )

    async def heartbeat_task(self, tenant_id: str, task_id: str) -> None:
        """Refresh the heartbeat of a live task (its process is alive and running it)."""
        await self.db.write(
            lambda conn: conn.execute(
                """UPDATE detector_tasks SET heartbeat_at = :at
                   WHERE tenant_id = :t AND id = :id AND status IN ('queued', 'running')""",
                {"at": now_iso(), "t": tenant_id, "id": task_id},
            )
        )

    async def finish(
        self, tenant_id: str, task_id: str, status: str, *, error: str | None = None, version: int | None = None
    ) -> bool:
        """End a live task as `status` (`succeeded`, `failed` or `cancelled`); False if it was not live."""
        stamp = now_iso()
        changed = await self.db.write(
            lambda conn: conn.execute(
                """UPDATE detector_tasks SET status = :s, error = :e, version = :v, finished_at = :at,
                       heartbeat_at = :at, progress = CASE WHEN :s = 'succeeded' THEN 1.0 ELSE progress END,
                       phase = :s
                   WHERE tenant_id = :t AND id = :id AND status IN ('queued', 'running')""",
                {"s": status, "e": error, "v": version, "at": stamp, "t": tenant_id, "id": task_id},
            )
        )
        return changed > 0

    async def get_task(self, tenant_id: str, task_id: str) -> TrainingTask | None:
        row = await self.db.read(
            lambda conn: conn.fetchone(
                "SELECT * FROM detector_tasks WHERE tenant_id = :t AND detector = :d AND id = :id",
                {"t": tenant_id, "d": self.detector, "id": task_id},
            )
        )
        return None if row is None else TrainingTask.from_row(row)

    async def find_task(self, task_id: str) -> TrainingTask | None:
        """A task by id alone, for the unauthenticated progress route (the id is the capability)."""
        row = await self.db.read(
            lambda conn: conn.fetchone(
                "SELECT * FROM detector_tasks WHERE detector = :d AND id = :id", {"d": self.detector, "id": task_id}
            )
        )
        return None if row is None else TrainingTask.from_row(row)

    async def live_task(self, tenant_id: str) -> TrainingTask | None:
        row = await self.db.read(
            lambda conn: conn.fetchone(
                """SELECT * FROM detector_tasks WHERE tenant_id = :t AND detector = :d
                   AND status IN ('queued', 'running')""",
                {"t": tenant_id, "d": self.detector},
            )
        )
        return None if row is None else TrainingTask.from_row(row)

    async def latest_task(self, tenant_id: str) -> TrainingTask | None:
        """The live task, else the most recent one."""
        row = await self.db.read(
            lambda conn: conn.fetchone(
                """SELECT * FROM detector_tasks WHERE tenant_id = :t AND detector = :d
                   ORDER BY CASE WHEN status IN ('queued', 'running') THEN 0 ELSE 1 END, created_at DESC, id DESC
                   LIMIT 1""",
                {"t": tenant_id, "d": self.detector},
            )
        )
        return None if row is None else TrainingTask.from_row(row)

    async def fail_orphaned_tasks(self, *, lease_seconds: float, owner: str | None = None) -> int:
        """Fail the live tasks whose process is gone (`agentgov.storage.orphans.orphaned`: heartbeat older than
        `lease_seconds`, or with `owner`, a single-process deployment, every live task not owned by it).
        Returns how many were failed."""
        condition, params = orphaned(lease_seconds=lease_seconds, owner=owner)
        return int(
            await self.db.write(
                lambda conn: conn.execute(
                    f"""UPDATE detector_tasks SET status = 'failed', phase = 'failed', error = :e, finished_at = :at
                        WHERE detector = :d AND status IN ('queued', 'running') AND {condition}""",
                    {**params, "e": ORPHANED, "at": now_iso(), "d": self.detector},
                )
            )
        )

    # ------------------------------------------------------------------------------------------- versions

    async def add_version(self, tenant_id: str, new: NewVersion, *, keep: int) -> ModelVersion:
        """Store `new` as the next version, make it active and apply retention (the newest `keep` versions and
        the active one stay), in one transaction. Fenced by its task: raises `TaskNotLive`, storing nothing, when
        `new.task_id` is no longer queued or running (the task row stays locked until the version is stored)."""
        detector = self.detector

        def run(conn: Connection) -> ModelVersion:
            if new.task_id is not None and (
                conn.execute(
                    """UPDATE detector_tasks SET heartbeat_at = :at
                       WHERE tenant_id = :t AND id = :id AND status IN ('queued', 'running')""",
                    {"at": now_iso(), "t": tenant_id, "id": new.task_id},
                )
                != 1
            ):
                raise TaskNotLive(f"training task {new.task_id} is no longer running; its model is not stored")
            if conn.dialect == "postgres":  # serialise version numbering per tenant and detector
                conn.execute("SELECT pg_advisory_xact_lock(hashtext(:k))", {"k": f"detector:{tenant_id}:{detector}"})
            number = int(
                conn.scalar(
                    "SELECT COALESCE(MAX(version), 0) FROM detector_versions WHERE tenant_id = :t AND detector = :d",
                    {"t": tenant_id, "d": detector},
                )
            )
            row = {
                "tenant_id": tenant_id,
                "detector": detector,
                "version": number + 1,
                "task_id": new.task_id,
                "trained_by": new.trained_by,
                "created_at": now_iso(),
                "window_start": new.window_start,
                "window_end": new.window_end,
                "rows": new.rows,
                "params": json.dumps(new.params, sort_keys=True),
                "metrics": json.dumps(new.metrics, sort_keys=True),
                "threshold": new.threshold,
                "model": new.model,
            }
            conn.insert_rows("detector_versions", [row])
            _set_state(conn, tenant_id, detector, active_version=number + 1, threshold=None)
            conn.execute(
                """DELETE FROM detector_versions WHERE tenant_id = :t AND detector = :d AND version <= :old""",
                {"t": tenant_id, "d": detector, "old": number + 1 - max(1, keep)},
            )
            return ModelVersion.from_row(row)

        return await self.db.write(run)

    async def versions(self, tenant_id: str, *, limit: int, offset: int) -> tuple[list[ModelVersion], int]:
        """Stored versions newest first (without their model documents), and how many there are."""

        def run(conn: Connection) -> tuple[list[ModelVersion], int]:
            params = {"t": tenant_id, "d": self.detector, "l": limit, "o": offset}
            rows = conn.fetchall(
                f"""SELECT {_VERSION_COLUMNS} FROM detector_versions WHERE tenant_id = :t AND detector = :d
                    ORDER BY version DESC LIMIT :l OFFSET :o""",
                params,
            )
            total = conn.scalar("SELECT COUNT(*) FROM detector_versions WHERE tenant_id = :t AND detector = :d", params)
            return [ModelVersion.from_row(r) for r in rows], int(total)

        return await self.db.read(run)

    async def get_version(self, tenant_id: str, version: int) -> ModelVersion | None:
        """A version with its model document."""
        row = await self.db.read(
            lambda conn: conn.fetchone(
                "SELECT * FROM detector_versions WHERE tenant_id = :t AND detector = :d AND version = :v",
                {"t": tenant_id, "d": self.detector, "v": version},
            )
        )
        return None if row is None else ModelVersion.from_row(row)

    async def activate(self, tenant_id: str, version: int) -> DetectorState:
        """Make `version` the active one (a rollback, or forward again; the state's `updated_at` then tells
        when). Activating the active version again changes nothing. Raises `VersionNotFound`."""
        detector = self.detector

        def run(conn: Connection) -> DetectorState:
            found = conn.scalar(
                "SELECT COUNT(*) FROM detector_versions WHERE tenant_id = :t AND detector = :d AND version = :v",
                {"t": tenant_id, "d": detector, "v": version},
            )
            if not found:
                raise VersionNotFound(f"version {version} does not exist")
            return _make_active(conn, tenant_id, detector, version)

        return await self.db.write(run)

    async def activate_default(self, tenant_id: str) -> DetectorState:
        """Make no stored version active: the kind's default model serves again (the guard's shipped model).
        The state's `updated_at` then tells when the default was restored (restoring it again changes nothing);
        the stored versions are kept."""
        detector = self.detector
        return await self.db.write(lambda conn: _make_active(conn, tenant_id, detector, None))

    async def set_threshold(self, tenant_id: str, threshold: float | None) -> DetectorState:
        """Override the active version's threshold for this tenant (None: the version's own)."""
        return await self.db.write(lambda conn: _set_state(conn, tenant_id, self.detector, threshold=threshold))

    async def state(self, tenant_id: str) -> DetectorState:
        return await self.db.read(lambda conn: _state(conn, tenant_id, self.detector))


__all__ = [
    "CANCELLED",
    "FAILED",
    "LIVE",
    "QUEUED",
    "RUNNING",
    "SUCCEEDED",
    "TASK_STATUSES",
    "DetectorRepo",
    "DetectorState",
    "ModelVersion",
    "NewVersion",
    "StateChanged",
    "TaskNotLive",
    "TrainingInProgress",
    "TrainingTask",
    "VersionNotFound",
]
