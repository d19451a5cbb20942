"""The anomaly detector on the shared lifecycle: how it trains (`ANOMALY`, a `DetectorKind`) and how every
action is scored at ingest (`AnomalyScorerActor`).

Training reads the tenant's action entries (`kind = action`: logged through the API or the webhook) of the
training window, by event time, and fits `agentgov.ml.anomaly` in a worker process.

Scoring. The tenant's scorer actor (`anomaly-scorer:<tenant_id>`) follows the detector's published view: when
the active version changes it builds a `Scorer` of it, primes each agent's recent context from the newest
entries and publishes `ScoringView`. While that view exists, the audit actor judges each batch of action
entries just before committing it (`prescore`: tens of microseconds an entry, on a fork of the agents'
contexts) and the verdict (`anomaly`: score, is_anomaly, model_version, reasons, type) is stored with the
entry in the same insert, so scoring adds no write of its own; once the batch is committed the fork's
contexts are adopted (`score_committed`), and only the entries over the threshold go to the scorer actor,
which stores their anomaly reports and publishes `anomaly.detected`. Before the view exists (the first
batches after a model appears in this process), the committed entries are handed to the scorer actor, which
writes their verdicts afterwards in one transaction per batch (gathered for up to `LINGER`). Without an
active version entries are left unscored (`anomaly` null). A policy check scores the action it checks in the
same context without changing it (`ScoringView.peek`).
"""

from __future__ import annotations

import dataclasses
import json
import logging
from datetime import datetime
from typing import TYPE_CHECKING, Any

import trio
from outcome import Value

from agentgov.actors.relay import publish_event
from agentgov.actors.runtime import Actor, ActorContext, ActorRef, ActorStopped, InvalidMessage, MailboxFull
from agentgov.actors.ticker import PeriodicTicker
from agentgov.detection.lifecycle import (
    DetectorState,
    DetectorView,
    FitResult,
    Refresh,
    TrainingData,
    TrainingRefused,
    detector,
    model_age_hours,
)
from agentgov.logs import fields
from agentgov.ml.anomaly import ActionEvent, AnomalyModel, AnomalyParams, AnomalyScore, Scorer, fit
from agentgov.ml.anomaly.profile import OUTPUT_TEXT_LIMIT, flat_text
from agentgov.ml.anomaly.records import reasoning_text
from agentgov.siem import outbox as siem
from agentgov.siem.events import anomaly_event
from agentgov.storage.anomalies import AnomalyRepo, AnomalyReport, NewReport
from agentgov.storage.audit import AuditEntry, PendingEntry
from agentgov.storage.database import DatabaseError, Row
from agentgov.storage.detectors import ModelVersion
from agentgov.timeutil import now, parse_iso

if TYPE_CHECKING:
    from agentgov.services import Services

log = logging.getLogger("agentgov.anomaly")

#: Seconds a batch of entries to score waits for more (fewer, larger write transactions beside the audit writer).
LINGER = 0.25
#: Entries read to prime the agents' recent context when a model is loaded.
PRIME_ENTRIES = 2000
#: Training parameters a request may set (the rest are the model's defaults).
TRAINING_PARAMS = ("target_alert_rate", "session_gap_seconds", "min_events_per_agent", "window_days", "max_rows")


def severity_of(score: float, threshold: float) -> str:
    """`critical` far over the threshold, then `high`, then `medium` just over it."""
    if score >= max(0.85, threshold + 0.4):
        return "critical"
    if score >= max(0.6, threshold + 0.2):
        return "high"
    return "medium"


def _event(
    agent_id: str,
    action: str,
    timestamp: datetime,
    resource: str | None,
    input_json: str | None,
    output_json: str | None,
    reasoning_json: str | None,
) -> ActionEvent:
    """The model's event of an audit entry whose `input`, `output` and `reasoning` are stored JSON text. The
    output is kept only as the text the model traces argument values to (`flat_text`, bounded)."""
    data = json.loads(input_json) if input_json else None
    reasoning = json.loads(reasoning_json) if reasoning_json else None
    output = flat_text(json.loads(output_json), OUTPUT_TEXT_LIMIT) if output_json else None
    return ActionEvent(
        agent_id=agent_id,
        action=action,
        timestamp=timestamp,
        resource=resource,
        input=data if isinstance(data, dict) else None,
        output=output or None,
        reasoning=reasoning_text(reasoning),
    )


def event_of_row(row: Row) -> ActionEvent:
    """An audit row (`training_rows`, `recent_actions`) as the model's event."""
    return _event(
        row["agent_id"],
        row["action"],
        parse_iso(row["ts"]),
        row["resource"],
        row["input"],
        row["output"],
        row["reasoning"],
    )


def event_of_entry(entry: AuditEntry) -> ActionEvent:
    return _event(
        entry.agent_id,
        entry.action,
        parse_iso(entry.timestamp),
        entry.resource,
        entry.input,
        entry.output,
        entry.reasoning,
    )


def event_of_pending(item: PendingEntry) -> ActionEvent:
    """The model's event of an entry not yet committed (receipt time: now). Raises `ValueError` for an
    entry the model cannot read."""
    when = parse_iso(item.occurred_at) if item.occurred_at else now()
    return _event(item.agent_id, item.action, when, item.resource, item.input, item.output, item.reasoning)


def training_payload(rows: list[Row]) -> list[dict[str, Any]]:
    """The history rows as the worker process's plain data."""
    payload = []
    for row in rows:
        event = event_of_row(row)
        payload.append(
            {
                "agent_id": event.agent_id,
                "action": event.action,
                "ts": row["ts"],
                "resource": event.resource,
                "input": dict(event.input) if event.input is not None else None,
                "output": event.output,
                "reasoning": event.reasoning,
            }
        )
    return payload


def primed_scorer(model: AnomalyModel, rows: list[Row]) -> Scorer:
    """A scorer of `model` whose agents' contexts have seen `rows` (oldest first)."""
    scorer = model.scorer()
    for row in rows:
        scorer.observe(event_of_row(row))
    return scorer


def fit_anomaly(payload: list[dict[str, Any]], params: dict[str, Any]) -> FitResult:
    """Runs in a worker process: fit the model on the history rows. Raises `NotEnoughHistory` (a
    `ValueError`) when no agent has enough of it."""
    model_params = AnomalyParams.from_dict({k: v for k, v in params.items() if k not in ("window_days", "max_rows")})
    events = [
        ActionEvent(
            agent_id=row["agent_id"],
            action=row["action"],
            timestamp=datetime.fromisoformat(row["ts"].replace("Z", "+00:00")),
            resource=row["resource"],
            input=row["input"],
            output=row.get("output"),
            reasoning=row["reasoning"],
        )
        for row in payload
    ]
    model = fit(events, model_params)
    return FitResult(
        model=json.dumps(model.to_document(), separators=(",", ":")),
        threshold=model.threshold,
        metrics=model.metrics,
        params={**model_params.to_dict(), **{k: params[k] for k in ("window_days", "max_rows") if k in params}},
    )


class AnomalyKind:
    """The anomaly detector as a `DetectorKind`."""

    name = "anomaly"
    has_default = False  # no model until the tenant's first training

    def fit_function(self) -> Any:
        return fit_anomaly

    def check_params(self, params: dict[str, Any]) -> dict[str, Any]:
        unknown = sorted(set(params) - set(TRAINING_PARAMS))
        if unknown:
            raise InvalidMessage(f"unknown training parameter(s): {', '.join(unknown)}; allowed: {TRAINING_PARAMS}")
        model_part = {k: v for k, v in params.items() if k not in ("window_days", "max_rows")}
        try:
            AnomalyParams.from_dict(model_part)
        except (TypeError, ValueError) as exc:
            raise InvalidMessage(str(exc)) from None
        for name in ("window_days", "max_rows"):
            value = params.get(name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int | float) or value <= 0):
                raise InvalidMessage(f"{name} must be a positive number")
        return dict(params)

    async def load(self, services: Services, tenant_id: str, params: dict[str, Any]) -> TrainingData:
        settings = services.settings.detectors
        rows = await AnomalyRepo(services.db).training_rows(
            tenant_id,
            window_days=float(params.get("window_days", settings.window_days)),
            limit=int(params.get("max_rows", settings.max_rows)),
        )
        if not rows:
            raise TrainingRefused("the tenant has no logged actions to learn from")
        payload = await trio.to_thread.run_sync(training_payload, rows)  # JSON decoding of every row
        return TrainingData(payload, len(rows), rows[0]["ts"], rows[-1]["ts"])

    def activate(self, version: ModelVersion, threshold: float | None) -> AnomalyModel:
        if version.model is None:
            raise ValueError("the version was read without its model")
        model = AnomalyModel.from_document(json.loads(version.model))
        return model if threshold is None else model.with_threshold(threshold)

    async def should_auto_train(self, services: Services, tenant_id: str, state: DetectorState) -> bool:
        settings = services.settings.detectors
        repo = AnomalyRepo(services.db)
        if state.active_version is None:
            return await repo.count_actions(tenant_id) >= settings.min_history
        view = services.actors.view(f"detector:anomaly:{tenant_id}", DetectorView)
        if view is None or view.trained_at is None or model_age_hours(view) < settings.retrain_hours:
            return False
        return await repo.count_actions(tenant_id, received_after=view.trained_at) > 0


ANOMALY = AnomalyKind()


def anomaly_detector(services: Services, tenant_id: str) -> ActorRef[Any]:
    return detector(services, tenant_id, ANOMALY)


# ---------------------------------------------------------------------------------------------- scoring


@dataclasses.dataclass
class ScoringBacklog:
    """A tenant's batches handed to the scorer actor and not scored yet (kept by the audit actor). While any
    is outstanding, later batches go the same way instead of being judged before their commit, so that each
    agent's context takes its entries in order."""

    outstanding: int = 0


@dataclasses.dataclass(frozen=True)
class ScoreEntries:
    """Score these committed entries (told by the audit actor; `backlog` is decremented once they are)."""

    entries: tuple[AuditEntry, ...]
    backlog: ScoringBacklog | None = None


@dataclasses.dataclass(frozen=True)
class StoreReports:
    """Store these reports of entries judged before their commit and publish `anomaly.detected`."""

    reports: tuple[NewReport, ...]


@dataclasses.dataclass(frozen=True)
class _Tick:
    pass


@dataclasses.dataclass
class ScoringCounters:
    """What a process's scorer of one tenant did since it started (written by the scorer actor and, for the
    entries it judged before their commit, the audit actor; both in the event loop)."""

    scored: int = 0
    flagged: int = 0
    horizon: int | None = None  # the highest sequence scored or handed to the scorer so far


@dataclasses.dataclass
class ScoringView:
    """The scorer as published: `peek` scores an action in its agent's context without changing it."""

    version: int
    scorer: Scorer
    counters: ScoringCounters

    def peek(self, agent_id: str, action: str, resource: str, when: datetime) -> dict[str, Any]:
        verdict = self.scorer.score(ActionEvent(agent_id, action, when, resource=resource), remember=False)
        return public_verdict(verdict, self.version)


def public_verdict(verdict: AnomalyScore, version: int) -> dict[str, Any]:
    return {**verdict.to_json(), "model_version": version}


ScorerMessage = ScoreEntries | StoreReports | _Tick


class AnomalyScorerActor(Actor[ScorerMessage]):
    """See the module docstring."""

    max_batch = 256
    linger = LINGER

    def __init__(self, services: Services, tenant_id: str) -> None:
        self.services = services
        self.tenant_id = tenant_id
        self.repo = AnomalyRepo(services.db)
        self._ctx: ActorContext | None = None
        self._version: int | None = None
        self._threshold: float | None = None
        self._scorer: Scorer | None = None
        self._ticker = PeriodicTicker(1.0, _Tick())
        self.counters = ScoringCounters()

    async def on_start(self, ctx: ActorContext) -> None:
        self._ctx = ctx
        self._ticker.start(ctx)

    async def handle(self, message: ScorerMessage) -> Any:
        return (await self.handle_batch([message]))[0].unwrap()

    async def handle_batch(self, messages: list[ScorerMessage]) -> list[Any]:
        try:
            await self._handle(messages)
        finally:
            for message in messages:
                if isinstance(message, ScoreEntries) and message.backlog is not None:
                    message.backlog.outstanding -= 1
        return [Value(None) for _ in messages]

    async def _handle(self, messages: list[ScorerMessage]) -> None:
        entries = [e for m in messages if isinstance(m, ScoreEntries) for e in m.entries]
        reports = [r for m in messages if isinstance(m, StoreReports) for r in m.reports]
        if any(isinstance(m, _Tick) for m in messages):
            self._ticker.poke()
        # Priming reads committed entries: only those before the ones this actor has been handed, since
        # committed entries may still be queued here (they must be scored, not primed).
        horizon = self.counters.horizon
        first = min((e.sequence for e in entries), default=None)
        before = first if first is not None else (None if horizon is None else horizon + 1)
        if entries or horizon is not None:
            await self._follow(before_sequence=before)
        if entries:
            self.counters.horizon = max([self.counters.horizon or 0, *(e.sequence for e in entries)])
            if self._scorer is not None:
                await self._score(entries)
        if reports:
            await self._store(reports)

    async def _follow(self, before_sequence: int | None) -> None:
        """Serve the detector's active version: build a scorer when it changed, primed with the newest entries
        before `before_sequence`."""
        name = f"detector:anomaly:{self.tenant_id}"
        view = self.services.actors.view(name, DetectorView)
        if view is None:
            try:
                view = await anomaly_detector(self.services, self.tenant_id).ask(Refresh())
            except (MailboxFull, ActorStopped, DatabaseError) as exc:
                log.warning("anomaly model not loaded", extra=fields(tenant_id=self.tenant_id, error=str(exc)))
                return
        model = view.model if isinstance(view.model, AnomalyModel) else None
        if model is None or view.version is None:
            self._scorer, self._version = None, None
            return
        if view.version == self._version and view.threshold == self._threshold:
            return
        if self._scorer is not None and view.version == self._version:  # a new threshold: same contexts
            self._scorer.model = model
            self._threshold = view.threshold
            return
        try:
            rows = await self.repo.recent_actions(self.tenant_id, PRIME_ENTRIES, before_sequence=before_sequence)
        except DatabaseError as exc:
            log.warning("anomaly model not loaded", extra=fields(tenant_id=self.tenant_id, error=str(exc)))
            return
        # Priming replays up to PRIME_ENTRIES entries (tens of milliseconds): in a thread, on a scorer nobody
        # else sees yet, so the loop keeps serving.
        scorer = await trio.to_thread.run_sync(primed_scorer, model, rows)
        self._scorer, self._version, self._threshold = scorer, view.version, view.threshold
        if self._ctx is not None:
            self._ctx.publish(ScoringView(view.version, scorer, self.counters))
        log.info("anomaly model loaded", extra=fields(tenant_id=self.tenant_id, version=view.version))

    async def _score(self, entries: list[AuditEntry]) -> None:
        scorer, version = self._scorer, self._version
        assert scorer is not None and version is not None
        verdicts: list[tuple[str, dict[str, Any]]] = []
        reports: list[NewReport] = []
        for entry in sorted(entries, key=lambda e: e.sequence):
            if entry.kind != "action" or entry.duplicate:
                continue
            try:
                verdict = scorer.score(event_of_entry(entry))
            except ValueError as exc:  # an entry the model cannot read is left unscored
                log.warning(
                    "entry not scored", extra=fields(tenant_id=self.tenant_id, entry_id=entry.id, error=str(exc))
                )
                continue
            verdicts.append((entry.id, public_verdict(verdict, version)))
            if verdict.is_anomaly:
                reports.append(report_of(entry, verdict, version, scorer.model.threshold))
        if not verdicts:
            return
        try:
            stored = await self.repo.annotate(self.tenant_id, verdicts, reports)
        except DatabaseError as exc:
            log.error("anomaly verdicts not stored", extra=fields(tenant_id=self.tenant_id, error=str(exc)))
            return
        self.counters.scored += len(verdicts)
        self._published(stored)

    async def _store(self, reports: list[NewReport]) -> None:
        try:
            stored = await self.repo.annotate(self.tenant_id, [], reports)
        except DatabaseError as exc:
            log.error("anomaly reports not stored", extra=fields(tenant_id=self.tenant_id, error=str(exc)))
            return
        self._published(stored)

    def _published(self, stored: list[AnomalyReport]) -> None:
        self.counters.flagged += len(stored)
        for report in stored:
            siem.record(self.services, anomaly_event(report))
            publish_event(self.services, self.tenant_id, "anomaly.detected", report.to_public())


def report_of(entry: AuditEntry, verdict: AnomalyScore, version: int, threshold: float) -> NewReport:
    """The detector's report of `entry`, judged over the threshold."""
    return NewReport(
        agent_id=entry.agent_id,
        audit_log_id=entry.id,
        type=verdict.kind or "unusual",
        severity=severity_of(verdict.score, threshold),
        score=round(verdict.score, 4),
        description=verdict.reasons[0] if verdict.reasons else "unusual action for this agent",
        reasons=verdict.reasons,
        source="detector",
        model_version=version,
        reported_by="system:anomaly-detector",
        occurred_at=entry.timestamp,
    )


def anomaly_scorer(services: Services, tenant_id: str) -> ActorRef[ScorerMessage]:
    return services.actors.get_or_spawn(f"anomaly-scorer:{tenant_id}", lambda: AnomalyScorerActor(services, tenant_id))


@dataclasses.dataclass
class Prescored:
    """Verdicts given to a batch before its commit (`prescore`), on a fork of the scorer's contexts."""

    view: ScoringView
    fork: Scorer
    verdicts: dict[str, AnomalyScore]  # by entry id


def prescore(
    services: Services, tenant_id: str, pending: list[PendingEntry], backlog: ScoringBacklog
) -> tuple[list[PendingEntry], Prescored | None]:
    """Judge the batch's action entries before their commit when this process has the tenant's active model
    loaded and `backlog` is empty: the entries come back carrying their verdict (stored with them).
    Otherwise the batch comes back unchanged with None (`score_committed` then hands the entries to the
    scorer actor).
    Pure computation: never awaits, never raises for an entry (one the model cannot read stays unscored)."""
    view = scoring_view(services, tenant_id)
    if view is None or backlog.outstanding or not any(item.kind == "action" for item in pending):
        return pending, None
    fork = view.scorer.fork()
    verdicts: dict[str, AnomalyScore] = {}
    out: list[PendingEntry] = []
    for item in pending:
        if item.kind == "action":
            try:
                verdict = fork.score(event_of_pending(item))
            except ValueError as exc:
                log.warning("entry not scored", extra=fields(tenant_id=tenant_id, entry_id=item.id, error=str(exc)))
            else:
                verdicts[item.id] = verdict
                item = dataclasses.replace(
                    item, anomaly=json.dumps(public_verdict(verdict, view.version), sort_keys=True)
                )
        out.append(item)
    return out, Prescored(view, fork, verdicts)


def score_committed(
    services: Services,
    tenant_id: str,
    entries: list[AuditEntry],
    prescored: Prescored | None,
    backlog: ScoringBacklog,
) -> None:
    """After a commit: adopt the contexts of the entries judged before it and hand their reports (if any) to
    the scorer actor; hand the committed action entries not judged yet to the scorer actor, which scores
    them and writes their verdicts. Never blocks, never fails the write."""
    actions = [e for e in entries if e.kind == "action" and not e.duplicate]
    if not actions:
        return
    judged = [] if prescored is None else [e for e in actions if e.id in prescored.verdicts]
    unjudged = tuple(e for e in actions if prescored is None or e.id not in prescored.verdicts)
    reports: list[NewReport] = []
    if prescored is not None and judged:
        view = prescored.view
        current = scoring_view(services, tenant_id)
        if current is view and len(judged) == len(prescored.verdicts):
            view.scorer.adopt(prescored.fork)  # every judged entry was stored: the fork's contexts are right
        elif current is not None:  # some were not stored, or the model changed meanwhile: replay the stored
            for entry in sorted(judged, key=lambda e: e.sequence):
                current.scorer.observe(event_of_entry(entry))
        view.counters.scored += len(judged)
        view.counters.horizon = max([view.counters.horizon or 0, *(e.sequence for e in judged)])
        threshold = view.scorer.model.threshold
        for entry in judged:
            verdict = prescored.verdicts[entry.id]
            if verdict.is_anomaly:
                reports.append(report_of(entry, verdict, view.version, threshold))
    scorer = anomaly_scorer(services, tenant_id)
    if reports:
        try:
            scorer.tell(StoreReports(tuple(reports)))
        except (MailboxFull, ActorStopped) as exc:
            log.warning("anomaly reports dropped", extra=fields(tenant_id=tenant_id, error=str(exc)))
    if unjudged:
        backlog.outstanding += 1
        try:
            scorer.tell(ScoreEntries(unjudged, backlog))
        except (MailboxFull, ActorStopped) as exc:
            backlog.outstanding -= 1
            log.warning("entries not scored", extra=fields(tenant_id=tenant_id, entries=len(unjudged), error=str(exc)))


def scoring_view(services: Services, tenant_id: str) -> ScoringView | None:
    return services.actors.view(f"anomaly-scorer:{tenant_id}", ScoringView)
