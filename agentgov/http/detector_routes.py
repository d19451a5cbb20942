"""What the routes of both detectors (`/anomalies/detector/...`, `/guard/detector/...`) share: the shapes of
training tasks and versions, and the lifecycle calls with their error answers.

Each function acts on the calling tenant's detector of one `DetectorKind`; `what` names the detector in the
503 answered when its actor does not answer in time.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field
from quart import request

from agentgov.detection.lifecycle import (
    DEFAULT_VERSION,
    CancelTraining,
    DetectorKind,
    NothingToCancel,
    Rollback,
    StartTraining,
    TrainingInProgress,
    VersionNotFound,
    detector,
)
from agentgov.http.actor_calls import ask_actor
from agentgov.http.auth import principal, services, tenant_id
from agentgov.http.errors import ApiError
from agentgov.http.ids import parse_uuid
from agentgov.http.schemas import DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, RequestModel, page
from agentgov.http.validation import parse_model, read_json
from agentgov.storage.detectors import DetectorRepo, TrainingTask

MAX_VERSION = 2**31 - 1


class TaskOut(BaseModel):
    task_id: str
    detector: str
    status: str = Field(description="queued, running, succeeded, failed or cancelled")
    phase: str = Field(description="queued, loading, fitting, storing, then the final status")
    progress: float = Field(description="0..1")
    params: dict[str, Any]
    requested_by: str
    trigger: str = Field(description="manual or automatic")
    version: int | None = Field(description="the version written (succeeded)")
    error: str | None = Field(description="why it failed")
    created_at: str
    started_at: str | None
    finished_at: str | None


class TrainAccepted(TaskOut):
    status_url: str


class VersionOut(BaseModel):
    version: int
    active: bool
    created_at: str
    trained_by: str
    task_id: str | None
    training_window: dict[str, str | None]
    rows: int
    params: dict[str, Any]
    metrics: dict[str, Any]
    threshold: float


class VersionQuery(BaseModel):
    skip: int = Field(default=0, ge=0)
    limit: int = Field(default=DEFAULT_PAGE_SIZE, ge=1, le=MAX_PAGE_SIZE)


def repo(kind: DetectorKind) -> DetectorRepo:
    return DetectorRepo(services().db, kind.name)


def task_body(task: TrainingTask) -> dict[str, Any]:
    return TaskOut(**task.to_public()).model_dump()


def _conflict(exc: TrainingInProgress) -> ApiError:
    return ApiError(
        409,
        f"Training task {exc.task.id} is already {exc.task.status}; cancel it or wait for it to finish",
        task_id=exc.task.id,
    )


async def optional_body(model: type[RequestModel]) -> dict[str, Any]:
    """The request's JSON body parsed as `model` (an empty body is the model's defaults), without nulls."""
    raw = await request.get_data(as_text=False)
    body = model() if not raw.strip() else parse_model(model, await read_json())
    return body.model_dump(exclude_none=True)


async def start_training(kind: DetectorKind, params: dict[str, Any], what: str, status_url: str) -> Any:
    """Start a training: (202 body, status, Location header). 409 naming the live task."""
    task: TrainingTask = await ask_actor(
        detector(services(), tenant_id(), kind),
        StartTraining(requested_by=principal().actor_label, params=params),
        what=what,
        errors={TrainingInProgress: _conflict},
    )
    url = status_url.format(task_id=task.id)
    return {**task_body(task), "status_url": url}, 202, {"Location": url}


async def cancel_training(kind: DetectorKind, what: str) -> dict[str, Any]:
    """Cancel the running training; 409 when none runs."""
    task: TrainingTask = await ask_actor(
        detector(services(), tenant_id(), kind),
        CancelTraining(),
        what=what,
        errors={NothingToCancel: lambda exc: ApiError(409, f"Conflict: {exc}")},
    )
    return task_body(task)


async def rollback(kind: DetectorKind, raw_version: str, what: str) -> dict[str, Any]:
    """Activate a stored version and answer its body; 404 when it is not stored, 422 for a malformed number."""
    number = version_number(raw_version)
    tid = tenant_id()
    await ask_actor(
        detector(services(), tid, kind),
        Rollback(number),
        what=what,
        errors={VersionNotFound: lambda _: ApiError(404, f"Model version {number} not found")},
    )
    stored = await repo(kind).get_version(tid, number)
    if stored is None:  # removed between the two reads
        raise ApiError(404, f"Model version {number} not found")
    return stored.to_public(active=True)


async def restore_default(kind: DetectorKind, what: str) -> None:
    """Serve the kind's default model again (no stored version active; the versions are kept). Only for a
    kind with a default model (`DetectorKind.has_default`)."""
    await ask_actor(detector(services(), tenant_id(), kind), Rollback(DEFAULT_VERSION), what=what)


async def list_versions(kind: DetectorKind, query: VersionQuery) -> dict[str, Any]:
    tid = tenant_id()
    state = await repo(kind).state(tid)
    items, total = await repo(kind).versions(tid, limit=query.limit, offset=query.skip)
    return page([v.to_public(active=v.version == state.active_version) for v in items], total, query.limit, query.skip)


async def tenant_task(kind: DetectorKind, raw_task_id: str) -> dict[str, Any]:
    """One training task of the calling tenant; 404 for an unknown id or another tenant's."""
    task = await repo(kind).get_task(tenant_id(), parse_uuid(raw_task_id, "task_id"))
    if task is None:
        raise ApiError(404, "Training task not found")
    return task_body(task)


async def latest_task(kind: DetectorKind) -> dict[str, Any]:
    task = await repo(kind).latest_task(tenant_id())
    if task is None:
        raise ApiError(404, "No training task yet")
    return task_body(task)


def version_number(raw: str, *, allow_default: bool = False) -> int:
    """The version a path names: a positive integer, or 0 (the default model) where `allow_default`.
    Raises `ApiError` 422 otherwise."""
    lowest = DEFAULT_VERSION if allow_default else 1
    # ASCII digits only: `str.isdigit` also holds superscripts (which `int` refuses) and full-width or
    # Arabic-Indic digits (which it reads as ASCII ones)
    if not (raw.isascii() and raw.isdigit()) or not lowest <= int(raw) <= MAX_VERSION:
        expected = "0 (the default model) or a positive integer" if allow_default else "a positive integer"
        raise ApiError(
            422,
            f"Invalid path parameter: version must be {expected}",
            errors=[{"field": "version", "message": expected, "type": "value"}],
        )
    return int(raw)
