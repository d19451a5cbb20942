"""The prompt guard: validation, feedback, settings and the guard detector's lifecycle."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentgov_client._core import ClientCore
from agentgov_client._flow import Call, Flow
from agentgov_client._ops._common import body, model, page_of, page_query, raw_object
from agentgov_client.models import GuardFeedback, GuardResult, ModelVersion, Page, TrainingTask

DETECTOR = "/guard/detector"


def validate_prompt(
    core: ClientCore,
    prompt: str,
    *,
    source: str | None = None,
    agent_id: str | None = None,
    context: Mapping[str, Any] | None = None,
) -> Flow[GuardResult]:
    """``POST /guard/validate`` (Developer+): judge a text an agent is about to read for injection, jailbreak
    and leakage. `source` is user, tool_output, document or system. A block is recorded in the audit trail.
    Raises `ValidationError` (e.g. a text over the guard's size limit), `NotFoundError` for an unknown agent.
    Retried (a validation is safe to repeat)."""
    payload = body(
        prompt=prompt,
        source=source,
        agent_id=None if agent_id is None else str(agent_id),
        context=None if context is None else dict(context),
    )
    return core.execute(Call("POST", "/guard/validate", model(GuardResult), json=payload, retry_safe=True))


def guard_feedback(
    core: ClientCore,
    label: str,
    *,
    validation_id: str | None = None,
    prompt: str | None = None,
    category: str | None = None,
) -> Flow[GuardFeedback]:
    """``POST /guard/detector/feedback`` (Security Analyst+): label a text ``false_positive`` or ``attack``
    (with its `category`), named by a recent `validation_id` or sent as `prompt` (exactly one of them).
    Raises `NotFoundError` for an unknown or expired validation id. Not retried."""
    payload = body(label=label, validation_id=validation_id, prompt=prompt, category=category)
    return core.execute(Call("POST", f"{DETECTOR}/feedback", model(GuardFeedback), json=payload))


def guard_health(core: ClientCore) -> Flow[dict[str, Any]]:
    """``GET /guard/health``: the guard's liveness and configuration (no credentials needed). Retried."""
    return core.execute(Call("GET", "/guard/health", raw_object))


def guard_stats(core: ClientCore) -> Flow[dict[str, Any]]:
    """``GET /guard/stats``: this server process's guard counters for the tenant. Retried."""
    return core.execute(Call("GET", "/guard/stats", raw_object))


def guard_status(core: ClientCore) -> Flow[dict[str, Any]]:
    """``GET /guard/detector/status``: the tenant's model (its own or the default), threshold, feedback
    count and running task. Retried."""
    return core.execute(Call("GET", f"{DETECTOR}/status", raw_object))


def guard_metrics(core: ClientCore) -> Flow[dict[str, Any]]:
    """``GET /guard/detector/metrics``: precision, recall, F1, false-positive rate of the active model."""
    return core.execute(Call("GET", f"{DETECTOR}/metrics", raw_object))


def guard_versions(core: ClientCore, *, limit: int = 50, offset: int = 0) -> Flow[Page[ModelVersion]]:
    """``GET /guard/detector/versions`` (query ``skip``): the tenant's model versions, newest first."""
    query = page_query("skip", offset, limit)
    return core.execute(Call("GET", f"{DETECTOR}/versions", page_of(ModelVersion), params=query))


def train_guard(
    core: ClientCore,
    *,
    target_fpr: float | None = None,
    feedback_weight: float | None = None,
    regularisation: float | None = None,
) -> Flow[TrainingTask]:
    """``POST /guard/detector/train`` (Security Analyst+): train the tenant's model on the base data and its
    feedback (202); the parameters default to the service's. Follow it with `guard_training_status`. Raises
    `ConflictError` when one is already queued or running. Not retried."""
    payload = body(target_fpr=target_fpr, feedback_weight=feedback_weight, regularisation=regularisation)
    return core.execute(Call("POST", f"{DETECTOR}/train", model(TrainingTask), json=payload or None))


def guard_training_status(core: ClientCore, task_id: str) -> Flow[TrainingTask]:
    """``GET /guard/detector/training/status?task_id=``: a training task's progress (public fields only).
    Raises `NotFoundError`. Retried."""
    return core.execute(Call("GET", f"{DETECTOR}/training/status", model(TrainingTask), params={"task_id": task_id}))


def cancel_guard_training(core: ClientCore) -> Flow[TrainingTask]:
    """``DELETE /guard/detector/cancel`` (Security Analyst+). Raises `ConflictError` when none is running."""
    return core.execute(Call("DELETE", f"{DETECTOR}/cancel", model(TrainingTask)))


def rollback_guard(core: ClientCore, version: int) -> Flow[ModelVersion]:
    """``POST /guard/detector/rollback/{version}`` (Security Analyst+). Raises `NotFoundError`."""
    return core.execute(Call("POST", f"{DETECTOR}/rollback/{int(version)}", model(ModelVersion)))


def get_guard_settings(core: ClientCore) -> Flow[dict[str, Any]]:
    """``GET /guard/settings``: ``{"record_prompts": bool}``. Retried."""
    return core.execute(Call("GET", "/guard/settings", raw_object))


def set_guard_settings(core: ClientCore, *, record_prompts: bool) -> Flow[dict[str, Any]]:
    """``PUT /guard/settings`` (Security Analyst+): keep a blocked text in its audit entry or not."""
    return core.execute(Call("PUT", "/guard/settings", raw_object, json={"record_prompts": record_prompts}))
