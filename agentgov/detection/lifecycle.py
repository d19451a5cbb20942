"""The training lifecycle every detector shares: one actor per tenant and detector kind.

The `DetectorActor` (`detector:<kind>:<tenant_id>`) owns a tenant's detector of one kind (`anomaly`, `guard`):

* the **active model**, loaded from the active stored version and published (`DetectorView`) for scoring
  without a message; every second it re-reads the detector's `generation` (one indexed row), so a version
  trained or rolled back by another process is served here within about a second;
* the **training task**: `StartTraining` stores a `queued` task (one live task per tenant and kind across
  every process sharing the database: a second one raises `TrainingInProgress`), then runs it in the actor's
  nursery: the kind loads its training data, the fit runs in a worker process (`trio_parallel.run_sync`,
  `kill_on_cancel=True`) under a cancel scope the actor owns, and a success stores a new immutable version and
  activates it. The task's phase and progress are written as it goes, with a heartbeat every second;
* `CancelTraining` cancels that scope: the worker process is killed, the task ends `cancelled`, nothing is
  stored and the active version stays. With nothing running it raises `NothingToCancel`. Stopping the actor
  (shutdown) cancels a running training the same way.
* `Rollback` activates any stored version (`VersionNotFound` otherwise); `Rollback(DEFAULT_VERSION)` makes
  no stored version active, so a kind with a default model (`has_default`) serves it again (for a kind
  without one: `VersionNotFound`); `SetThreshold` overrides the version's threshold for this tenant;
* **automatic training**: when the kind's `auto_train` says so (enough history and no model, or the model is
  older than the retraining interval), checked every `auto_check_seconds`.

A task left `queued` or `running` by a process that died is failed by `fail_orphaned_tasks` (at start, and by
every actor's tick once its heartbeat is older than the lease). Cancellation of a caller's `ask` abandons the
reply, never the training.
"""

from __future__ import annotations

import dataclasses
import logging
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

import trio
import trio_parallel

from agentgov.actors.runtime import Actor, ActorContext, ActorRef, InvalidMessage, Request
from agentgov.actors.ticker import PeriodicTicker
from agentgov.logs import fields
from agentgov.storage.database import DatabaseError
from agentgov.storage.detectors import (
    CANCELLED,
    FAILED,
    SUCCEEDED,
    DetectorRepo,
    DetectorState,
    ModelVersion,
    NewVersion,
    StateChanged,
    TaskNotLive,
    TrainingInProgress,
    TrainingTask,
    VersionNotFound,
)
from agentgov.timeutil import now, parse_iso

if TYPE_CHECKING:
    from agentgov.services import Services

log = logging.getLogger("agentgov.detectors")

TICK_SECONDS = 1.0


class NothingToCancel(Exception):
    """No training of this tenant and detector is running."""


class TrainingRefused(InvalidMessage):
    """The training cannot start for what it was asked (e.g. not enough history); the text says why."""


@dataclasses.dataclass(frozen=True)
class TrainingData:
    """What a kind's loader gives the fit: the payload (plain, picklable data for the worker process) and
    what the version records of it."""

    payload: Any
    rows: int
    window_start: str | None
    window_end: str | None


@dataclasses.dataclass(frozen=True)
class FitResult:
    """What a fit returns from the worker: the model document as JSON text, its threshold and metrics."""

    model: str
    threshold: float
    metrics: dict[str, Any]
    params: dict[str, Any]


class DetectorKind(Protocol):
    """What a detector plugs into the lifecycle."""

    name: str
    #: Whether the kind serves a default model while no stored version is active (`Rollback(DEFAULT_VERSION)`).
    has_default: bool

    def fit_function(self) -> Callable[[Any, dict[str, Any]], FitResult]:
        """A top-level (picklable) function run in a worker process: (payload, params) -> FitResult.
        Raises `ValueError` when the data cannot make a model (the task fails with its message)."""
        ...

    def check_params(self, params: dict[str, Any]) -> dict[str, Any]:
        """The training parameters, validated and completed. Raises `InvalidMessage`."""
        ...

    async def load(self, services: Services, tenant_id: str, params: dict[str, Any]) -> TrainingData:
        """Read the training data. Raises `TrainingRefused` when there is not enough of it."""
        ...

    def activate(self, version: ModelVersion, threshold: float | None) -> Any:
        """The runtime model of a stored version (its document parsed). Raises `ValueError` if unreadable."""
        ...

    async def should_auto_train(self, services: Services, tenant_id: str, state: DetectorState) -> bool:
        """Whether to start a training now without being asked."""
        ...


@dataclasses.dataclass(frozen=True)
class DetectorView:
    """The active model as published by the actor: `model` is the kind's runtime model (None before any).
    `since` is when the model in use became the tenant's (`DetectorState.updated_at`: trained, rolled back to,
    or the default restored; None: the tenant never had another)."""

    version: int | None
    model: Any
    threshold: float | None
    trained_at: str | None
    generation: int
    since: str | None = None


@dataclasses.dataclass(frozen=True)
class StartTraining(Request[TrainingTask]):
    requested_by: str
    params: dict[str, Any] = dataclasses.field(default_factory=dict)
    trigger: str = "manual"


@dataclasses.dataclass(frozen=True)
class CancelTraining(Request[TrainingTask]):
    pass


#: The version number that names a kind's default model: no stored version active.
DEFAULT_VERSION = 0


@dataclasses.dataclass(frozen=True)
class Rollback(Request[DetectorView]):
    version: int  # a stored version, or DEFAULT_VERSION


@dataclasses.dataclass(frozen=True)
class SetThreshold(Request[DetectorView]):
    threshold: float | None


@dataclasses.dataclass(frozen=True)
class Refresh(Request[DetectorView]):
    """Re-read the active version now (and answer the view)."""


@dataclasses.dataclass(frozen=True)
class _Tick:
    pass


@dataclasses.dataclass(frozen=True)
class _Finished:
    task_id: str


DetectorMessage = StartTraining | CancelTraining | Rollback | SetThreshold | Refresh | _Tick | _Finished


@dataclasses.dataclass
class _Running:
    task: TrainingTask
    scope: trio.CancelScope
    done: trio.Event


class DetectorActor(Actor[DetectorMessage]):
    """See the module docstring."""

    def __init__(self, services: Services, tenant_id: str, kind: DetectorKind) -> None:
        self.services = services
        self.tenant_id = tenant_id
        self.kind = kind
        self.repo = DetectorRepo(services.db, kind.name)
        self.settings = services.settings.detectors
        self._ctx: ActorContext | None = None
        self._view = DetectorView(None, None, None, None, -1)
        self._running: _Running | None = None
        self._ticker = PeriodicTicker(TICK_SECONDS, _Tick())
        self._next_auto_check = 0.0

    # -------------------------------------------------------------------------------------------- lifetime

    async def on_start(self, ctx: ActorContext) -> None:
        self._ctx = ctx
        await self._load(await self.repo.state(self.tenant_id))
        self._next_auto_check = trio.current_time() + min(5.0, self.settings.auto_check_seconds)
        self._ticker.start(ctx)

    async def on_stop(self) -> None:
        running = self._running
        if running is not None:  # shutdown: cancel the training like an operator would
            running.scope.cancel()
            await running.done.wait()

    # -------------------------------------------------------------------------------------------- messages

    async def handle(self, message: DetectorMessage) -> Any:
        match message:
            case StartTraining(requested_by, params, trigger):
                return await self._start(requested_by, params, trigger)
            case CancelTraining():
                return await self._cancel()
            case Rollback(version) if version == DEFAULT_VERSION:
                if not self.kind.has_default:
                    raise VersionNotFound(f"the {self.kind.name} detector has no default model")
                await self._load(await self.repo.activate_default(self.tenant_id))
                log.info("detector default model restored", extra=self._fields())
                return self._view
            case Rollback(version):
                await self._load(await self.repo.activate(self.tenant_id, version))
                log.info("detector version activated", extra=self._fields(version=version))
                return self._view
            case SetThreshold(threshold):
                await self._load(await self.repo.set_threshold(self.tenant_id, threshold))
                return self._view
            case Refresh():
                await self._load(await self.repo.state(self.tenant_id))
                return self._view
            case _Tick():
                await self._on_tick()
                return None
            case _Finished(task_id):
                if self._running is not None and self._running.task.id == task_id:
                    self._running = None
                await self._load(await self.repo.state(self.tenant_id))
                return None
        raise TypeError(f"unexpected message {message!r}")

    async def _on_tick(self) -> None:
        try:
            state = await self.repo.state(self.tenant_id)
            if state.generation != self._view.generation:
                await self._load(state)
            if self._running is not None:
                await self.repo.heartbeat_task(self.tenant_id, self._running.task.id)
            elif trio.current_time() >= self._next_auto_check:
                self._next_auto_check = trio.current_time() + self.settings.auto_check_seconds
                await self.repo.fail_orphaned_tasks(lease_seconds=self.settings.training_lease)
                if self.settings.auto_train and await self.kind.should_auto_train(self.services, self.tenant_id, state):
                    try:
                        await self._start("system:auto-train", {}, "automatic", if_generation=state.generation)
                    except (TrainingInProgress, TrainingRefused, StateChanged) as exc:
                        log.debug("automatic training not started", extra=self._fields(error=str(exc)))
        except DatabaseError as exc:
            log.warning("detector refresh failed; keeping the active model", extra=self._fields(error=str(exc)))
        finally:
            self._ticker.poke()

    # -------------------------------------------------------------------------------------------- training

    async def _start(
        self, requested_by: str, params: dict[str, Any], trigger: str, *, if_generation: int | None = None
    ) -> TrainingTask:
        checked = self.kind.check_params(params)
        task = await self.repo.create_task(
            self.tenant_id,
            requested_by=requested_by,
            trigger=trigger,
            params=checked,
            owner=self.services.instance_id,
            if_generation=if_generation,
        )
        assert self._ctx is not None
        running = _Running(task, trio.CancelScope(), trio.Event())
        self._running = running
        self._ctx.nursery.start_soon(self._train, running, name=f"{self._ctx.name}:training")
        log.info("detector training started", extra=self._fields(task_id=task.id, trigger=trigger))
        return task

    async def _cancel(self) -> TrainingTask:
        running = self._running
        if running is None:
            live = await self.repo.live_task(self.tenant_id)
            if live is not None and live.status == "running":
                raise NothingToCancel(
                    f"training task {live.id} runs in another process; cancel it through that process"
                )
            raise NothingToCancel("no training is running")
        running.scope.cancel()
        await running.done.wait()
        task = await self.repo.get_task(self.tenant_id, running.task.id)
        assert task is not None
        return task

    async def _train(self, running: _Running) -> None:
        """The training task: load, fit in a worker process, store. Never raises (a failure is recorded)."""
        task, repo, tenant_id = running.task, self.repo, self.tenant_id
        ref = self._ctx.ref if self._ctx is not None else None
        status, error, version = FAILED, None, None
        try:
            with running.scope:
                await repo.progress(tenant_id, task.id, phase="loading", progress=0.05)
                data = await self.kind.load(self.services, tenant_id, task.params)
                await repo.progress(tenant_id, task.id, phase="fitting", progress=0.2)
                result: FitResult = await trio_parallel.run_sync(
                    self.kind.fit_function(), data.payload, task.params, kill_on_cancel=True
                )
                await repo.progress(tenant_id, task.id, phase="storing", progress=0.9)
                with trio.CancelScope(shield=True):  # a version is stored whole or not at all
                    stored = await repo.add_version(
                        tenant_id,
                        NewVersion(
                            task_id=task.id,
                            trained_by=task.requested_by,
                            window_start=data.window_start,
                            window_end=data.window_end,
                            rows=data.rows,
                            params=result.params,
                            metrics=result.metrics,
                            threshold=result.threshold,
                            model=result.model,
                        ),
                        keep=self.settings.versions_kept,
                    )
                    status, version = SUCCEEDED, stored.version
                    if ref is not None:  # serve the new version before the task is reported succeeded
                        with trio.move_on_after(10):
                            await ref.ask(Refresh())
            if running.scope.cancelled_caught:
                status = CANCELLED
        except trio.Cancelled:  # the actor is stopping (shutdown): as if an operator had cancelled
            status = CANCELLED
            raise
        except (TrainingRefused, TaskNotLive, ValueError) as exc:
            error = str(exc)
        except trio_parallel.BrokenWorkerError as exc:  # the worker process died (e.g. out of memory)
            error = f"the training process stopped: {exc}"
        except Exception as exc:
            log.exception("detector training failed", extra=self._fields(task_id=task.id))
            error = f"training failed: {exc!r}"
        finally:
            with trio.CancelScope(shield=True), trio.move_on_after(10):
                try:
                    await repo.finish(tenant_id, task.id, status, error=error, version=version)
                except DatabaseError as exc:
                    log.error("training outcome not recorded", extra=self._fields(task_id=task.id, error=str(exc)))
            running.done.set()
            log.info(
                "detector training ended",
                extra=self._fields(task_id=task.id, status=status, version=version, error=error),
            )
            if ref is not None:
                try:
                    ref.tell(_Finished(task.id))
                except Exception:  # the actor is stopping: the next start reloads the state anyway
                    self._running = None

    # -------------------------------------------------------------------------------------------- the model

    async def _load(self, state: DetectorState) -> None:
        """Serve the active version of `state` (unless it is the one served)."""
        view = self._view
        if state.active_version is None:
            view = DetectorView(None, None, None, None, state.generation)
        elif state.active_version != view.version or state.threshold != view.threshold:
            stored = await self.repo.get_version(self.tenant_id, state.active_version)
            if stored is None:
                view = DetectorView(None, None, None, None, state.generation)
            else:
                try:
                    # Parsing a model document takes milliseconds: in a thread, so the loop keeps serving.
                    model = await trio.to_thread.run_sync(self.kind.activate, stored, state.threshold)
                except ValueError as exc:
                    log.error("stored detector version unreadable", extra=self._fields(error=str(exc)))
                    model = None
                view = DetectorView(stored.version, model, state.threshold, stored.created_at, state.generation)
        else:
            view = dataclasses.replace(view, generation=state.generation)
        view = dataclasses.replace(view, since=state.updated_at)
        self._view = view
        if self._ctx is not None:
            self._ctx.publish(view)

    def _fields(self, **extra: Any) -> dict[str, Any]:
        return fields(tenant_id=self.tenant_id, detector=self.kind.name, **extra)


def detector(services: Services, tenant_id: str, kind: DetectorKind) -> ActorRef[DetectorMessage]:
    """The tenant's detector actor of `kind`, started on first use."""
    return services.actors.get_or_spawn(
        f"detector:{kind.name}:{tenant_id}", lambda: DetectorActor(services, tenant_id, kind)
    )


async def detector_view(services: Services, tenant_id: str, kind: DetectorKind) -> DetectorView:
    """The published view of the active model; the first call starts the actor and waits for its load."""
    name = f"detector:{kind.name}:{tenant_id}"
    view = services.actors.view(name, DetectorView)
    if view is None:
        view = await detector(services, tenant_id, kind).ask(Refresh())
    return view


def model_age_hours(view: DetectorView) -> float:
    """Hours since the active version was trained (infinite without one)."""
    if view.trained_at is None:
        return math.inf
    return (now() - parse_iso(view.trained_at)).total_seconds() / 3600


__all__ = [
    "DEFAULT_VERSION",
    "CancelTraining",
    "DetectorActor",
    "DetectorKind",
    "DetectorView",
    "FitResult",
    "NothingToCancel",
    "Refresh",
    "Rollback",
    "SetThreshold",
    "StartTraining",
    "TrainingData",
    "TrainingInProgress",
    "TrainingRefused",
    "VersionNotFound",
    "detector",
    "detector_view",
]
