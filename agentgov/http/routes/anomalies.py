"""Anomaly reports and the anomaly detector's lifecycle.

Reading (reports, statistics, detector status, metrics, versions, training status) needs `anomalies:read`
(Security Analyst+); a manual report `anomalies:report` (Developer+); training, cancelling, rolling back and
setting the threshold `anomalies:manage` (Admin+). See docs/anomaly-detection.md.
"""

from __future__ import annotations

import logging
import uuid
from datetime import timedelta
from typing import Any, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field
from quart import Blueprint
from quart_schema import document_request, document_response, tag

from agentgov.actors.registry import AgentNotFound, lookup_agent
from agentgov.actors.relay import publish_event
from agentgov.detection.anomaly import ANOMALY, anomaly_detector, anomaly_scorer, scoring_view
from agentgov.detection.lifecycle import (
    DetectorView,
    SetThreshold,
    detector_view,
)
from agentgov.http.actor_calls import ask_actor
from agentgov.http.auth import Scheme, authorize, principal, services, tenant_id
from agentgov.http.detector_routes import (
    TaskOut,
    TrainAccepted,
    VersionOut,
    VersionQuery,
    cancel_training,
    latest_task,
    list_versions,
    optional_body,
    repo,
    start_training,
    task_body,
    tenant_task,
)
from agentgov.http.detector_routes import rollback as rollback_to
from agentgov.http.errors import ApiError
from agentgov.http.schemas import DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, Page, RequestModel, page
from agentgov.http.validation import json_body, query
from agentgov.logs import fields
from agentgov.security.roles import Permission
from agentgov.siem import outbox as siem
from agentgov.siem.events import anomaly_event
from agentgov.storage.anomalies import AnomalyRepo, NewReport, ReportFilter
from agentgov.storage.audit import AuditRepo
from agentgov.storage.detectors import DetectorRepo
from agentgov.storage.orphans import owner_at_start
from agentgov.timeutil import now, to_iso

bp = Blueprint("anomalies", __name__)
log = logging.getLogger("agentgov.anomaly")
DETECTOR = "The anomaly detector"
Severity = Literal["low", "medium", "high", "critical"]


class ReportOut(BaseModel):
    id: str
    agent_id: str
    audit_log_id: str | None
    type: str = Field(description="new_tool, burst, off_hours, sequence, arguments, reasoning, or manual")
    severity: str = Field(description="low, medium, high or critical")
    score: float | None = Field(description="the detector's score (null for a manual report)")
    description: str
    reasons: list[str]
    source: str = Field(description="detector or manual")
    model_version: int | None
    reported_by: str
    occurred_at: str = Field(description="when the action happened (event time)")
    created_at: str


class ReportQuery(BaseModel):
    agent_id: uuid.UUID | None = None
    severity: Severity | None = None
    type: str | None = Field(default=None, min_length=1, max_length=50)
    since: AwareDatetime | None = Field(default=None, description="event time, inclusive (ISO 8601 with a zone)")
    until: AwareDatetime | None = Field(default=None, description="event time, exclusive")
    skip: int = Field(default=0, ge=0, description="reports to skip (reported as offset)")
    limit: int = Field(default=DEFAULT_PAGE_SIZE, ge=1, le=MAX_PAGE_SIZE)


class StatsQuery(BaseModel):
    agent_id: uuid.UUID | None = None
    since: AwareDatetime | None = Field(default=None, description="default: 30 days before until")
    until: AwareDatetime | None = Field(default=None, description="default: now")


class StatsOut(BaseModel):
    since: str
    until: str
    total: int
    by_type: dict[str, int]
    by_severity: dict[str, int]
    by_agent: dict[str, int]
    by_source: dict[str, int]
    by_day: dict[str, int] = Field(description="reports per UTC day (YYYY-MM-DD) of their event time")


class ManualReport(RequestModel):
    agent_id: uuid.UUID = Field(description="an agent of this tenant")
    audit_log_id: uuid.UUID | None = Field(default=None, description="the audit entry concerned, if any")
    description: str = Field(min_length=1, max_length=2000)
    severity: Severity = "medium"
    type: str = Field(default="manual", min_length=1, max_length=50)


class TrainRequest(RequestModel):
    model_config = ConfigDict(strict=True)  # numbers only: "0.02" is no number

    target_alert_rate: float | None = Field(
        default=None,
        gt=0,
        lt=0.5,
        description="share of normal traffic over the threshold (default: setting)",
    )
    session_gap_seconds: float | None = Field(default=None, gt=0, le=86400)
    min_events_per_agent: int | None = Field(default=None, ge=5, le=100000)
    window_days: float | None = Field(default=None, gt=0, le=3650, description="history to learn from")
    max_rows: int | None = Field(default=None, ge=100, le=5_000_000)


class ThresholdIn(RequestModel):
    threshold: float | None = Field(
        strict=True, ge=0.0, le=1.0, description="0..1; null goes back to the version's own"
    )


class AutoTrainingOut(BaseModel):
    enabled: bool
    min_history: int
    retrain_hours: float


class StatusOut(BaseModel):
    detector: str
    model_kind: str
    active_version: int | None
    threshold: float | None
    threshold_overridden: bool
    trained_at: str | None
    entries_scored: int = Field(description="entries this process scored since it started")
    anomalies_reported: int = Field(description="reports this process's detector created since it started")
    auto_training: AutoTrainingOut
    running_task: TaskOut | None
    last_task: TaskOut | None


class MetricsOut(BaseModel):
    active_version: int | None
    threshold: float | None
    validation: dict[str, Any] = Field(description="figures of the active version on its training window")
    manual_reports: dict[str, Any] = Field(description="precision and recall against manual reports of entries")
    live: dict[str, int]


def _repo() -> DetectorRepo:
    return repo(ANOMALY)


async def _view() -> DetectorView:
    view: DetectorView = await detector_view(services(), tenant_id(), ANOMALY)
    return view


# ------------------------------------------------------------------------------------------------ reports


@bp.get("/anomalies")
@authorize(Scheme.API_KEY, permission=Permission.ANOMALIES_READ)
@tag(["anomalies"])
@query(ReportQuery)
@document_response(Page[ReportOut])
async def list_reports(query: ReportQuery) -> dict[str, Any]:
    """Anomaly reports (the detector's and manual ones), newest event first; filter by agent, severity, type and
    event time."""
    where = ReportFilter(
        agent_id=None if query.agent_id is None else str(query.agent_id),
        severity=query.severity,
        type=query.type,
        since=None if query.since is None else to_iso(query.since),
        until=None if query.until is None else to_iso(query.until),
    )
    reports, total = await AnomalyRepo(services().db).list_reports(
        tenant_id(), where, limit=query.limit, offset=query.skip
    )
    return page([r.to_public() for r in reports], total, query.limit, query.skip)


@bp.get("/anomalies/stats")
@authorize(Scheme.API_KEY, permission=Permission.ANOMALIES_READ)
@tag(["anomalies"])
@query(StatsQuery)
@document_response(StatsOut)
async def stats(query: StatsQuery) -> dict[str, Any]:
    """Counts of reports by type, severity, agent, source and day over a window (default: the last 30 days)."""
    until = query.until or now()
    since = query.since or until - timedelta(days=30)
    if since >= until:
        raise ApiError(422, "Invalid query: since must be before until")
    where = ReportFilter(
        agent_id=None if query.agent_id is None else str(query.agent_id), since=to_iso(since), until=to_iso(until)
    )
    figures = await AnomalyRepo(services().db).stats(tenant_id(), where)
    return {"since": to_iso(since), "until": to_iso(until), **figures}


@bp.post("/anomalies/report")
@authorize(Scheme.API_KEY, permission=Permission.ANOMALIES_REPORT)
@tag(["anomalies"])
@json_body(ManualReport)
@document_response(ReportOut, 201)
async def report(data: ManualReport) -> tuple[dict[str, Any], int]:
    """Report an anomaly by hand (Developer+). 404 when the agent or the audit entry is not this tenant's.
    Publishes `anomaly.detected`; manual reports of entries also measure the detector (`/detector/metrics`)."""
    tid, svc = tenant_id(), services()
    agent_id = str(data.agent_id)
    try:
        await lookup_agent(svc, tid, agent_id)
    except AgentNotFound:
        raise ApiError(404, "Agent not found") from None
    occurred_at = to_iso(now())
    entry_id = None
    if data.audit_log_id is not None:
        entry = await AuditRepo(svc.db).get(tid, str(data.audit_log_id))
        if entry is None:
            raise ApiError(404, "Audit entry not found")
        if entry.agent_id != agent_id:
            raise ApiError(422, "Invalid request body: the audit entry is not an action of that agent")
        entry_id, occurred_at = entry.id, entry.timestamp
    stored = await AnomalyRepo(svc.db).create_report(
        tid,
        NewReport(
            agent_id=agent_id,
            audit_log_id=entry_id,
            type=data.type,
            severity=data.severity,
            score=None,
            description=data.description,
            reasons=[],
            source="manual",
            model_version=None,
            reported_by=principal().actor_label,
            occurred_at=occurred_at,
        ),
    )
    siem.record(svc, anomaly_event(stored))
    publish_event(svc, tid, "anomaly.detected", stored.to_public())
    return stored.to_public(), 201


# ----------------------------------------------------------------------------------------------- detector


@bp.get("/anomalies/detector/status")
@authorize(Scheme.API_KEY, permission=Permission.ANOMALIES_READ)
@tag(["anomalies"])
@document_response(StatusOut)
async def detector_status() -> dict[str, Any]:
    """The active version, its threshold and age, what this process scored, automatic training, and the
    running (or last) training task."""
    svc, tid = services(), tenant_id()
    view = await _view()
    latest = await _repo().latest_task(tid)
    settings = svc.settings.detectors
    model = view.model
    return {
        "detector": "anomaly",
        "model_kind": "per-agent behaviour profiles (tools, session paths, timing, arguments, reasoning)",
        "active_version": view.version,
        "threshold": None if model is None else model.threshold,
        "threshold_overridden": view.threshold is not None,
        "trained_at": view.trained_at,
        **_live_counters(tid),
        "auto_training": {
            "enabled": settings.auto_train,
            "min_history": settings.min_history,
            "retrain_hours": settings.retrain_hours,
        },
        "running_task": task_body(latest) if latest is not None and latest.live else None,
        "last_task": task_body(latest) if latest is not None and not latest.live else None,
    }


def _live_counters(tid: str) -> dict[str, int]:
    """What this process's scorer counted (it is started here if it was not running)."""
    svc = services()
    scoring = scoring_view(svc, tid)
    if scoring is None:
        anomaly_scorer(svc, tid)
        return {"entries_scored": 0, "anomalies_reported": 0}
    return {"entries_scored": scoring.counters.scored, "anomalies_reported": scoring.counters.flagged}


@bp.get("/anomalies/detector/metrics")
@authorize(Scheme.API_KEY, permission=Permission.ANOMALIES_READ)
@tag(["anomalies"])
@document_response(MetricsOut)
async def detector_metrics() -> dict[str, Any]:
    """The active version's validation figures (replayed held-out part of its training window: alert rate and
    score distribution), precision and recall against manual reports of audit entries made since it was
    trained, and this process's live counters."""
    svc, tid = services(), tenant_id()
    view = await _view()
    validation: dict[str, Any] = {}
    manual: dict[str, Any] = {"reports": 0, "flagged": 0, "recall": None, "precision": None}
    if view.version is not None and view.trained_at is not None:
        stored = await _repo().get_version(tid, view.version)
        validation = {} if stored is None else stored.metrics
        repo = AnomalyRepo(svc.db)
        reports = [r for r in await repo.manual_reports_since(tid, view.trained_at) if r.audit_log_id]
        entries = [await AuditRepo(svc.db).get(tid, r.audit_log_id or "") for r in reports]
        flagged = sum(1 for e in entries if e is not None and e.anomaly and '"is_anomaly": true' in e.anomaly)
        detected, _ = await repo.list_reports(tid, ReportFilter(since=view.trained_at), limit=MAX_PAGE_SIZE, offset=0)
        detector_flags = [r for r in detected if r.source == "detector"]
        confirmed = {r.audit_log_id for r in reports}
        manual = {
            "reports": len(reports),
            "flagged": flagged,
            "recall": None if not reports else round(flagged / len(reports), 4),
            "precision": None
            if not reports or not detector_flags
            else round(sum(1 for r in detector_flags if r.audit_log_id in confirmed) / len(detector_flags), 4),
        }
    return {
        "active_version": view.version,
        "threshold": None if view.model is None else view.model.threshold,
        "validation": validation,
        "manual_reports": manual,
        "live": _live_counters(tid),
    }


@bp.get("/anomalies/detector/versions")
@authorize(Scheme.API_KEY, permission=Permission.ANOMALIES_READ)
@tag(["anomalies"])
@query(VersionQuery)
@document_response(Page[VersionOut])
async def versions(query: VersionQuery) -> dict[str, Any]:
    """Stored model versions, newest first; `active` marks the one in use."""
    return await list_versions(ANOMALY, query)


@bp.post("/anomalies/detector/train")
@authorize(Scheme.API_KEY, permission=Permission.ANOMALIES_MANAGE)
@tag(["anomalies"])
@document_request(TrainRequest)
@document_response(TrainAccepted, 202)
async def train() -> tuple[dict[str, Any], int, dict[str, str]]:
    """Start training on the tenant's logged actions (Admin+): 202 with the task; follow it at `status_url`.
    The body is optional (training parameters). 409 naming the task when one is already queued or running
    (in any process)."""
    params = await optional_body(TrainRequest)
    return await start_training(ANOMALY, params, DETECTOR, "/api/v1/anomalies/detector/training-status/{task_id}")


@bp.get("/anomalies/detector/training/status")
@authorize(Scheme.API_KEY, permission=Permission.ANOMALIES_READ)
@tag(["anomalies"])
@document_response(TaskOut)
async def current_training() -> dict[str, Any]:
    """The running training task, else the last one; 404 when the tenant never trained."""
    return await latest_task(ANOMALY)


@bp.get("/anomalies/detector/training-status/<task_id>")
@authorize(Scheme.API_KEY, permission=Permission.ANOMALIES_READ)
@tag(["anomalies"])
@document_response(TaskOut)
async def training_status(task_id: str) -> dict[str, Any]:
    """One training task of this tenant (404 for an unknown id or another tenant's)."""
    return await tenant_task(ANOMALY, task_id)


@bp.post("/anomalies/detector/rollback/<version>")
@authorize(Scheme.API_KEY, permission=Permission.ANOMALIES_MANAGE)
@tag(["anomalies"])
@document_response(VersionOut)
async def rollback(version: str) -> dict[str, Any]:
    """Activate a stored version (Admin+): an older one (rollback) or a newer one again. Every process serves it
    within about a second. 404 for a version that is not stored (never trained, or removed by retention)."""
    return await rollback_to(ANOMALY, version, DETECTOR)


@bp.put("/anomalies/detector/threshold")
@authorize(Scheme.API_KEY, permission=Permission.ANOMALIES_MANAGE)
@tag(["anomalies"])
@json_body(ThresholdIn)
@document_response(StatusOut)
async def set_threshold(data: ThresholdIn) -> dict[str, Any]:
    """Set this tenant's alert threshold on the 0..1 score (Admin+), or `null` for the calibrated one of the
    active version. 409 without an active version."""
    view = await _view()
    if view.version is None:
        raise ApiError(409, "No model version is active yet; train the detector first")
    await ask_actor(anomaly_detector(services(), tenant_id()), SetThreshold(data.threshold), what=DETECTOR)
    return await detector_status()


@bp.delete("/anomalies/detector/cancel")
@authorize(Scheme.API_KEY, permission=Permission.ANOMALIES_MANAGE)
@tag(["anomalies"])
@document_response(TaskOut)
async def cancel() -> dict[str, Any]:
    """Cancel the running training (Admin+): its worker process is killed, the task ends `cancelled`, nothing
    is stored and the active version stays. 409 when no training is running."""
    return await cancel_training(ANOMALY, DETECTOR)


@bp.before_app_serving
async def _fail_orphaned_training() -> None:
    """A training task left queued or running by a process that stopped is failed at start: with SQLite every
    live task is (one process owns the database); with PostgreSQL those whose heartbeat is older than the lease
    (`TRAINING_LEASE_SECONDS`), the others being another live process's."""
    svc = services()
    owner = owner_at_start(svc.db.dialect, svc.instance_id)
    try:
        failed = await _repo().fail_orphaned_tasks(lease_seconds=svc.settings.detectors.training_lease, owner=owner)
    except Exception:
        log.exception("could not fail orphaned training tasks")
        return
    if failed:
        log.warning("training tasks of a stopped process marked failed", extra=fields(tasks=failed))
