"""The prompt guard on the shared detector lifecycle: how a tenant's model trains (`GUARD`, a `DetectorKind`)
and how a text is validated (`validate`).

Model. Until a tenant trains, it is judged by the shipped default model (`agentgov.ml.guard.base`, reported
as `model_version` 0). A training fits the base data set plus the tenant's feedback (weighted, see
`GuardParams.feedback_weight`) in a worker process and stores the result as the tenant's next version, which
every process serves within about a second (the lifecycle's `DetectorView`). Rolling back to a version, or
training again, works as for the anomaly detector; rolling back to version 0 serves the default model again
(the tenant's versions are kept). Automatic training: once `AUTO_TRAIN_FEEDBACK` new feedback rows arrived
since the model in use became the tenant's (its version trained or rolled back to, the default restored, or the
start), when automatic training is on (`ANOMALY_AUTO_TRAIN`, shared by both detectors).

Validation. `validate` judges the text with the tenant's active model (`GuardModel.assess`: in the event loop
for texts up to `IN_LOOP_CHARS`, a few milliseconds; longer ones in a worker thread; a text of `source`
`OPERATOR_SOURCE` as the operator's own, which the classifier alone does not block, and one of `USER_SOURCE`
as the user's, whose hail of the model is no planted instruction), counts it in this
process (`Services.guard`), remembers its text for feedback by `validation_id`, and records a block in the
tenant's audit trail (`kind: guard`, the text's sha256 and length; the text itself only if the tenant set
`record_prompts`; a `context` the chain cannot represent as JSON, NaN or an infinity, as a note saying so).
Raises `AuditUnavailable`/`DatabaseError` as the audit actor does when a block cannot be recorded (the caller
answers 503: a block is never answered unrecorded), `EntryRejected` when the request carries what no audit
entry can hold (422), and `PromptTooLong` for a text that normalises past
`MAX_NORMALISED_CHARS` (422).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import time
import unicodedata
import uuid
from typing import TYPE_CHECKING, Any

import trio

from agentgov.actors.audit import AppendEntry, audit
from agentgov.actors.runtime import ActorRef, InvalidMessage
from agentgov.audit_chain import canonical_json
from agentgov.detection.guard_flush import guard_counters
from agentgov.detection.lifecycle import (
    DEFAULT_VERSION,
    FitResult,
    TrainingData,
    detector,
    detector_view,
)
from agentgov.ml.guard.assessment import Assessment
from agentgov.ml.guard.base import base_examples, default_document, default_model, default_model_if_loaded
from agentgov.ml.guard.fit import BENIGN, Example, GuardParams, fit
from agentgov.ml.guard.model import GuardModel
from agentgov.storage.detectors import DetectorState, ModelVersion
from agentgov.storage.guard import GuardRepo

if TYPE_CHECKING:
    from agentgov.services import Services

MAX_PROMPT_CHARS = 50_000
#: Characters a prompt may hold once Unicode compatibility forms are folded (NFKC): a few characters expand
#: to many (U+FDFA to 18), so 50,000 of them would be 900,000 to read. Ordinary text grows a few percent.
MAX_NORMALISED_CHARS = 2 * MAX_PROMPT_CHARS
IN_LOOP_CHARS = 4_000
AUTO_TRAIN_FEEDBACK = 25
DEFAULT_MODEL_VERSION = DEFAULT_VERSION  # 0: the shipped model
FEEDBACK_GROUP = "tenant feedback"
NO_AGENT = "-"  # the audit entry's agent when the validation named none
#: The `source` of an operator's own instructions to its model: the classifier alone does not block it
#: (`GuardModel.assess(operator=True)`).
OPERATOR_SOURCE = "system"
#: The `source` of the model's own user's text: a reader hailed as a model there is the user speaking to it
#: (`GuardModel.assess(user=True)`).
USER_SOURCE = "user"


def fit_guard(payload: list[tuple[str, str, str, bool]], params: dict[str, Any]) -> FitResult:
    """Worker-process entry point: (text, label, group, is_feedback) rows -> the model document."""
    guard_params = GuardParams.from_dict(params)
    examples = [Example(text, label, group, feedback) for text, label, group, feedback in payload]
    model, metrics = fit(examples, guard_params)
    document = model.to_document()
    return FitResult(
        model=json.dumps(document, separators=(",", ":")),
        threshold=model.threshold,
        metrics=metrics,
        params=guard_params.to_dict(),
    )


class GuardKind:
    """The prompt guard as a `DetectorKind`."""

    name = "guard"
    has_default = True  # the shipped model: version 0

    def fit_function(self) -> Any:
        return fit_guard

    def check_params(self, params: dict[str, Any]) -> dict[str, Any]:
        try:
            return GuardParams.from_dict(params).to_dict()
        except (TypeError, ValueError) as exc:
            raise InvalidMessage(str(exc)) from None

    async def load(self, services: Services, tenant_id: str, params: dict[str, Any]) -> TrainingData:
        base = await trio.to_thread.run_sync(base_examples)  # decompressing and parsing a few megabytes
        feedback = await GuardRepo(services.db).feedback(tenant_id)
        payload = [(e.text, e.label, e.group, False) for e in base]
        payload += [(f.text, f.category if f.label == "attack" else BENIGN, FEEDBACK_GROUP, True) for f in feedback]
        return TrainingData(
            payload,
            rows=len(payload),
            window_start=feedback[0].created_at if feedback else None,
            window_end=feedback[-1].created_at if feedback else None,
        )

    def activate(self, version: ModelVersion, threshold: float | None) -> GuardModel:
        if version.model is None:
            raise ValueError("the version was read without its model")
        model = GuardModel.from_document(json.loads(version.model))
        return model if threshold is None else model.with_threshold(threshold)

    async def should_auto_train(self, services: Services, tenant_id: str, state: DetectorState) -> bool:
        """Whether `AUTO_TRAIN_FEEDBACK` feedback rows arrived since the model in use became the tenant's
        (`state.updated_at`: its version trained or rolled back to, or the default restored; else since the
        start): an operator's rollback is not undone by the feedback that came before it."""
        count = await GuardRepo(services.db).count_feedback(tenant_id, since=state.updated_at)
        return count >= AUTO_TRAIN_FEEDBACK


GUARD = GuardKind()


def guard_detector(services: Services, tenant_id: str) -> ActorRef[Any]:
    return detector(services, tenant_id, GUARD)


@dataclasses.dataclass(frozen=True)
class ActiveGuard:
    """The model a tenant's validations use now: its own active version, or the shipped default (version 0)."""

    model: GuardModel
    version: int
    source: str  # "tenant" or "default"
    trained_at: str | None
    since: str | None  # when it became the tenant's (`DetectorView.since`; None: always the default)


async def shipped_model() -> GuardModel:
    """The shipped default model; read in a worker thread the first time, so the event loop never stalls on
    its JSON."""
    loaded = default_model_if_loaded()
    return loaded if loaded is not None else await trio.to_thread.run_sync(default_model)


async def active_guard(services: Services, tenant_id: str) -> ActiveGuard:
    view = await detector_view(services, tenant_id, GUARD)
    if view.model is not None and view.version is not None:
        return ActiveGuard(view.model, view.version, "tenant", view.trained_at, view.since)
    return ActiveGuard(await shipped_model(), DEFAULT_MODEL_VERSION, "default", None, view.since)


def default_model_label() -> str:
    return str(default_document()["version"])


class PromptTooLong(ValueError):
    """A prompt that Unicode compatibility normalisation would make longer than `MAX_NORMALISED_CHARS`."""

    def __init__(self, folded: int) -> None:
        super().__init__(
            f"expands to {folded:,} characters under Unicode compatibility normalisation (NFKC); "
            f"at most {MAX_NORMALISED_CHARS:,}"
        )
        self.folded = folded


def folded_length(prompt: str) -> int:
    """How long `prompt` is once its compatibility forms are folded (NFKC), as the guard reads it. Raises
    `PromptTooLong` above `MAX_NORMALISED_CHARS`. ASCII text never changes (no normalisation pass)."""
    if prompt.isascii():
        return len(prompt)
    folded = len(unicodedata.normalize("NFKC", prompt))
    if folded > MAX_NORMALISED_CHARS:
        raise PromptTooLong(folded)
    return folded


def _measured_assess(model: GuardModel, prompt: str, operator: bool, user: bool) -> Assessment:
    """`folded_length` then `model.assess` (in a worker thread): raises `PromptTooLong` before judging."""
    folded_length(prompt)
    return model.assess(prompt, operator=operator, user=user)


@dataclasses.dataclass(frozen=True)
class ValidationRequest:
    prompt: str
    source: str | None
    agent_id: str | None
    context: dict[str, Any] | None
    actor: str


async def validate(services: Services, tenant_id: str, request: ValidationRequest) -> dict[str, Any]:
    """Judge `request.prompt` (see the module docstring); the answer is the route's body. Raises
    `PromptTooLong` (nothing judged, counted or recorded) for a text that normalises past `MAX_NORMALISED_CHARS`;
    a text is judged in the event loop only when it is short before and after normalisation (`IN_LOOP_CHARS`),
    otherwise in a worker thread, where a long one is also measured."""
    started = time.perf_counter()
    guard = await active_guard(services, tenant_id)
    prompt = request.prompt
    operator, user = request.source == OPERATOR_SOURCE, request.source == USER_SOURCE
    if len(prompt) <= IN_LOOP_CHARS and folded_length(prompt) <= IN_LOOP_CHARS:  # at most 18x: a millisecond
        judged: Assessment = guard.model.assess(prompt, operator=operator, user=user)
    else:
        judged = await trio.to_thread.run_sync(_measured_assess, guard.model, prompt, operator, user)
    validation_id = str(uuid.uuid4())
    threshold = guard.model.threshold
    category = max(judged.categories, key=lambda name: judged.categories[name])
    body: dict[str, Any] = {
        "validation_id": validation_id,
        "safe": not judged.block,
        "verdict": "block" if judged.block else "allow",
        "score": judged.score,
        "threshold": threshold,
        "categories": judged.categories,
        "category": category if judged.block else None,
        "reasons": judged.reasons(threshold),
        "model_version": guard.version,
        "model": guard.source,
        "chunks": judged.chunks,
        "source": request.source,
        "agent_id": request.agent_id,
    }
    if judged.block:
        await _record_block(services, tenant_id, request, body)
    latency_ms = (time.perf_counter() - started) * 1000
    services.guard.of(tenant_id).record(blocked=judged.block, category=category, latency_ms=latency_ms)
    guard_counters(services)  # flushes the counts to the shared counters (started on the first validation)
    services.guard.recent.add(validation_id, tenant_id, request.prompt, category=category, blocked=judged.block)
    body["latency_ms"] = round(latency_ms, 3)
    return body


def recordable_context(context: dict[str, Any]) -> dict[str, Any]:
    """`context` as the audit entry keeps it: as sent, or, when the chain cannot represent it as JSON (NaN,
    infinities, which Python's JSON reader accepts), a note saying so, as the policy check records it. The block
    is recorded either way."""
    try:
        canonical_json(context)
    except ValueError as exc:
        return {"unrecordable": str(exc)}
    return context


async def _record_block(services: Services, tenant_id: str, request: ValidationRequest, body: dict[str, Any]) -> None:
    settings = await GuardRepo(services.db).settings(tenant_id)
    prompt: dict[str, Any] = {
        "sha256": hashlib.sha256(request.prompt.encode("utf-8")).hexdigest(),
        "length": len(request.prompt),
        "source": request.source,
    }
    if settings.record_prompts:
        prompt["text"] = request.prompt
    if request.context:
        prompt["context"] = recordable_context(request.context)
    await audit(services, tenant_id).ask(
        AppendEntry(
            agent_id=request.agent_id or NO_AGENT,
            action="guard.block",
            resource=f"prompt:{request.source or 'unspecified'}",
            input=prompt,
            output={k: body[k] for k in ("validation_id", "verdict", "score", "category", "categories", "reasons")}
            | {"model_version": body["model_version"]},
            risk_score=min(1.0, max(0.0, float(body["score"]))),
            actor=request.actor,
            kind="guard",
        )
    )
