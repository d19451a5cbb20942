"""Export jobs: the same export as the streamed routes, written to a file in the background.

`POST /audit/export/async` stores a `queued` job (`ExportJobRepo`) and tells this process's `ExportJobsActor`
(`export-jobs`) to run it. The actor runs each job in its nursery: the file is written under `EXPORT_DIR`
(default `DATA_DIR/exports`) as `<job_id>.<format>.partial`, renamed to `<job_id>.<format>` once complete, with
`rows_written` recorded after every page and the signed manifest stored as for a streamed export (under the
job's id). A job ends `succeeded` (row count, size, SHA-256, `expires_at`) or `failed` (the error). Every
second the actor refreshes the heartbeat of its running jobs and, every `EXPIRY_CHECK_SECONDS`, marks
succeeded jobs past their expiry `expired` and removes their files.

A job left `queued` or `running` by a process that died is failed: at start (`fail_orphaned`: with SQLite
every live job, one process owning the database; with PostgreSQL those whose heartbeat is older than
`LEASE_SECONDS`) and by every actor's periodic check. Stopping the actor (shutdown) cancels its running
jobs, which end `failed` ("the service stopped"); their partial files are removed. Files live on this
machine's disk: several machines behind a load balancer need a shared `EXPORT_DIR` (see docs/exports.md).
"""

from __future__ import annotations

import dataclasses
import logging
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import trio

from agentgov.actors.runtime import Actor, ActorContext, ActorRef
from agentgov.actors.ticker import PeriodicTicker
from agentgov.exports.manifest import Tally
from agentgov.exports.signing import service_key
from agentgov.exports.stream import export_chunks
from agentgov.logs import fields
from agentgov.storage.audit import ExportFilter
from agentgov.storage.database import DatabaseError
from agentgov.storage.exports import ExportJob, ExportJobRepo
from agentgov.timeutil import now, to_iso

if TYPE_CHECKING:
    from agentgov.services import Services

log = logging.getLogger("agentgov.exports")

TICK_SECONDS = 1.0
EXPIRY_CHECK_SECONDS = 30.0
STOPPED = "the service stopped before the export finished; start a new export"


def export_dir(services: Services) -> Path:
    return services.settings.export_dir or services.settings.data_dir / "exports"


def job_file(services: Services, job: ExportJob) -> Path:
    return export_dir(services) / f"{job.id}.{job.format}"


@dataclasses.dataclass(frozen=True)
class RunJob:
    job: ExportJob


@dataclasses.dataclass(frozen=True)
class _Tick:
    pass


class ExportJobsActor(Actor[RunJob | _Tick]):
    def __init__(self, services: Services) -> None:
        self.services = services
        self.repo = ExportJobRepo(services.db)
        self._running: dict[str, trio.CancelScope] = {}
        self._ctx: ActorContext | None = None
        self._ticker = PeriodicTicker(TICK_SECONDS, _Tick())
        self._next_expiry = 0.0

    async def on_start(self, ctx: ActorContext) -> None:
        self._ctx = ctx
        self._ticker.start(ctx)

    async def handle(self, message: RunJob | _Tick) -> Any:
        match message:
            case RunJob(job):
                assert self._ctx is not None
                scope = trio.CancelScope()
                self._running[job.id] = scope
                self._ctx.nursery.start_soon(self._run, job, scope, name=f"export-job:{job.id}")
            case _Tick():
                try:
                    await self._on_tick()
                except DatabaseError as exc:
                    log.warning("export job housekeeping failed", extra=fields(error=str(exc)))
                finally:
                    self._ticker.poke()
        return None

    async def _on_tick(self) -> None:
        if self._running:
            await self.repo.heartbeat(list(self._running))
        if trio.current_time() >= self._next_expiry:
            self._next_expiry = trio.current_time() + EXPIRY_CHECK_SECONDS
            await self.repo.fail_orphaned(lease_seconds=self.services.settings.lease_seconds)
            for job in await self.repo.expire_due():
                await trio.to_thread.run_sync(_remove, job_file(self.services, job))
                log.info("export job expired", extra=fields(tenant_id=job.tenant_id, job_id=job.id))

    async def _run(self, job: ExportJob, scope: trio.CancelScope) -> None:
        """Write the job's file. Never raises (the outcome is recorded); cancellation (shutdown) fails it."""
        svc, repo = self.services, self.repo
        target = job_file(svc, job)
        partial = target.with_name(target.name + ".partial")
        error: str | None = None
        try:
            with scope:
                await repo.start(job.id)
                await trio.to_thread.run_sync(lambda: target.parent.mkdir(parents=True, exist_ok=True))
                where = ExportFilter(**job.filters)

                async def progress(rows: int) -> None:
                    await repo.progress(job.id, rows)

                tally = Tally()
                async with await trio.open_file(partial, "wb") as out:
                    async for chunk in export_chunks(
                        svc.db,
                        job.tenant_id,
                        where,
                        job.format,
                        export_id=job.id,
                        key=service_key(svc.settings),
                        on_page=progress,
                        tally=tally,
                    ):
                        await out.write(chunk)
                await trio.Path(partial).rename(target)
                expires = to_iso(now() + timedelta(hours=svc.settings.export_job_ttl_hours))
                with trio.CancelScope(shield=True):
                    await repo.succeed(
                        job.id, rows=tally.rows, size=tally.size, sha256=tally.digest.hexdigest(), expires_at=expires
                    )
            if scope.cancelled_caught:
                error = STOPPED
        except trio.Cancelled:
            error = STOPPED
            raise
        except (OSError, DatabaseError) as exc:
            error = f"the export could not be written: {exc}"
        except Exception as exc:
            log.exception("export job failed", extra=fields(tenant_id=job.tenant_id, job_id=job.id))
            error = f"the export failed: {exc!r}"
        finally:
            self._running.pop(job.id, None)
            if error is not None:
                with trio.CancelScope(shield=True), trio.move_on_after(10):
                    await trio.to_thread.run_sync(_remove, partial)
                    try:
                        await repo.fail(job.id, error)
                    except DatabaseError as exc:
                        log.error("export job outcome not recorded", extra=fields(job_id=job.id, error=str(exc)))

    async def on_stop(self) -> None:
        for scope in self._running.values():
            scope.cancel()


def _remove(path: Path) -> None:
    path.unlink(missing_ok=True)


def export_jobs(services: Services) -> ActorRef[RunJob | _Tick]:
    """This process's export job runner, started on first use."""
    return services.actors.get_or_spawn("export-jobs", lambda: ExportJobsActor(services))
