"""Audit exports in the database: the signed manifest of each finished export (table `export_manifests`,
m0010) and export jobs (table `export_jobs`, m0011). Everything is read only by its tenant."""

from __future__ import annotations

import dataclasses
import json
import uuid
from typing import Any

from agentgov.storage.database import Connection, Database, Row
from agentgov.storage.orphans import orphaned
from agentgov.timeutil import now_iso


class ExportRepo:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def save_manifest(self, tenant_id: str, export_id: str, manifest: dict[str, Any]) -> None:
        def run(conn: Connection) -> None:
            conn.execute(
                "INSERT INTO export_manifests (id, tenant_id, manifest, created_at) VALUES (:id, :t, :m, :now)",
                {"id": export_id, "t": tenant_id, "m": json.dumps(manifest, sort_keys=True), "now": now_iso()},
            )

        await self.db.write(run)

    async def manifest(self, tenant_id: str, export_id: str) -> dict[str, Any] | None:
        """The manifest of the tenant's export (None: unknown, another tenant's, or not finished)."""
        raw = await self.db.read(
            lambda c: c.scalar(
                "SELECT manifest FROM export_manifests WHERE id = :id AND tenant_id = :t",
                {"id": export_id, "t": tenant_id},
            )
        )
        return None if raw is None else dict(json.loads(raw))


QUEUED, SUCCEEDED, EXPIRED = "queued", "succeeded", "expired"
ORPHANED = "the process writing this export stopped before it finished; start a new export"


@dataclasses.dataclass(frozen=True)
class ExportJob:
    id: str
    tenant_id: str
    status: str
    format: str
    filters: dict[str, str]
    requested_by: str
    rows_written: int
    size: int | None
    sha256: str | None
    error: str | None
    owner: str
    created_at: str
    started_at: str | None
    finished_at: str | None
    expires_at: str | None

    @classmethod
    def from_row(cls, row: Row) -> ExportJob:
        values = {field.name: row[field.name] for field in dataclasses.fields(cls)}
        values["filters"] = json.loads(row["filters"])
        return cls(**values)

    def to_public(self) -> dict[str, Any]:
        return {
            "job_id": self.id,
            "status": self.status,
            "format": self.format,
            "filters": self.filters,
            "rows_written": self.rows_written,
            "row_count": self.rows_written if self.status in (SUCCEEDED, EXPIRED) else None,
            "size": self.size,
            "sha256": self.sha256,
            "error": self.error,
            "requested_by": self.requested_by,
            "created_at": self.created_at,
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "expires_at": self.expires_at,
        }


class ExportJobRepo:
    """Export jobs. States `queued` -> `running` -> `succeeded` (-> `expired` once its file is removed) or
    `failed`; every transition out of a live state is conditional on the job still being live."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def create(
        self, tenant_id: str, *, fmt: str, filters: dict[str, str], requested_by: str, owner: str
    ) -> ExportJob:
        now = now_iso()
        values = {
            "id": str(uuid.uuid4()),
            "tenant_id": tenant_id,
            "status": QUEUED,
            "format": fmt,
            "filters": json.dumps(filters, sort_keys=True),
            "requested_by": requested_by,
            "owner": owner,
            "now": now,
        }

        def run(conn: Connection) -> None:
            conn.execute(
                "INSERT INTO export_jobs (id, tenant_id, status, format, filters, requested_by, owner, heartbeat_at,"
                " created_at) VALUES (:id, :tenant_id, :status, :format, :filters, :requested_by, :owner, :now, :now)",
                values,
            )

        await self.db.write(run)
        job = await self.get(tenant_id, str(values["id"]))
        assert job is not None
        return job

    async def get(self, tenant_id: str, job_id: str) -> ExportJob | None:
        row = await self.db.read(
            lambda c: c.fetchone(
                "SELECT * FROM export_jobs WHERE id = :id AND tenant_id = :t", {"id": job_id, "t": tenant_id}
            )
        )
        return None if row is None else ExportJob.from_row(row)

    async def _update(self, sql: str, params: dict[str, Any]) -> int:
        return await self.db.write(lambda c: c.execute(sql, params))

    async def start(self, job_id: str) -> None:
        now = now_iso()
        await self._update(
            "UPDATE export_jobs SET status = 'running', started_at = :now, heartbeat_at = :now"
            " WHERE id = :id AND status = 'queued'",
            {"id": job_id, "now": now},
        )

    async def progress(self, job_id: str, rows_written: int) -> None:
        await self._update(
            "UPDATE export_jobs SET rows_written = :rows, heartbeat_at = :now WHERE id = :id AND status = 'running'",
            {"id": job_id, "rows": rows_written, "now": now_iso()},
        )

    async def heartbeat(self, job_ids: list[str]) -> None:
        now = now_iso()
        for job_id in job_ids:
            await self._update(
                "UPDATE export_jobs SET heartbeat_at = :now WHERE id = :id AND status IN ('queued', 'running')",
                {"id": job_id, "now": now},
            )

    async def succeed(self, job_id: str, *, rows: int, size: int, sha256: str, expires_at: str) -> None:
        await self._update(
            "UPDATE export_jobs SET status = 'succeeded', rows_written = :rows, size = :size, sha256 = :sha,"
            " finished_at = :now, expires_at = :expires WHERE id = :id AND status = 'running'",
            {"id": job_id, "rows": rows, "size": size, "sha": sha256, "now": now_iso(), "expires": expires_at},
        )

    async def fail(self, job_id: str, error: str) -> None:
        await self._update(
            "UPDATE export_jobs SET status = 'failed', error = :error, finished_at = :now"
            " WHERE id = :id AND status IN ('queued', 'running')",
            {"id": job_id, "error": error, "now": now_iso()},
        )

    async def fail_orphaned(self, *, lease_seconds: float, owner: str | None = None) -> int:
        """Fail live jobs whose heartbeat is older than the lease (their process died), or with `owner`
        every live job not owned by it (one process owns an SQLite database). Returns how many."""
        where, params = orphaned(lease_seconds=lease_seconds, owner=owner)
        return await self._update(
            "UPDATE export_jobs SET status = 'failed', error = :error, finished_at = :now"
            f" WHERE status IN ('queued', 'running') AND {where}",
            {**params, "error": ORPHANED, "now": now_iso()},
        )

    async def expire_due(self) -> list[ExportJob]:
        """Mark succeeded jobs past their expiry `expired`; returns them (their files are to be removed)."""
        now = now_iso()

        def run(conn: Connection) -> list[Row]:
            rows = conn.fetchall(
                "SELECT * FROM export_jobs WHERE status = 'succeeded' AND expires_at <= :now", {"now": now}
            )
            for row in rows:
                conn.execute(
                    "UPDATE export_jobs SET status = 'expired' WHERE id = :id AND status = 'succeeded'",
                    {"id": row["id"]},
                )
            return rows

        return [ExportJob.from_row(row) for row in await self.db.write(run)]
