"""The per-tenant policy actor (`policy:<tenant_id>`): owns the tenant's compiled Cedar policy set.

Interface used by other modules:

* `policy(services, tenant_id) -> ActorRef` -- the tenant's policy actor, started on first use.
* `await policy_view(services, tenant_id)` -> the `PolicyView` the actor publishes: its compiled set and
  evaluation clock. `view.evaluate(agent, action, resource, context)` -> `Decision` is a pure evaluation
  (~0.1-0.3 ms) run by the caller's own task, with no message to the actor: the actor is the only writer
  of the view and replaces it, never mutates it. Raises `InvalidRequestError` for a malformed request
  (mistyped declared context attribute, empty action).
* Writes: `CreatePolicy`, `UpdatePolicy`, `DeletePolicy`, `SetDefaultDecision` (see each message). They
  validate, write durably through `PolicyRepo`, then recompile, so a check asked after a write's reply
  reflects it. They raise `PolicyValidationError` (422), `DuplicatePolicyId` (409), `PolicyNotFound` (404).
* `Sync()` -> the generation now compiled (re-reads the database first; mostly for tests and tooling).
  `Compiled()` -> the generation compiled, without a database read, once earlier messages are handled.
* The check itself (agent lookup, evaluation of the published view, decision log, `policy.violated` and
  the approval hook) is a use case run by the caller: `agentgov.checks.check_action`.

Freshness across processes
--------------------------
Every policy or default-decision write bumps the tenant's *generation* in the same transaction. The actor
recompiles only when the generation it compiled differs from the stored one. Writes made through this actor
are compiled and published before the write is acknowledged; writes made by another process behind the load
balancer are noticed by a timer that queues a `_Tick` every `SYNC_INTERVAL` seconds: the actor then reads the generation
(one indexed row) and recompiles only if it moved. So they take effect here within about `SYNC_INTERVAL`
(1 s); a check never reads the database for it.

Compilation reuses the validated form of unchanged documents (cached by policy id and version). A stored
document that no longer validates (e.g. after a schema change) is left out of the set and logged as an error.

Cancellation
------------
Cancelling a caller of `ask` abandons the reply; a write already sent to the database still commits (the
database layer finishes the statement) and the actor still recompiles. Stopping the actor (idle timeout or
shutdown) cancels the background sync task and withdraws the view; the compiled set is rebuilt from the
database on the next start (the next check starts the actor and waits for it). Nothing is buffered here, so
nothing is lost; decision-log entries are the audit actor's (see `record_decision`).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from agentgov.actors.runtime import Actor, ActorContext, ActorRef, ActorStopped, Request
from agentgov.actors.ticker import PeriodicTicker
from agentgov.logs import fields
from agentgov.policy import (
    AgentAttributes,
    CompiledPolicySet,
    Decision,
    PolicyDocument,
    PolicyValidationError,
    ValidatedDocument,
    compile_policy_set,
    validate_document,
)
from agentgov.storage.database import DatabaseError
from agentgov.storage.policies import (
    DefaultDecision,
    PolicyRepo,
    PolicySnapshot,
    PolicyWrite,
    StoredPolicy,
)

if TYPE_CHECKING:
    from agentgov.services import Services

log = logging.getLogger("agentgov.policy")

SYNC_INTERVAL = 1.0
"""Seconds between two reads of the stored generation (bound on cross-process staleness)."""

Clock = Callable[[], datetime]


def utc_now() -> datetime:
    return datetime.now(UTC)


# ----------------------------------------------------------------------------------------------- messages


@dataclasses.dataclass(frozen=True, slots=True)
class PolicyView:
    """A tenant's compiled policy set as its actor published it, with the clock checks are evaluated at."""

    compiled: CompiledPolicySet
    clock: Clock

    def evaluate(
        self,
        agent: AgentAttributes,
        action: str,
        resource: str,
        context: Mapping[str, Any],
        *,
        anomaly_score: float | None = None,
    ) -> Decision:
        """Decide `action` on `resource` for `agent` now (with the detector's `anomaly_score`, if any).
        Raises `InvalidRequestError` for a malformed request."""
        return self.compiled.evaluate(agent, action, resource, context, now=self.clock(), anomaly_score=anomaly_score)


@dataclasses.dataclass(frozen=True, slots=True)
class CreatePolicy(Request[StoredPolicy]):
    """Store a new document. Reply: `StoredPolicy`."""

    document: PolicyDocument
    actor: str


@dataclasses.dataclass(frozen=True, slots=True)
class UpdatePolicy(Request[StoredPolicy]):
    """Change some of `name`, `description`, `cedar`, `is_active` (keys of `changes`). Reply: `StoredPolicy`.

    A change that leaves the document as it is creates no new version.
    """

    policy_id: str
    changes: Mapping[str, Any]
    actor: str


@dataclasses.dataclass(frozen=True, slots=True)
class DeletePolicy(Request[None]):
    """Soft-delete a document. Reply: None."""

    policy_id: str
    actor: str


@dataclasses.dataclass(frozen=True, slots=True)
class SetDefaultDecision(Request[str]):
    """Set the decision when no policy applies. Reply: the decision stored."""

    decision: DefaultDecision


@dataclasses.dataclass(frozen=True, slots=True)
class Sync(Request[int]):
    """Re-read the stored generation and recompile if it moved. Reply: the generation compiled."""


@dataclasses.dataclass(frozen=True, slots=True)
class Compiled:
    """Reply: the generation compiled now, without reading the database. Being handled in turn, the reply
    also means every message sent before it (e.g. a background sync tick) has been handled."""


@dataclasses.dataclass(frozen=True, slots=True)
class _Tick:
    """Sent by the actor's own timer: like `Sync`, but a database error is logged, not a crash."""


PolicyMessage = CreatePolicy | UpdatePolicy | DeletePolicy | SetDefaultDecision | Sync | Compiled | _Tick


# ------------------------------------------------------------------------------------------------ helpers


def rules_of(validated: ValidatedDocument) -> tuple[dict[str, Any], ...]:
    """The metadata of each Cedar policy of a document, as stored and shown in API answers."""
    return tuple(
        {
            "position": p.position,
            "effect": p.effect,
            "policy_id": p.policy_id,
            "ref": p.ref,
            "reason": p.reason,
            "severity": p.severity,
            "requires_approval": p.requires_approval,
        }
        for p in validated.policies
    )


def _write_of(validated: ValidatedDocument) -> PolicyWrite:
    doc = validated.document
    return PolicyWrite(
        name=doc.name,
        description=doc.description,
        cedar=doc.cedar,
        is_active=doc.is_active,
        rules=rules_of(validated),
        cedar_ids=tuple(p.policy_id for p in validated.policies if p.policy_id is not None),
    )


def _document_of(stored: StoredPolicy) -> PolicyDocument:
    return PolicyDocument(
        name=stored.name, cedar=stored.cedar, description=stored.description, is_active=stored.is_active
    )


# -------------------------------------------------------------------------------------------------- actor


class PolicyActor(Actor[PolicyMessage]):
    """Owns one tenant's compiled policy set. `clock` sets the evaluation time (`context.hour`/`weekday`)."""

    def __init__(
        self,
        tenant_id: str,
        repo: PolicyRepo,
        *,
        clock: Clock = utc_now,
        sync_interval: float = SYNC_INTERVAL,
    ) -> None:
        self.tenant_id = tenant_id
        self.repo = repo
        self.clock = clock
        self.sync_interval = sync_interval
        self.generation = -1
        self.default_decision: DefaultDecision = "deny"
        self.compiled: CompiledPolicySet = compile_policy_set([])
        self._validated: dict[tuple[str, int], ValidatedDocument | None] = {}
        self._ticker = PeriodicTicker(sync_interval, _Tick())
        self._ctx: ActorContext | None = None

    async def on_start(self, ctx: ActorContext) -> None:
        self._ctx = ctx
        self._install(await self.repo.snapshot(self.tenant_id))
        self._ticker.start(ctx)

    async def handle(self, message: PolicyMessage) -> Any:
        match message:
            case CreatePolicy(document, actor):
                validated = validate_document(document)
                stored, generation = await self.repo.create(self.tenant_id, _write_of(validated), actor)
                self._validated[(stored.id, stored.version)] = validated
                await self._refresh(generation)
                return stored
            case UpdatePolicy(policy_id, changes, actor):
                return await self._update(policy_id, changes, actor)
            case DeletePolicy(policy_id, actor):
                await self._refresh(await self.repo.delete(self.tenant_id, policy_id, actor))
                return None
            case SetDefaultDecision(decision):
                await self._refresh(await self.repo.set_default_decision(self.tenant_id, decision))
                return decision
            case Sync():
                await self._sync()
                return self.generation
            case Compiled():
                return self.generation
            case _Tick():
                try:
                    await self._sync()
                except DatabaseError as exc:
                    log.warning(
                        "policy set sync failed; keeping the compiled set",
                        extra=fields(tenant_id=self.tenant_id, error=str(exc)),
                    )
                self._ticker.poke()
                return None
        raise TypeError(f"unexpected message {message!r}")

    async def _sync(self) -> None:
        generation = await self.repo.generation(self.tenant_id)
        if generation != self.generation:
            self._install(await self.repo.snapshot(self.tenant_id))

    async def _update(self, policy_id: str, changes: Mapping[str, Any], actor: str) -> StoredPolicy:
        validated: list[ValidatedDocument] = []

        def prepare(current: StoredPolicy) -> PolicyWrite | None:
            """Runs inside the write transaction: merge, and validate only a real change."""
            document = dataclasses.replace(_document_of(current), **changes)
            if document == _document_of(current):
                return None
            validated.append(validate_document(document))
            return _write_of(validated[-1])

        stored, generation = await self.repo.update(self.tenant_id, policy_id, prepare, actor)
        if generation is not None:
            self._validated[(stored.id, stored.version)] = validated[-1]
            await self._refresh(generation)
        return stored

    async def _refresh(self, generation: int) -> None:
        """Recompile from a fresh snapshot unless `generation` is the one already compiled.

        A write is committed before this runs: if the snapshot cannot be read, the write still succeeded,
        so the failure is logged and left to the background sync rather than reported to the writer.
        """
        if generation == self.generation:
            return
        try:
            self._install(await self.repo.snapshot(self.tenant_id))
        except DatabaseError as exc:
            log.warning(
                "policy set not recompiled after a write; the background sync will retry",
                extra=fields(tenant_id=self.tenant_id, error=str(exc)),
            )

    def _install(self, snapshot: PolicySnapshot) -> None:
        """Compile `snapshot` unless an equal or newer generation is already in place."""
        if snapshot.generation <= self.generation:
            return
        documents = [v for v in (self._validate(p) for p in snapshot.active) if v is not None]
        self.compiled = _compile(documents, default_allow=snapshot.default_decision == "allow")
        self.default_decision = snapshot.default_decision
        self.generation = snapshot.generation
        if self._ctx is not None:
            self._ctx.publish(PolicyView(self.compiled, self.clock))
        live = {(p.id, p.version) for p in snapshot.active}
        self._validated = {k: v for k, v in self._validated.items() if k in live}
        log.debug(
            "policy set compiled",
            extra=fields(tenant_id=self.tenant_id, generation=self.generation, policies=len(self.compiled)),
        )

    def _validate(self, stored: StoredPolicy) -> ValidatedDocument | None:
        key = (stored.id, stored.version)
        if key not in self._validated:
            try:
                self._validated[key] = validate_document(_document_of(stored))
            except PolicyValidationError as exc:
                log.error(
                    "stored policy no longer validates; left out of the policy set",
                    extra=fields(tenant_id=self.tenant_id, policy=stored.id, error=str(exc)),
                )
                self._validated[key] = None
        return self._validated[key]


def _compile(documents: list[ValidatedDocument], *, default_allow: bool) -> CompiledPolicySet:
    """Compile; a document whose `@id` clashes with an earlier one is left out (and logged)."""
    try:
        return compile_policy_set(documents, default_allow=default_allow)
    except PolicyValidationError:
        kept: list[ValidatedDocument] = []
        for doc in documents:
            try:
                compile_policy_set([*kept, doc])
            except PolicyValidationError as exc:
                log.error("policy document left out of the policy set", extra=fields(error=str(exc)))
                continue
            kept.append(doc)
        return compile_policy_set(kept, default_allow=default_allow)


def policy(services: Services, tenant_id: str) -> ActorRef[PolicyMessage]:
    """The tenant's policy actor (`policy:<tenant_id>`), spawned on first use."""
    return services.actors.get_or_spawn(f"policy:{tenant_id}", lambda: PolicyActor(tenant_id, PolicyRepo(services.db)))


async def policy_view(services: Services, tenant_id: str) -> PolicyView:
    """The tenant's published `PolicyView`; the first call starts the actor and waits for its first compile.

    Raises the runtime's `MailboxFull` / `ActorStopped`, and `DatabaseError` if the policies cannot be read.
    """
    name = f"policy:{tenant_id}"
    view = services.actors.view(name, PolicyView)
    if view is None:
        await policy(services, tenant_id).ask(Sync())
        view = services.actors.view(name, PolicyView)
        if view is None:  # stopped again before this task resumed
            raise ActorStopped(name)
    return view
