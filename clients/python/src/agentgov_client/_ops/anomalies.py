"""Anomaly reports and the anomaly detector's lifecycle (train, status, versions, rollback, cancel)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from agentgov_client._core import ClientCore
from agentgov_client._flow import Call, Flow
from agentgov_client._ops._common import (
    DEFAULT_PAGE_SIZE,
    Pager,
    body,
    iso_time,
    model,
    page_of,
    page_query,
    raw_object,
    seg,
)
from agentgov_client.models import AnomalyReport, ModelVersion, Page, TrainingTask

DETECTOR = "/anomalies/detector"


def report_anomaly(
    core: ClientCore,
    agent_id: str,
    description: str,
    *,
    severity: str = "medium",
    type: str = "manual",
    audit_log_id: str | None = None,
) -> Flow[AnomalyReport]:
    """``POST /anomalies/report`` (Developer+): report an anomaly by hand, optionally about one audit entry
    of that agent. Raises `NotFoundError` for an unknown agent or entry. Not retried."""
    payload = body(
        agent_id=str(agent_id), description=description, severity=severity, type=type, audit_log_id=audit_log_id
    )
    return core.execute(Call("POST", "/anomalies/report", model(AnomalyReport), json=payload))


def list_anomalies(
    core: ClientCore,
    *,
    agent_id: str | None = None,
    severity: str | None = None,
    type: str | None = None,
    since: datetime | str | None = None,
    until: datetime | str | None = None,
    limit: int = 50,
    offset: int = 0,
) -> Flow[Page[AnomalyReport]]:
    """``GET /anomalies`` (Security Analyst+; query ``skip``): reports, newest event first. Retried."""
    query = page_query(
        "skip",
        offset,
        limit,
        agent_id=agent_id,
        severity=severity,
        type=type,
        since=iso_time(since),
        until=iso_time(until),
    )
    return core.execute(Call("GET", "/anomalies", page_of(AnomalyReport), params=query))


def iter_anomalies(
    core: ClientCore,
    *,
    agent_id: str | None = None,
    severity: str | None = None,
    type: str | None = None,
    since: datetime | str | None = None,
    until: datetime | str | None = None,
    page_size: int = DEFAULT_PAGE_SIZE,
) -> Pager[AnomalyReport]:
    """Every report matching the filters, page after page (see `list_anomalies`)."""

    def fetch(offset: int, limit: int) -> Any:
        return list_anomalies(
            core,
            agent_id=agent_id,
            severity=severity,
            type=type,
            since=since,
            until=until,
            limit=limit,
            offset=offset,
        )

    return Pager(fetch, page_size)


def anomaly_stats(
    core: ClientCore,
    *,
    agent_id: str | None = None,
    since: datetime | str | None = None,
    until: datetime | str | None = None,
) -> Flow[dict[str, Any]]:
    """``GET /anomalies/stats`` (Security Analyst+): report counts by type, severity, agent, source and day
    (default window: the last 30 days). Retried."""
    query = body(agent_id=agent_id, since=iso_time(since), until=iso_time(until))
    return core.execute(Call("GET", "/anomalies/stats", raw_object, params=query))


def anomaly_detector_status(core: ClientCore) -> Flow[dict[str, Any]]:
    """``GET /anomalies/detector/status``: active version, threshold, automatic training, running task."""
    return core.execute(Call("GET", f"{DETECTOR}/status", raw_object))


def anomaly_detector_metrics(core: ClientCore) -> Flow[dict[str, Any]]:
    """``GET /anomalies/detector/metrics``: validation figures and precision/recall against manual reports."""
    return core.execute(Call("GET", f"{DETECTOR}/metrics", raw_object))


def anomaly_detector_versions(core: ClientCore, *, limit: int = 50, offset: int = 0) -> Flow[Page[ModelVersion]]:
    """``GET /anomalies/detector/versions`` (query ``skip``): stored model versions, newest first."""
    query = page_query("skip", offset, limit)
    return core.execute(Call("GET", f"{DETECTOR}/versions", page_of(ModelVersion), params=query))


def train_anomaly_detector(
    core: ClientCore,
    *,
    target_alert_rate: float | None = None,
    session_gap_seconds: float | None = None,
    min_events_per_agent: int | None = None,
    window_days: float | None = None,
    max_rows: int | None = None,
) -> Flow[TrainingTask]:
    """``POST /anomalies/detector/train`` (Admin+): start training on the logged actions (202); the parameters
    default to the service's settings. Follow it with `anomaly_training_status`. Raises `ConflictError` when
    a training is already queued or running (``body["task_id"]``). Not retried."""
    payload = body(
        target_alert_rate=target_alert_rate,
        session_gap_seconds=session_gap_seconds,
        min_events_per_agent=min_events_per_agent,
        window_days=window_days,
        max_rows=max_rows,
    )
    return core.execute(Call("POST", f"{DETECTOR}/train", model(TrainingTask), json=payload or None))


def anomaly_training_status(core: ClientCore, task_id: str | None = None) -> Flow[TrainingTask]:
    """``GET /anomalies/detector/training-status/{task_id}``, or without `task_id`
    ``GET /anomalies/detector/training/status`` (the running task, else the last). Raises `NotFoundError`
    (unknown task, or no training ever). Retried."""
    path = f"{DETECTOR}/training/status" if task_id is None else f"{DETECTOR}/training-status/{seg(task_id)}"
    return core.execute(Call("GET", path, model(TrainingTask)))


def cancel_anomaly_training(core: ClientCore) -> Flow[TrainingTask]:
    """``DELETE /anomalies/detector/cancel`` (Admin+): kill the running training; the active version stays.
    Raises `ConflictError` when none is running. Not retried."""
    return core.execute(Call("DELETE", f"{DETECTOR}/cancel", model(TrainingTask)))


def rollback_anomaly_detector(core: ClientCore, version: int) -> Flow[ModelVersion]:
    """``POST /anomalies/detector/rollback/{version}`` (Admin+): activate a stored version. Raises
    `NotFoundError` for a version not stored. Not retried."""
    return core.execute(Call("POST", f"{DETECTOR}/rollback/{int(version)}", model(ModelVersion)))


def set_anomaly_threshold(core: ClientCore, threshold: float | None) -> Flow[dict[str, Any]]:
    """``PUT /anomalies/detector/threshold`` (Admin+): the tenant's alert threshold (0..1), or None for the
    active version's own; returns the detector status. Raises `ConflictError` before any version is active."""
    return core.execute(Call("PUT", f"{DETECTOR}/threshold", raw_object, json={"threshold": threshold}))
