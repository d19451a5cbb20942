"""Human-in-the-loop approval requests."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agentgov_client.models._base import Model


@dataclass(frozen=True)
class ApprovalRequest(Model):
    """A request for a human decision: `status` pending, then approved, rejected or expired. `approved` is
    None while pending and True only when approved (expired counts as rejected)."""

    id: str
    agent_id: str
    action: str
    resource: str
    status: str
    approved: bool | None = None
    context: dict[str, Any] = field(default_factory=dict)
    policy_ids: list[str] = field(default_factory=list)
    reason: str = ""
    risk_score: float | None = None
    requested_by: str | None = None
    created_at: str | None = None
    expires_at: str | None = None
    decided_at: str | None = None
    decided_by: str | None = None
    comment: str | None = None

    @property
    def pending(self) -> bool:
        return self.status == "pending"
