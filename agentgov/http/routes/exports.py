"""Audit exports streamed from the database (`audit:export`, Security Analyst+). See docs/exports.md.

`GET /audit/export?format=csv|json|jsonl`, `GET /audit/export/csv` and `GET /audit/export/json`, filtered by
`agent_id`, `action`, `kind`, `since` and `until` (event time). The file is written as it is read, a page of
entries at a time, so memory stays flat however long the trail; it is sent as an attachment named after the
tenant and the time.
"""

from __future__ import annotations

import base64
import uuid
from typing import Any, Literal

from pydantic import AwareDatetime, BaseModel, Field
from quart import Blueprint, Response
from quart_schema import tag

from agentgov.exports.formats import MEDIA_TYPES
from agentgov.exports.signing import ALGORITHM, key_id, public_pem, public_raw, service_key
from agentgov.exports.stream import export_chunks
from agentgov.http.auth import Scheme, authorize, public, services, tenant_id
from agentgov.http.errors import ApiError
from agentgov.http.ids import parse_uuid
from agentgov.http.validation import query
from agentgov.security.roles import Permission
from agentgov.storage.audit import ExportFilter
from agentgov.storage.exports import ExportRepo
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
