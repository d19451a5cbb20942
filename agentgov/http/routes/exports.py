"""Audit exports streamed from the database (`audit:export`, Security Analyst+). See docs/exports.md.

`GET /audit/export?format=csv|json|jsonl`, `GET /audit/export/csv` and `GET /audit/export/json`, filtered by
`agent_id`, `action`, `kind`, `since` and `until` (event time). The file is written as it is read, a page of
entries at a time, so memory stays flat however long the trail; it is sent as an attachment named after the
tenant and the time.
"""

from __future__ import annotations

import base64
import logging
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, Literal

import trio
from pydantic import AwareDatetime, BaseModel, Field
from quart import Blueprint, Response
from quart_schema import document_response, tag

from agentgov.exports.formats import MEDIA_TYPES
from agentgov.exports.jobs import RunJob, export_jobs, job_file
from agentgov.exports.signing import ALGORITHM, key_id, public_pem, public_raw, service_key
from agentgov.exports.stream import export_chunks
from agentgov.http.auth import Scheme, authorize, principal, public, services, tenant_id
from agentgov.http.errors import ApiError
from agentgov.http.ids import parse_uuid
from agentgov.http.schemas import RequestModel
from agentgov.http.validation import json_body, query
from agentgov.logs import fields
from agentgov.security.roles import Permission
from agentgov.storage.audit import ExportFilter
from agentgov.storage.exports import ExportJob, ExportJobRepo, ExportRepo
from agentgov.storage.orphans import owner_at_start
from agentgov.timeutil import now, to_iso

bp = Blueprint("exports", __name__)
log = logging.getLogger("agentgov.exports")


class ExportFilters(BaseModel):
    agent_id: uuid.UUID | None = None
    action: str | None = Field(default=None, min_length=1, max_length=200)
    kind: str | None = Field(default=None, min_length=1, max_length=50, description="action, policy_check, guard")
    since: AwareDatetime | None = Field(default=None, description="event time, inclusive (ISO 8601 with a zone)")
    until: AwareDatetime | None = Field(default=None, description="event time, exclusive")


class ExportQuery(ExportFilters):
    format: Literal["csv", "json", "jsonl"] = Field(description="csv, json or jsonl")


class ExportJobIn(ExportQuery, RequestModel):
    """The body of `POST /audit/export/async`: `format` and the filters (an unknown field is a 422)."""


class ExportJobOut(BaseModel):
    job_id: str
    status: str = Field(description="queued, running, succeeded, failed or expired")
    format: str
    filters: dict[str, str]
    rows_written: int = Field(description="rows written so far")
    row_count: int | None = Field(description="rows in the finished file")
    size: int | None = Field(description="bytes of the finished file")
    sha256: str | None
    error: str | None
    requested_by: str
    created_at: str
    started_at: str | None
    finished_at: str | None
    expires_at: str | None = Field(description="when the finished file is removed (then 410)")


class ExportJobAccepted(ExportJobOut):
    status_url: str
    download_url: str
    manifest_url: str


def _filter(data: ExportFilters) -> ExportFilter:
    if data.since is not None and data.until is not None and data.since >= data.until:
        raise ApiError(
            422,
            "Invalid query: since must be before until",
            errors=[{"field": "since", "message": "must be before until", "type": "value"}],
        )
    return ExportFilter(
        agent_id=None if data.agent_id is None else str(data.agent_id),
        action=data.action,
        kind=data.kind,
        since=None if data.since is None else to_iso(data.since),
        until=None if data.until is None else to_iso(data.until),
    )


def _stream(data: ExportFilters, fmt: str) -> Response:
    tid, svc = tenant_id(), services()
    where = _filter(data)
    export_id = str(uuid.uuid4())
    stamp = to_iso(now()).replace(":", "").replace("-", "")[:15]
    chunks = export_chunks(svc.db, tid, where, fmt, export_id=export_id, key=service_key(svc.settings))
    response = Response(chunks, mimetype=MEDIA_TYPES[fmt])
    manifest_url = f"/api/v1/audit/export/manifest/{export_id}"
    response.headers["Content-Disposition"] = f'attachment; filename="audit-{tid}-{stamp}.{fmt}"'
    response.headers["Cache-Control"] = "no-store"
    response.headers["X-Export-Id"] = export_id
    response.headers["Link"] = f'<{manifest_url}>; rel="describedby"'
    return response


@bp.get("/audit/export")
@authorize(Scheme.API_KEY, permission=Permission.AUDIT_EXPORT)
@tag(["audit"])
@query(ExportQuery)
async def export(query: ExportQuery) -> Any:
    """The tenant's audit entries as a file, oldest first (Security Analyst+): `format` csv (RFC 4180, header
    row, objects as JSON text, formula-like cells prefixed with an apostrophe), json (one array) or jsonl (one
    object per line). Every row carries its chain fields (sequence, prev_signature, signature). 422 for
    another format, naming the allowed ones."""
    return _stream(query, query.format)


@bp.get("/audit/export/csv")
@authorize(Scheme.API_KEY, permission=Permission.AUDIT_EXPORT)
@tag(["audit"])
@query(ExportFilters)
async def export_csv(query: ExportFilters) -> Any:
    """The tenant's audit entries as CSV (as `GET /audit/export?format=csv`)."""
    return _stream(query, "csv")


@bp.get("/audit/export/json")
@authorize(Scheme.API_KEY, permission=Permission.AUDIT_EXPORT)
@tag(["audit"])
@query(ExportFilters)
async def export_json(query: ExportFilters) -> Any:
    """The tenant's audit entries as one JSON array (as `GET /audit/export?format=json`)."""
    return _stream(query, "json")


@bp.get("/audit/export/manifest/<export_id>")
@authorize(Scheme.API_KEY, permission=Permission.AUDIT_EXPORT)
@tag(["audit"])
async def manifest(export_id: str) -> dict[str, Any]:
    """The signed manifest of a finished streamed export (its id is the response's `X-Export-Id`): rows,
    first and last sequence, size, SHA-256, chain head, filters, signed with the service's Ed25519 key. 404 for
    an unknown id, another tenant's, or an export not sent to its end."""
    found = await ExportRepo(services().db).manifest(tenant_id(), parse_uuid(export_id, "export_id"))
    if found is None:
        raise ApiError(404, "Export manifest not found")
    return found


@bp.get("/audit/export/public-key")
@public
@tag(["audit"])
async def public_key() -> dict[str, Any]:
    """The public key that verifies export manifests (no credentials: it is public), as PEM and as base64 of
    its 32 raw bytes, with its `key_id`."""
    key = service_key(services().settings).public_key()
    return {
        "algorithm": ALGORITHM,
        "key_id": key_id(key),
        "public_key_pem": public_pem(key),
        "public_key": base64.b64encode(public_raw(key)).decode("ascii"),
    }


# ------------------------------------------------------------------------------------------------- jobs


def _job_urls(job_id: str) -> dict[str, str]:
    return {
        "status_url": f"/api/v1/audit/export/status/{job_id}",
        "download_url": f"/api/v1/audit/export/download/{job_id}",
        "manifest_url": f"/api/v1/audit/export/manifest/{job_id}",
    }


async def _job(job_id: str) -> ExportJob:
    job = await ExportJobRepo(services().db).get(tenant_id(), parse_uuid(job_id, "job_id"))
    if job is None:
        raise ApiError(404, "Export job not found")
    return job


@bp.post("/audit/export/async")
@authorize(Scheme.API_KEY, permission=Permission.AUDIT_EXPORT)
@tag(["audit"])
@json_body(ExportJobIn)
@document_response(ExportJobAccepted, 202)
async def start_job(data: ExportJobIn) -> tuple[dict[str, Any], int, dict[str, str]]:
    """Write an export to a file in the background (Security Analyst+): 202 with the job; follow it at
    `status_url`, fetch the file at `download_url` once `succeeded` (until `expires_at`), its signed manifest at
    `manifest_url`. Body: `format` and the filters of the streamed export."""
    svc = services()
    where = _filter(data)
    job = await ExportJobRepo(svc.db).create(
        tenant_id(),
        fmt=data.format,
        filters=where.to_public(),
        requested_by=principal().actor_label,
        owner=svc.instance_id,
    )
    export_jobs(svc).tell(RunJob(job))  # a full mailbox or stopped runner: the job is failed by housekeeping
    urls = _job_urls(job.id)
    return {**job.to_public(), **urls}, 202, {"Location": urls["status_url"]}


@bp.get("/audit/export/status/<job_id>")
@authorize(Scheme.API_KEY, permission=Permission.AUDIT_EXPORT)
@tag(["audit"])
@document_response(ExportJobOut)
async def job_status(job_id: str) -> dict[str, Any]:
    """One export job of this tenant: `queued`, `running` (with `rows_written`), `succeeded` (row count, size,
    SHA-256, expiry), `failed` (the error) or `expired`. 404 for an unknown id or another tenant's."""
    return (await _job(job_id)).to_public()


@bp.get("/audit/export/download/<job_id>")
@authorize(Scheme.API_KEY, permission=Permission.AUDIT_EXPORT)
@tag(["audit"])
async def download(job_id: str) -> Any:
    """The finished job's file, streamed. 409 while it is queued or running (or when it failed, with the
    error), 410 once it expired, 404 for an unknown id or another tenant's."""
    svc = services()
    job = await _job(job_id)
    if job.status in ("queued", "running"):
        raise ApiError(409, f"Conflict: export job {job.id} is {job.status}; try again when it has succeeded")
    if job.status == "failed":
        raise ApiError(409, f"Conflict: export job {job.id} failed: {job.error}")
    path = job_file(svc, job)
    if job.status == "expired" or not await trio.Path(path).exists():
        raise ApiError(410, f"Export job {job.id} expired; its file was removed")
    response = Response(_file_chunks(path), mimetype=MEDIA_TYPES[job.format])
    response.headers["Content-Disposition"] = f'attachment; filename="audit-{job.tenant_id}-{job.id}.{job.format}"'
    response.headers["Content-Length"] = str(job.size)
    response.headers["Cache-Control"] = "no-store"
    response.headers["X-Export-Id"] = job.id
    response.headers["Link"] = f'<{_job_urls(job.id)["manifest_url"]}>; rel="describedby"'
    return response


async def _file_chunks(path: Path) -> AsyncIterator[bytes]:
    async with await trio.open_file(path, "rb") as source:
        while chunk := await source.read(1 << 16):
            yield chunk


@bp.before_app_serving
async def _fail_orphaned_jobs() -> None:
    """Jobs left queued or running by a process that stopped are failed at start: with SQLite every live job
    (one process owns the database), with PostgreSQL those whose heartbeat is older than `LEASE_SECONDS`."""
    svc = services()
    owner = owner_at_start(svc.db.dialect, svc.instance_id)
    try:
        failed = await ExportJobRepo(svc.db).fail_orphaned(lease_seconds=svc.settings.lease_seconds, owner=owner)
    except Exception:
        log.exception("could not fail orphaned export jobs")
        return
    if failed:
        log.warning("export jobs of a stopped process marked failed", extra=fields(jobs=failed))
