"""Policies, their versions and templates, and policy decisions."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agentgov_client.models._base import Model


@dataclass(frozen=True)
class Policy(Model):
    """A Cedar policy document (one or more Cedar policies); `rules` describes each of them."""

    id: str
    name: str
    cedar: str
    is_active: bool = True
    version: int = 1
    description: str | None = None
    rules: list[dict[str, Any]] = field(default_factory=list)
    created_at: str | None = None
    updated_at: str | None = None
    created_by: str | None = None
    updated_by: str | None = None


@dataclass(frozen=True)
class PolicyVersion(Model):
    """One stored version of a policy; `change` is created, updated or deleted."""

    policy_id: str
    version: int
    change: str
    name: str
    cedar: str
    is_active: bool = True
    description: str | None = None
    rules: list[dict[str, Any]] = field(default_factory=list)
    changed_at: str | None = None
    changed_by: str | None = None


@dataclass(frozen=True)
class PolicyTemplate(Model):
    """A ready-made policy: its `cedar` rendered with the default `parameters`, and example checks."""

    id: str
    name: str
    cedar: str
    description: str = ""
    parameters: list[dict[str, Any]] = field(default_factory=list)
    examples: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class PolicyDecision(Model):
    """The answer of a policy check.

    `allowed` with `required_approval` means the action may run once a human approves it: `approval_id`
    names the approval request the service opened (None if it could not: ask with `request_approval`).
    `risk` holds at least ``level``; `anomaly` (None while no anomaly model is active) at least
    ``is_anomaly``. `decision_id` names the decision's entry in the audit trail.
    """

    allowed: bool
    reason: str = ""
    severity: str | None = None
    required_approval: bool = False
    risk_score: float | None = None
    risk: dict[str, Any] | None = None
    anomaly: dict[str, Any] | None = None
    approval_id: str | None = None
    decision_id: str | None = None
    determining_policies: list[str] = field(default_factory=list)
    default_applied: bool = False
    errors: list[dict[str, Any]] = field(default_factory=list)
    evaluated_at: str | None = None

    @property
    def risk_level(self) -> str | None:
        return None if self.risk is None else self.risk.get("level")
