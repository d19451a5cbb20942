"""The events the SIEM receives: one shape for every source, built from audit entries or recorded directly.

Every event carries its tenant, a stable `event_id` (an audit entry's id, or the id given when the event was
recorded: a re-sent event keeps it, so a SIEM can drop duplicates of the at-least-once delivery), the request
id of the API call that caused it (when there was one), and a severity from 0 to 10 (CEF's scale; syslog and
LEEF severities derive from it). The catalogue of names is in docs/siem.md.
"""

from __future__ import annotations

import dataclasses
import json
import uuid
from typing import Any

from agentgov.logs import request_id_var
from agentgov.storage.audit import AuditEntry
from agentgov.timeutil import now_iso


@dataclasses.dataclass(frozen=True)
class SiemEvent:
    event_id: str
    tenant_id: str
    name: str  # e.g. "policy.denied"; the CEF signature id, LEEF event id and syslog MSGID
    severity: int  # 0 (lowest) .. 10
    occurred_at: str  # ISO 8601 UTC
    summary: str  # one human-readable line
    request_id: str | None = None
    outcome: str | None = None
    actor: str | None = None
    agent_id: str | None = None
    action: str | None = None
    resource: str | None = None
    details: dict[str, Any] = dataclasses.field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), separators=(",", ":"), ensure_ascii=False, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> SiemEvent:
        data = json.loads(text)
        return cls(**{f.name: data.get(f.name) for f in dataclasses.fields(cls) if f.name in data})


def new_event(
    tenant_id: str,
    name: str,
    severity: int,
    summary: str,
    *,
    outcome: str | None = None,
    actor: str | None = None,
    agent_id: str | None = None,
    action: str | None = None,
    resource: str | None = None,
    details: dict[str, Any] | None = None,
    event_id: str | None = None,
) -> SiemEvent:
    """An event happening now, with the current request's id (read in the caller's task)."""
    return SiemEvent(
        event_id=event_id or str(uuid.uuid4()),
        tenant_id=tenant_id,
        name=name,
        severity=max(0, min(10, severity)),
        occurred_at=now_iso(),
        summary=summary,
        request_id=request_id_var.get(),
        outcome=outcome,
        actor=actor,
        agent_id=agent_id,
        action=action,
        resource=resource,
        details=details or {},
    )


def _loads(text: str | None) -> Any:
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return text


def from_audit_entry(entry: AuditEntry) -> SiemEvent:
    """The event of one audit entry: `policy.allowed|denied|approval_required` for a decision, `guard.blocked`
    for a guard block, `audit.<kind>` otherwise. The event id is the entry's id."""
    decision = _loads(entry.decision)
    anomaly = _loads(entry.anomaly)
    details: dict[str, Any] = {"sequence": entry.sequence, "kind": entry.kind, "signature": entry.signature}
    outcome: str | None = None
    if entry.kind == "policy_check" and isinstance(decision, dict):
        if decision.get("required_approval"):
            name, severity, outcome = "policy.approval_required", 5, "approval_required"
        elif decision.get("allowed"):
            name, severity, outcome = "policy.allowed", 2, "allowed"
        else:
            name, severity, outcome = "policy.denied", 7, "denied"
        summary = f"policy check {outcome}: {entry.action} on {entry.resource}"
        if decision.get("reason"):
            summary += f" ({decision['reason']})"
        details["decision"] = decision
    elif entry.kind == "guard":
        output = _loads(entry.output) or {}
        category = output.get("category") if isinstance(output, dict) else None
        name, severity, outcome = "guard.blocked", 8, "blocked"
        summary = f"prompt guard blocked a prompt ({category or 'attack'})"
        details["guard"] = output
        details["prompt"] = _loads(entry.input)
    else:
        name, severity = f"audit.{entry.kind}", 3
        summary = f"agent action {entry.action} on {entry.resource}"
        if entry.is_approved is not None:
            outcome = "approved" if entry.is_approved else "not_approved"
        details.update(input=_loads(entry.input), output=_loads(entry.output), reasoning=_loads(entry.reasoning))
    if entry.risk_score is not None:
        details["risk_score"] = entry.risk_score
    if isinstance(anomaly, dict):
        details["anomaly"] = anomaly
        if anomaly.get("is_anomaly"):
            severity = max(severity, 6)
    return SiemEvent(
        event_id=entry.id,
        tenant_id=entry.tenant_id,
        name=name,
        severity=severity,
        occurred_at=entry.timestamp,
        summary=summary,
        request_id=entry.request_id,
        outcome=outcome,
        actor=entry.actor or None,
        agent_id=entry.agent_id,
        action=entry.action,
        resource=entry.resource,
        details=details,
    )


_APPROVAL_SEVERITY = {"pending": 5, "approved": 4, "rejected": 6, "expired": 6}


def approval_event(record: Any) -> SiemEvent:
    """`approval.requested` for a pending `ApprovalRequest`, else `approval.<status>` (its decision or expiry).
    The event id is derived from the request and its status, so a repeated notice of one transition keeps it."""
    requested = record.status == "pending"
    name = "approval.requested" if requested else f"approval.{record.status}"
    summary = (
        f"approval requested for {record.action} on {record.resource}"
        if requested
        else f"approval {record.status} for {record.action} on {record.resource}"
    )
    return new_event(
        record.tenant_id,
        name,
        _APPROVAL_SEVERITY.get(record.status, 5),
        summary,
        event_id=str(uuid.uuid5(uuid.NAMESPACE_URL, f"agentgov:approval:{record.id}:{record.status}")),
        outcome=record.status,
        actor=record.requested_by if requested else record.decided_by,
        agent_id=record.agent_id,
        action=record.action,
        resource=record.resource,
        details={
            "approval_id": record.id,
            "reason": record.reason,
            "risk_score": record.risk_score,
            "policy_ids": list(record.policy_ids),
            "expires_at": record.expires_at,
            "decided_at": record.decided_at,
            "comment": record.comment,
        },
    )


_ANOMALY_SEVERITY = {"low": 4, "medium": 6, "high": 8, "critical": 9}


def anomaly_event(report: Any) -> SiemEvent:
    """`anomaly.detected` for a stored `AnomalyReport` (by the detector or reported by hand); its id is the
    report's."""
    return new_event(
        report.tenant_id,
        "anomaly.detected",
        _ANOMALY_SEVERITY.get(report.severity, 6),
        f"anomaly ({report.severity}, {report.type}): {report.description}",
        event_id=report.id,
        outcome=report.severity,
        actor=report.reported_by,
        agent_id=report.agent_id,
        details={
            "type": report.type,
            "score": report.score,
            "reasons": list(report.reasons),
            "source": report.source,
            "model_version": report.model_version,
            "audit_log_id": report.audit_log_id,
            "occurred_at": report.occurred_at,
        },
    )


def login_failure(tenant_id: str, email: str, address: str, reason: str) -> SiemEvent:
    """`auth.login_failed` (`reason`: invalid credentials, inactive user, throttled). `tenant_id` is the
    account's tenant when the email names one account, else empty (a platform event)."""
    return new_event(
        tenant_id,
        "auth.login_failed",
        7 if reason == "throttled" else 5,
        f"login failed for {email}: {reason}",
        outcome="failure",
        actor=email,
        details={"reason": reason, "client_address": address},
    )


def sso_failure(detail: str, status: int, path: str, address: str) -> SiemEvent:
    """`auth.sso_failed`: a single sign-on step refused (a platform event: the tenant is not known yet)."""
    return new_event(
        "",
        "auth.sso_failed",
        6 if status >= 500 else 5,
        f"single sign-on refused: {detail}",
        outcome="failure",
        details={"status": status, "step": path.rsplit("/", 1)[-1], "client_address": address},
    )


def identity_change(tenant_id: str, name: str, summary: str, actor: str, details: dict[str, Any]) -> SiemEvent:
    """A change to users, API keys or tenants (`user.created`, `api_key.revoked`, `tenant.created`, ...)."""
    severity = 6 if name.endswith((".deleted", ".revoked", ".role_changed")) else 4
    return new_event(tenant_id, name, severity, summary, outcome="success", actor=actor, details=details)


def test_event() -> SiemEvent:
    """The event `POST /siem/test` sends (platform-wide: no tenant)."""
    return new_event("", "siem.test", 1, "agentgov SIEM forwarding test event", outcome="test")
