"""The audit trail: entries, chain verification, export jobs and webhook receipts."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agentgov_client.models._base import Model


@dataclass(frozen=True)
class AuditEntry(Model):
    """One entry of the tenant's tamper-evident chain. `kind` is action, policy_check or guard; `signature`
    chains it to `prev_signature`. `replayed` is True when `log_action` was answered with the entry an earlier
    request with the same idempotency key stored."""

    id: str
    agent_id: str
    action: str
    resource: str
    sequence: int | None = None
    kind: str = "action"
    input: dict[str, Any] | None = None
    output: dict[str, Any] | None = None
    reasoning: list[str] | None = None
    risk_score: float | None = None
    is_approved: bool | None = None
    decision: dict[str, Any] | None = None
    actor: str | None = None
    timestamp: str | None = None
    created_at: str | None = None
    anomaly: dict[str, Any] | None = None
    prev_signature: str | None = None
    signature: str | None = None
    replayed: bool = False


@dataclass(frozen=True)
class ChainVerification(Model):
    """The result of verifying the tenant's chain: `intact` unless `findings` name modified, deleted,
    inserted or reordered entries; `head` is the recorded end of the chain (keep a copy elsewhere)."""

    intact: bool
    tenant_id: str | None = None
    checked: int = 0
    head: dict[str, Any] | None = None
    findings: list[dict[str, Any]] = field(default_factory=list)
    truncated: bool = False


@dataclass(frozen=True)
class ExportJob(Model):
    """A background export: queued, running, succeeded (download until `expires_at`), failed or expired."""

    job_id: str
    status: str
    format: str = ""
    filters: dict[str, str] = field(default_factory=dict)
    rows_written: int = 0
    row_count: int | None = None
    size: int | None = None
    sha256: str | None = None
    error: str | None = None
    requested_by: str | None = None
    created_at: str | None = None
    started_at: str | None = None
    finished_at: str | None = None
    expires_at: str | None = None


@dataclass(frozen=True)
class ExportFile:
    """An export written to `path`: `size` bytes with SHA-256 `sha256`; `export_id` names its signed manifest
    (``GET /audit/export/manifest/{export_id}``)."""

    path: str
    size: int
    sha256: str
    export_id: str | None
    content_type: str | None


@dataclass(frozen=True)
class WebhookReceipt(Model):
    """The answer to a webhook delivery. agent.action: `entry_id`, `sequence`, `duplicate` (a repeated
    delivery answered with the first entry); agent.heartbeat: `agent_id` and `agent_status`."""

    event: str
    status: str = "accepted"
    duplicate: bool = False
    entry_id: str | None = None
    sequence: int | None = None
    agent_id: str | None = None
    agent_status: str | None = None
