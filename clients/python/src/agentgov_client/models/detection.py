"""Anomaly reports, prompt-guard results, and the detectors' training tasks and model versions."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agentgov_client.models._base import Model


@dataclass(frozen=True)
class AnomalyReport(Model):
    """An anomaly report, by the detector (`score`, `reasons`, `model_version`) or by hand (`source` manual)."""

    id: str
    agent_id: str
    type: str
    severity: str
    description: str = ""
    audit_log_id: str | None = None
    score: float | None = None
    reasons: list[str] = field(default_factory=list)
    source: str = ""
    model_version: int | None = None
    reported_by: str | None = None
    occurred_at: str | None = None
    created_at: str | None = None


@dataclass(frozen=True)
class GuardResult(Model):
    """The prompt guard's verdict on a text: `safe` (verdict allow) or not (block), the `score` against the
    `threshold`, per-category scores, and `reasons`. `validation_id` names it in `guard_feedback`."""

    safe: bool
    verdict: str
    validation_id: str | None = None
    score: float = 0.0
    threshold: float | None = None
    categories: dict[str, float] = field(default_factory=dict)
    category: str | None = None
    reasons: list[str] = field(default_factory=list)
    model_version: int | None = None
    model: str | None = None
    chunks: int | None = None
    source: str | None = None
    agent_id: str | None = None
    latency_ms: float | None = None


@dataclass(frozen=True)
class GuardFeedback(Model):
    """A stored label of a text for the guard's next training (`false_positive` or `attack`)."""

    id: str
    label: str
    category: str = ""
    validation_id: str | None = None
    sha256: str | None = None
    length: int | None = None
    created_by: str | None = None
    created_at: str | None = None
    feedback_count: int | None = None


@dataclass(frozen=True)
class TrainingTask(Model):
    """A detector training task: `status` queued, running, succeeded (writing `version`), failed or
    cancelled; `progress` 0..1. The guard's public status route leaves out params and errors."""

    task_id: str
    status: str
    detector: str = ""
    phase: str = ""
    progress: float = 0.0
    params: dict[str, Any] = field(default_factory=dict)
    requested_by: str | None = None
    trigger: str | None = None
    version: int | None = None
    error: str | None = None
    created_at: str | None = None
    started_at: str | None = None
    finished_at: str | None = None
    status_url: str | None = None


@dataclass(frozen=True)
class ModelVersion(Model):
    """A stored detector model version; `active` marks the one in use."""

    version: int
    active: bool = False
    created_at: str | None = None
    trained_by: str | None = None
    task_id: str | None = None
    training_window: dict[str, Any] = field(default_factory=dict)
    rows: int = 0
    params: dict[str, Any] = field(default_factory=dict)
    metrics: dict[str, Any] = field(default_factory=dict)
    threshold: float | None = None
