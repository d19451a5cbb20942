"""Audit exports streamed from the database (`audit:export`, Security Analyst+). See docs/exports.md.

`GET /audit/export?format=csv|json|jsonl`, `GET /audit/export/csv` and `GET /audit/export/json`, filtered by
`agent_id`, `action`, `kind`, `since` and `until` (event time). The file is written as it is read, a page of
entries at a time, so memory stays flat however long the trail; it is sent as an attachment named after the
tenant and the time.
"""

from __future__ import annotations

import uuid
from typing import Any, Literal

from pydantic import AwareDatetime, BaseModel, Field
from quart import Blueprint, Response
from quart_schema import tag

from agentgov.exports.formats import MEDIA_TYPES
from agentgov.exports.stream import export_chunks
from agentgov.http.auth import Scheme, authorize, services, tenant_id
from agentgov.http.errors import ApiError
from agentgov.http.validation import query
from agentgov.security.roles import Permission
from agentgov.storage.audit import ExportFilter
from agentgov.timeutil import now, to_iso

bp = Blueprint("exports", __name__)


class ExportFilters(BaseModel):
    agent_id: uuid.UUID | None = None
    action: str | None = Field(default=None, min_length=1, max_length=200)
    kind: str | None = Field(default=None, min_length=1, max_length=50, description="action, policy_check, guard")
    since: AwareDatetime | None = Field(default=None, description="event time, inclusive (ISO 8601 with a zone)")
    until: AwareDatetime | None = Field(default=None, description="event time, exclusive")


class ExportQuery(ExportFilters):
    format: Literal["csv", "json", "jsonl"] = Field(description="csv, json or jsonl")


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
    tid = tenant_id()
    where = _filter(data)
    stamp = to_iso(now()).replace(":", "").replace("-", "")[:15]
    extension = {"csv": "csv", "json": "json", "jsonl": "jsonl"}[fmt]
    response = Response(export_chunks(services().db, tid, where, fmt), mimetype=MEDIA_TYPES[fmt])
    response.headers["Content-Disposition"] = f'attachment; filename="audit-{tid}-{stamp}.{extension}"'
    response.headers["Cache-Control"] = "no-store"
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
