"""The prompt guard: validation, its counters, feedback and the guard detector's lifecycle.

Validating and reading (stats, detector status, metrics, versions, settings) need `guard:use` (Developer+);
feedback, training, cancelling, rolling back and changing the settings `guard:manage` (Security Analyst+).
`GET /guard/health` and `GET /guard/detector/training/status?task_id=` take no credentials and answer nothing
about any tenant's data. See docs/prompt-guard.md.
"""

from __future__ import annotations

import uuid
from contextlib import suppress
from typing import Any, Literal

import trio
from pydantic import BaseModel, ConfigDict, Field, StrictBool, model_validator
from quart import Blueprint
from quart_schema import document_request, document_response, tag

from agentgov.actors.audit import AuditUnavailable, EntryRejected
from agentgov.actors.registry import AgentNotFound, lookup_agent
from agentgov.actors.runtime import ActorStopped
from agentgov.detection.guard import (
    AUTO_TRAIN_FEEDBACK,
    DEFAULT_MODEL_VERSION,
    GUARD,
    IN_LOOP_CHARS,
    MAX_NORMALISED_CHARS,
    MAX_PROMPT_CHARS,
    PromptTooLong,
    ValidationRequest,
    active_guard,
    default_model_label,
    folded_length,
    guard_detector,
    shipped_model,
    validate,
)
from agentgov.http.auth import Scheme, authorize, principal, public, services, tenant_id
from agentgov.http.detector_routes import (
    TaskOut,
    TrainAccepted,
    VersionOut,
    VersionQuery,
    cancel_training,
    list_versions,
    optional_body,
    repo,
    restore_default,
    rollback,
    start_training,
    task_body,
    version_number,
)
from agentgov.http.errors import ApiError
from agentgov.http.ids import parse_uuid
from agentgov.http.schemas import Page, RequestModel
from agentgov.http.validation import json_body, parse_model, query
from agentgov.ml.guard.base import default_document
from agentgov.ml.guard.model import CHUNK_CHARS
from agentgov.ml.guard.rules import CATEGORIES, RULES
from agentgov.security.principal import Principal
from agentgov.security.roles import Permission
from agentgov.services import Services
from agentgov.storage.guard import GuardRepo, GuardSettings

bp = Blueprint("guard", __name__)
DETECTOR = "The prompt guard"
Source = Literal["user", "tool_output", "document", "system"]
Category = Literal["injection", "jailbreak", "leakage"]


class ValidateIn(RequestModel):
    prompt: str = Field(min_length=1, max_length=MAX_PROMPT_CHARS, description="the text to judge")
    source: Source | None = Field(
        default=None,
        description=(
            "where the text comes from; `system` marks the operator's own instructions, which only an attack's "
            "phrasing (a rule) or hidden text blocks"
        ),
    )
    agent_id: uuid.UUID | None = Field(default=None, description="the agent about to read it (one of this tenant)")
    context: dict[str, Any] | None = Field(default=None, description="kept with the audit record of a block")


class ValidateOut(BaseModel):
    validation_id: str = Field(description="names this validation in feedback (for an hour, on this process)")
    safe: bool
    verdict: Literal["allow", "block"]
    score: float = Field(description="0..1: the strongest of the classifier and the rules")
    threshold: float = Field(description="score at and above which the text is blocked")
    categories: dict[str, float] = Field(description="score per category: injection, jailbreak, leakage")
    category: str | None = Field(description="the strongest category of a block (null when allowed)")
    reasons: list[str] = Field(description="what was found: rules and fragments, the classifier, obfuscation")
    model_version: int = Field(description="the tenant's model version; 0 for the shipped default model")
    model: Literal["default", "tenant"]
    chunks: int = Field(description="pieces a long text was read in (each judged whole)")
    source: str | None
    agent_id: str | None
    latency_ms: float


class FeedbackIn(RequestModel):
    validation_id: uuid.UUID | None = Field(default=None, description="a recent validation of this tenant")
    prompt: str | None = Field(default=None, min_length=1, max_length=MAX_PROMPT_CHARS)
    label: Literal["false_positive", "attack"]
    category: Category | None = Field(default=None, description="for an attack (default: the guard's own guess)")

    @model_validator(mode="after")
    def _one_text(self) -> FeedbackIn:
        if (self.validation_id is None) == (self.prompt is None):
            raise ValueError("give exactly one of validation_id and prompt")
        if self.label == "false_positive" and self.category is not None:
            raise ValueError("category applies to label attack only")
        return self


class FeedbackOut(BaseModel):
    id: str
    validation_id: str | None
    label: str
    category: str = Field(description="benign for a false positive")
    sha256: str
    length: int
    created_by: str
    created_at: str
    feedback_count: int = Field(description="the tenant's feedback rows in all")


class TrainIn(RequestModel):
    model_config = ConfigDict(strict=True)  # numbers only: "0.02" is no number

    target_fpr: float | None = Field(default=None, ge=0.001, le=0.2, description="held-out false-positive rate")
    feedback_weight: float | None = Field(default=None, ge=1, le=100, description="weight of a feedback row")
    regularisation: float | None = Field(default=None, ge=0.01, le=1000)
    max_family_fpr: float | None = Field(
        default=None,
        ge=0.001,
        le=0.2,
        description="held-out false-positive rate of any one benign source family",
    )
    style_weight: float | None = Field(default=None, ge=0, le=0.9, description="the style model's share (0: none)")
    style_words: int | None = Field(default=None, ge=50, le=5000, description="tokens the style model keeps")
    style_regularisation: float | None = Field(default=None, ge=0.01, le=1000)
    harm_fpr: float | None = Field(
        default=None,
        ge=0,
        le=0.05,
        description="benign base rows a framed harmful request may flag (0: none)",
    )


class TaskQuery(BaseModel):
    task_id: str = Field(min_length=1, max_length=100)


class PublicTaskOut(BaseModel):
    task_id: str
    detector: str
    status: str
    phase: str
    progress: float
    created_at: str
    started_at: str | None
    finished_at: str | None


class RollbackOut(VersionOut):
    """The version now active: a stored one of the tenant, or version 0, the shipped default model (with no
    training time, trainer or task)."""

    model: Literal["tenant", "default"] = Field(description="the tenant's own version, or the shipped default")
    default_model_version: str = Field(description="the shipped default model's label, e.g. base-8")
    created_at: str | None  # type: ignore[assignment]
    trained_by: str | None  # type: ignore[assignment]


class SettingsIn(RequestModel):
    record_prompts: StrictBool = Field(description="keep a blocked prompt's text in its audit entry (default: off)")


class SettingsOut(BaseModel):
    record_prompts: bool


# ------------------------------------------------------------------------------------------------ validate


@bp.get("/guard/health")
@public
@tag(["guard"])
async def health() -> dict[str, Any]:
    """Liveness and configuration of the guard: the default model loaded, its version and threshold, limits.
    Nothing tenant-specific."""
    model = await shipped_model()
    return {
        "status": "ok",
        "default_model": {
            "loaded": True,
            "version": default_model_label(),
            "threshold": model.threshold,
            "trained_on": default_document()["trained_on"],
        },
        "max_prompt_chars": MAX_PROMPT_CHARS,
        "max_normalised_chars": MAX_NORMALISED_CHARS,
        "chunk_chars": CHUNK_CHARS,
        "in_loop_chars": IN_LOOP_CHARS,
        "categories": list(CATEGORIES),
        "rules": len(RULES),
        "auto_train_feedback": AUTO_TRAIN_FEEDBACK,
    }


@bp.post("/guard/validate")
@authorize(Scheme.API_KEY, permission=Permission.GUARD_USE)
@tag(["guard"])
@json_body(ValidateIn)
@document_response(ValidateOut)
async def validate_prompt(data: ValidateIn) -> dict[str, Any]:
    """Judge a text for injection, jailbreak and leakage (Developer+). A `block` is recorded in the audit trail
    (`kind: guard`: the text's sha256 and length; the text itself only with the `record_prompts` setting).
    422 for a text over `max_prompt_chars` (see `/guard/health`), or one that Unicode compatibility
    normalisation (NFKC) would make longer than `max_normalised_chars`; 404 for an agent that is not this
    tenant's; 503 with Retry-After when a block cannot be recorded (nothing is answered unrecorded)."""
    return await answer_validation(services(), principal(), data)


async def run_validate(svc: Services, who: Principal, payload: Any) -> dict[str, Any]:
    """The hot path's handler of `POST /guard/validate` (`agentgov.http.hot_path`): the same answers."""
    return await answer_validation(svc, who, parse_model(ValidateIn, payload))


async def answer_validation(svc: Services, who: Principal, data: ValidateIn) -> dict[str, Any]:
    tid = who.tenant_id
    assert tid is not None  # the route is tenant-scoped
    agent_id = None if data.agent_id is None else str(data.agent_id)
    if agent_id is not None:
        try:
            await lookup_agent(svc, tid, agent_id)
        except AgentNotFound:
            raise ApiError(404, "Agent not found") from None
    request = ValidationRequest(
        prompt=data.prompt, source=data.source, agent_id=agent_id, context=data.context, actor=who.actor_label
    )
    try:
        return await validate(svc, tid, request)
    except PromptTooLong as exc:
        raise _too_long(exc) from None
    except EntryRejected as exc:  # what the request carries cannot be stored (the block is answered unrecorded never)
        raise ApiError(422, f"The block could not be recorded in the audit trail: {exc}") from None
    except AuditUnavailable as exc:
        detail = f"The block could not be recorded in the audit trail: {exc}"
        raise ApiError(503, detail, headers={"Retry-After": "5"}) from None


def _too_long(exc: PromptTooLong) -> ApiError:
    """The 422 for a prompt that normalises past the limit, naming the field as validation errors do."""
    return ApiError(
        422,
        f"Invalid request body: prompt: {exc}",
        errors=[{"field": "prompt", "message": str(exc), "type": "string_too_long"}],
    )


@bp.get("/guard/stats")
@authorize(Scheme.API_KEY, permission=Permission.GUARD_USE)
@tag(["guard"])
async def stats() -> dict[str, Any]:
    """This process's guard counters for the calling tenant since it started: validations, blocks per
    category, and the latency (p50/p99, milliseconds) of its recent validations."""
    counters = services().guard.of(tenant_id())
    return {
        "scope": "this process, since it started",
        "validations": counters.validations,
        "blocks": counters.blocks,
        "allowed": counters.validations - counters.blocks,
        "blocks_by_category": {name: counters.blocks_by_category.get(name, 0) for name in CATEGORIES},
        "latency_ms": counters.latency(),
    }


# ------------------------------------------------------------------------------------------------ settings


@bp.get("/guard/settings")
@authorize(Scheme.API_KEY, permission=Permission.GUARD_USE)
@tag(["guard"])
@document_response(SettingsOut)
async def get_settings() -> dict[str, Any]:
    """The tenant's guard settings."""
    settings = await GuardRepo(services().db).settings(tenant_id())
    return {"record_prompts": settings.record_prompts}


@bp.put("/guard/settings")
@authorize(Scheme.API_KEY, permission=Permission.GUARD_MANAGE)
@tag(["guard"])
@json_body(SettingsIn)
@document_response(SettingsOut)
async def put_settings(data: SettingsIn) -> dict[str, Any]:
    """Change the tenant's guard settings (Security Analyst+); validations use them as soon as this answers."""
    stored = await GuardRepo(services().db).set_settings(tenant_id(), GuardSettings(record_prompts=data.record_prompts))
    return {"record_prompts": stored.record_prompts}


# ------------------------------------------------------------------------------------------------ detector


@bp.get("/guard/detector/status")
@authorize(Scheme.API_KEY, permission=Permission.GUARD_USE)
@tag(["guard"])
async def detector_status() -> dict[str, Any]:
    """The model validating this tenant's texts (its own version, or the shipped default), its threshold,
    the tenant's feedback count, and the running (or last) training task."""
    svc, tid = services(), tenant_id()
    guard = await active_guard(svc, tid)
    latest = await repo(GUARD).latest_task(tid)
    feedback = GuardRepo(svc.db)
    return {
        "detector": "guard",
        "model": guard.source,
        "active_version": guard.version,
        "default_model_version": default_model_label(),
        "threshold": guard.model.threshold,
        "trained_at": guard.trained_at,
        "feedback_count": await feedback.count_feedback(tid),
        "feedback_since_model": await feedback.count_feedback(tid, since=guard.since),
        "auto_training": {"enabled": svc.settings.detectors.auto_train, "after_feedback": AUTO_TRAIN_FEEDBACK},
        "running_task": task_body(latest) if latest is not None and latest.live else None,
        "last_task": task_body(latest) if latest is not None and not latest.live else None,
    }


@bp.get("/guard/detector/metrics")
@authorize(Scheme.API_KEY, permission=Permission.GUARD_USE)
@tag(["guard"])
async def detector_metrics() -> dict[str, Any]:
    """Precision, recall, F1, false-positive rate and ROC-AUC of the active model: on held-out text (each base
    text scored by a model fitted without its source family; also per family) and on the tenant's feedback
    (scored out of fold when it was trained on)."""
    svc, tid = services(), tenant_id()
    guard = await active_guard(svc, tid)  # the default model read: its document is cached
    if guard.source == "default":
        metrics = default_document()["metrics"]
    else:
        stored = await repo(GUARD).get_version(tid, guard.version)
        metrics = {} if stored is None else stored.metrics
    return {
        "model": guard.source,
        "active_version": guard.version,
        "threshold": guard.model.threshold,
        "held_out": metrics.get("held_out"),
        "held_out_by_family": metrics.get("held_out_by_family"),
        "feedback": metrics.get("feedback"),
        "evaluation": metrics.get("evaluation"),
    }


@bp.get("/guard/detector/versions")
@authorize(Scheme.API_KEY, permission=Permission.GUARD_USE)
@tag(["guard"])
@query(VersionQuery)
@document_response(Page[VersionOut])
async def versions(query: VersionQuery) -> dict[str, Any]:
    """The tenant's stored model versions, newest first; `active` marks the one in use (none: the default)."""
    return await list_versions(GUARD, query)


@bp.post("/guard/detector/train")
@authorize(Scheme.API_KEY, permission=Permission.GUARD_MANAGE)
@tag(["guard"])
@document_request(TrainIn)
@document_response(TrainAccepted, 202)
async def train() -> tuple[dict[str, Any], int, dict[str, str]]:
    """Train the tenant's model on the base data plus its feedback (Security Analyst+): 202 with the task.
    The body is optional. 409 naming the task when one is already queued or running (in any process)."""
    params = await optional_body(TrainIn)
    return await start_training(GUARD, params, DETECTOR, "/api/v1/guard/detector/training/status?task_id={task_id}")


@bp.get("/guard/detector/training/status")
@public
@tag(["guard"])
@query(TaskQuery)
@document_response(PublicTaskOut)
async def training_status(query: TaskQuery) -> dict[str, Any]:
    """Progress and state of one guard training task, by its unguessable id; no credentials. Nothing about
    the tenant or its data is answered (no parameters, metrics or error text). 404 for an unknown id."""
    task = await repo(GUARD).find_task(parse_uuid(query.task_id, "task_id"))
    if task is None:
        raise ApiError(404, "Training task not found")
    body = task_body(task)
    return {name: body[name] for name in PublicTaskOut.model_fields}


@bp.post("/guard/detector/rollback/<version>")
@authorize(Scheme.API_KEY, permission=Permission.GUARD_MANAGE)
@tag(["guard"])
@document_response(RollbackOut)
async def rollback_version(version: str) -> dict[str, Any]:
    """Activate a stored version of the tenant's model (Security Analyst+), or with version 0 the shipped
    default model again (the tenant's versions are kept, and any can be activated later); every process serves
    it within about a second. 404 for a version that is not stored."""
    if version_number(version, allow_default=True) == DEFAULT_MODEL_VERSION:
        await restore_default(GUARD, DETECTOR)
        document = default_document()
        return {
            "version": DEFAULT_MODEL_VERSION,
            "model": "default",
            "default_model_version": default_model_label(),
            "active": True,
            "created_at": None,
            "trained_by": None,
            "task_id": None,
            "training_window": {"start": None, "end": None},
            "rows": document["trained_on"]["rows"],
            "params": document["params"],
            "metrics": document["metrics"],
            "threshold": (await shipped_model()).threshold,
        }
    body = await rollback(GUARD, version, DETECTOR)
    return {**body, "model": "tenant", "default_model_version": default_model_label()}


@bp.delete("/guard/detector/cancel")
@authorize(Scheme.API_KEY, permission=Permission.GUARD_MANAGE)
@tag(["guard"])
@document_response(TaskOut)
async def cancel() -> dict[str, Any]:
    """Cancel the running training (Security Analyst+): its worker process is killed, the task ends
    `cancelled`, the active model stays. 409 when none is running."""
    return await cancel_training(GUARD, DETECTOR)


@bp.post("/guard/detector/feedback")
@authorize(Scheme.API_KEY, permission=Permission.GUARD_MANAGE)
@tag(["guard"])
@json_body(FeedbackIn)
@document_response(FeedbackOut, 201)
async def feedback(data: FeedbackIn) -> tuple[dict[str, Any], int]:
    """Label a text (Security Analyst+): `false_positive` (benign text the guard blocked) or `attack` (one it
    missed, with its category). Name the text by a recent `validation_id` of this tenant (kept for an hour by
    the process that validated it) or send it as `prompt`. 404 for an unknown or expired validation id.
    The next training of the tenant's model learns from it."""
    svc, tid = services(), tenant_id()
    validation_id = None if data.validation_id is None else str(data.validation_id)
    guessed = "injection"
    if validation_id is not None:
        recent = svc.guard.recent.get(tid, validation_id)
        if recent is None:
            raise ApiError(
                404, "Validation not found: unknown, expired or validated by another process; send the prompt instead"
            )
        text, guessed = recent.text, recent.category
    else:
        assert data.prompt is not None
        text = data.prompt
        try:  # a text the guard could not validate is not learnt from either (measured off the event loop)
            await trio.to_thread.run_sync(folded_length, text)
        except PromptTooLong as exc:
            raise _too_long(exc) from None
    category = "benign" if data.label == "false_positive" else (data.category or guessed)
    guard_repo = GuardRepo(svc.db)
    stored = await guard_repo.add_feedback(
        tid,
        text=text,
        label=data.label,
        category=category,
        validation_id=validation_id,
        created_by=principal().actor_label,
    )
    with suppress(ActorStopped):  # the tenant's detector runs here, so automatic training counts this feedback
        guard_detector(svc, tid)  # (not while the process stops: the feedback is stored all the same)
    return {**stored.to_public(), "feedback_count": await guard_repo.count_feedback(tid)}, 201
