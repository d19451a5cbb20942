"""The audit trail: log actions, list and read entries, verify the chain, export it."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

import httpx

from agentgov_client._core import ClientCore
from agentgov_client._flow import Call, Flow
from agentgov_client._ops._common import (
    DEFAULT_PAGE_SIZE,
    Pager,
    body,
    iso_time,
    json_of,
    model,
    page_of,
    page_query,
    raw_object,
    seg,
)
from agentgov_client.models import AuditEntry, ChainVerification, ExportJob, Page

IDEMPOTENCY_HEADER = "Idempotency-Key"
EXPORT_FORMATS = ("csv", "json", "jsonl")


def _entry(response: httpx.Response) -> AuditEntry:
    entry = AuditEntry.from_json(json_of(response))
    if response.headers.get("Idempotent-Replayed", "").lower() == "true":
        entry = AuditEntry.from_json({**entry.raw, "replayed": True})
    return entry


def log_action(
    core: ClientCore,
    agent_id: str,
    action: str,
    resource: str,
    *,
    input: Mapping[str, Any] | None = None,
    output: Mapping[str, Any] | None = None,
    reasoning: Iterable[str] | None = None,
    risk_score: float | None = None,
    is_approved: bool | None = None,
    timestamp: datetime | str | None = None,
    idempotency_key: str | None = None,
) -> Flow[AuditEntry]:
    """``POST /audit/log`` (Developer+): append an agent action to the tenant's tamper-evident trail; it is
    committed when this returns. `timestamp` is the event time (default: now).

    Every call sends an ``Idempotency-Key`` (`idempotency_key`, else a fresh UUID), so it is retried on
    connection errors, 429 and 503 without ever storing the action twice: a repeat returns the first entry
    (`AuditEntry.replayed`). Raises `NotFoundError` for an unknown agent, `ValidationError`."""
    payload = body(
        agent_id=str(agent_id),
        action=action,
        resource=resource,
        input=None if input is None else dict(input),
        output=None if output is None else dict(output),
        reasoning=None if reasoning is None else list(reasoning),
        risk_score=risk_score,
        is_approved=is_approved,
        timestamp=iso_time(timestamp),
    )
    headers = {IDEMPOTENCY_HEADER: idempotency_key or str(uuid.uuid4())}
    return core.execute(Call("POST", "/audit/log", _entry, json=payload, headers=headers, retry_safe=True))


def list_audit(
    core: ClientCore,
    *,
    agent_id: str | None = None,
    action: str | None = None,
    limit: int = 50,
    offset: int = 0,
) -> Flow[Page[AuditEntry]]:
    """``GET /audit`` (query ``skip``): entries newest first, filtered by agent and action. Retried."""
    query = page_query("skip", offset, limit, agent_id=agent_id, action=action)
    return core.execute(Call("GET", "/audit", page_of(AuditEntry), params=query))


def iter_audit(
    core: ClientCore, *, agent_id: str | None = None, action: str | None = None, page_size: int = DEFAULT_PAGE_SIZE
) -> Pager[AuditEntry]:
    """Every entry matching the filters, newest first, page after page (see `list_audit`)."""
    return Pager(
        lambda offset, limit: list_audit(core, agent_id=agent_id, action=action, limit=limit, offset=offset),
        page_size,
    )


def get_audit_entry(core: ClientCore, entry_id: str) -> Flow[AuditEntry]:
    """``GET /audit/{id}``. Raises `NotFoundError`. Retried."""
    return core.execute(Call("GET", f"/audit/{seg(entry_id)}", model(AuditEntry)))


def verify_audit(core: ClientCore) -> Flow[ChainVerification]:
    """``GET /audit/verify`` (Security Analyst+): check the whole chain; `intact` unless entries were
    modified, deleted, inserted or reordered. Retried."""
    return core.execute(Call("GET", "/audit/verify", model(ChainVerification)))


def export_filters(
    agent_id: str | None,
    action: str | None,
    kind: str | None,
    since: datetime | str | None,
    until: datetime | str | None,
) -> dict[str, Any]:
    return body(agent_id=agent_id, action=action, kind=kind, since=iso_time(since), until=iso_time(until))


def export_audit(
    core: ClientCore,
    format: str = "jsonl",
    *,
    agent_id: str | None = None,
    action: str | None = None,
    kind: str | None = None,
    since: datetime | str | None = None,
    until: datetime | str | None = None,
) -> Flow[httpx.Response]:
    """``GET /audit/export`` (Security Analyst+): the tenant's entries, oldest first, as `format` csv, json
    or jsonl, filtered by agent, action, kind (action, policy_check, guard) and event time (since inclusive,
    until exclusive). The body is streamed; retried only until the answer starts."""
    if format not in EXPORT_FORMATS:
        raise ValueError(f"format must be one of {', '.join(EXPORT_FORMATS)}")
    query = {"format": format, **export_filters(agent_id, action, kind, since, until)}
    return core.execute(Call("GET", "/audit/export", lambda r: r, params=query, stream=True))


def export_manifest(core: ClientCore, export_id: str) -> Flow[dict[str, Any]]:
    """``GET /audit/export/manifest/{id}``: the signed manifest of a finished export (rows, sequences,
    SHA-256, chain head). Raises `NotFoundError` for an export not read to its end. Retried."""
    return core.execute(Call("GET", f"/audit/export/manifest/{seg(export_id)}", raw_object))


def export_public_key(core: ClientCore) -> Flow[dict[str, Any]]:
    """``GET /audit/export/public-key``: the Ed25519 key verifying export manifests (PEM and base64)."""
    return core.execute(Call("GET", "/audit/export/public-key", raw_object))


def start_export_job(
    core: ClientCore,
    format: str = "jsonl",
    *,
    agent_id: str | None = None,
    action: str | None = None,
    kind: str | None = None,
    since: datetime | str | None = None,
    until: datetime | str | None = None,
) -> Flow[ExportJob]:
    """``POST /audit/export/async`` (Security Analyst+): write an export in the background (202); follow it
    with `get_export_job`, fetch it with `download_export`. Not retried."""
    payload = {"format": format, **export_filters(agent_id, action, kind, since, until)}
    return core.execute(Call("POST", "/audit/export/async", model(ExportJob), json=payload))


def get_export_job(core: ClientCore, job_id: str) -> Flow[ExportJob]:
    """``GET /audit/export/status/{id}``: queued, running, succeeded, failed or expired. Retried."""
    return core.execute(Call("GET", f"/audit/export/status/{seg(job_id)}", model(ExportJob)))


def download_export(core: ClientCore, job_id: str) -> Flow[httpx.Response]:
    """``GET /audit/export/download/{id}``: a finished job's file, streamed. Raises `ConflictError` while it
    runs (or when it failed), `APIStatusError` 410 once expired. Retried only until the answer starts."""
    path = f"/audit/export/download/{seg(job_id)}"
    return core.execute(Call("GET", path, lambda r: r, stream=True))
