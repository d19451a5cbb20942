"""The per-tenant audit actor (`audit:<tenant_id>`): appends entries to the tenant's tamper-evident chain.

Interface used by other modules::

    ref = audit(services, tenant_id)                 # started on first use, stops itself when idle
    entry = await ref.ask(AppendEntry(agent_id, "read", "db://orders", risk_score=0.2, actor="key:..."))
    entry.to_public()                                # the stored entry (id, sequence, signature, ...)

`AppendEntry(kind="policy_check", decision={...})` records a policy decision in the same chain;
`AppendPrepared(PendingEntry(...))` appends an entry the caller already validated and serialised (the
policy check's decision log does, to keep that work off its hot path).
`AppendEntry(dedup_key="...")` is idempotent: if the tenant already has an entry with that key (in the
database, so also across restarts and processes) the answer is that entry, with `entry.duplicate` true,
and nothing new is stored. The caller checks that the agent exists; this actor does not.

`ref.tell(AppendEntry(...))` also works (fire and forget, e.g. for policy decisions); the runtime treats
a told append that fails as a crash of the actor: it is logged and the actor restarts, reloading the head.

`ask` raises `ValueError` for an invalid message (risk score outside 0..1, JSON that cannot be stored
exactly, blank action/resource/kind), `AuditUnavailable` when the configured AUDIT_SECRET does not
derive the key the tenant's chain was signed with (appending would break the chain), `DatabaseError`
when the batch could not be committed, and the runtime's `MailboxFull` / `ActorStopped`.

State and batching. The actor owns the chain head (last sequence and signature), loaded in `on_start`.
Queued appends are handled together (`max_batch`): one transaction chains and inserts all of them in
mailbox order and advances the head; every caller is answered only after that transaction committed,
so an answer means the entry is durable. A batch made only of told appends (policy decisions) waits up
to `LINGER` (20 ms) for more before committing, which turns a steady stream of checks into a few large
transactions instead of many small ones; an `ask` arriving meanwhile is committed at once with them.
If another process sharing the database appended meanwhile, the transaction notices (compare-and-set on
the head) and chains after the real head. A failed transaction changes nothing; its callers get the error
and may retry.

Cancellation. Cancelling a caller's `ask` abandons the reply, not the message: an entry enqueued before
the cancel may still be written (use `dedup_key` to make a retry safe). The transaction runs in a worker
thread that is waited for, never abandoned, so a batch is committed or rolled back as a whole. When the
actor stops (idle timeout or shutdown) it first handles what is already queued; an append still pending
after the drain timeout is answered with `ActorStopped` and is not written.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import uuid
from typing import TYPE_CHECKING, Any

from agentgov.actors.runtime import Actor, ActorContext, ActorRef, Failure, Outcome, Success
from agentgov.audit_chain import ChainHead, canonical_json
from agentgov.logs import fields
from agentgov.storage.audit import AuditEntry, BatchResult, ChainState, PendingEntry, append_batch, open_chain
from agentgov.storage.database import Connection, IntegrityError

if TYPE_CHECKING:
    from agentgov.services import Services

log = logging.getLogger("agentgov.audit")

#: Appends chained and committed in one transaction at most.
MAX_BATCH = 256
#: Seconds a batch of told appends (policy decisions) waits for more before it is committed.
LINGER = 0.02
#: Attempts at a batch when another process stores the same dedup key concurrently.
_ATTEMPTS = 3


class AuditUnavailable(Exception):
    """The tenant's audit chain cannot be appended to; the message says why."""


@dataclasses.dataclass(frozen=True)
class AppendEntry:
    """Append one entry; the reply is the stored `AuditEntry` (or the existing one for a known dedup_key)."""

    agent_id: str
    action: str
    resource: str
    input: dict[str, Any] | None = None
    output: dict[str, Any] | None = None
    reasoning: list[str] | None = None
    risk_score: float | None = None
    is_approved: bool | None = None
    actor: str = ""
    kind: str = "action"
    decision: dict[str, Any] | None = None
    dedup_key: str | None = None


@dataclasses.dataclass(frozen=True)
class AppendPrepared:
    """Append an entry the caller already checked and serialised (`PendingEntry`, canonical JSON texts).

    For producers on a hot path that build entries themselves, such as the policy check's decision log;
    nothing is validated again. The reply is the stored `AuditEntry`.
    """

    entry: PendingEntry


AuditMessage = AppendEntry | AppendPrepared


def audit(services: Services, tenant_id: str) -> ActorRef[AuditMessage]:
    """The tenant's audit actor, started on first use."""
    return services.actors.get_or_spawn(f"audit:{tenant_id}", lambda: AuditActor(services, tenant_id))


def _json_text(value: Any, name: str, kind: type) -> str | None:
    if value is None:
        return None
    if not isinstance(value, kind):
        raise ValueError(f"{name} must be a {'JSON object' if kind is dict else 'list'}")
    try:
        return canonical_json(value)
    except ValueError as exc:
        raise ValueError(f"{name} is {exc}") from None


def prepare(message: AppendEntry) -> PendingEntry:
    """Check `message` and turn it into a `PendingEntry`. Raises `ValueError` saying what is wrong."""
    for name in ("agent_id", "action", "resource", "kind"):
        value = getattr(message, name)
        if not isinstance(value, str) or not value.strip():
            raise ValueError(f"{name} must be a non-blank string")
    risk = message.risk_score
    if risk is not None:
        if isinstance(risk, bool) or not isinstance(risk, int | float) or not math.isfinite(risk):
            raise ValueError("risk_score must be a number from 0.0 to 1.0")
        if not 0.0 <= risk <= 1.0:
            raise ValueError("risk_score must be between 0.0 and 1.0")
        risk = float(risk)
    if message.reasoning is not None and not all(isinstance(step, str) for step in message.reasoning):
        raise ValueError("reasoning must be a list of strings")
    if message.is_approved is not None and not isinstance(message.is_approved, bool):
        raise ValueError("is_approved must be a boolean")
    return PendingEntry(
        id=str(uuid.uuid4()),
        kind=message.kind,
        agent_id=message.agent_id,
        actor=message.actor,
        action=message.action,
        resource=message.resource,
        input=_json_text(message.input, "input", dict),
        output=_json_text(message.output, "output", dict),
        reasoning=_json_text(message.reasoning, "reasoning", list),
        risk_score=risk,
        is_approved=message.is_approved,
        decision=_json_text(message.decision, "decision", dict),
        dedup_key=message.dedup_key,
    )


class AuditActor(Actor[AuditMessage]):
    """Owns one tenant's chain head and appends batches of entries to it."""

    max_batch = MAX_BATCH
    linger = LINGER

    def __init__(self, services: Services, tenant_id: str) -> None:
        self._services = services
        self._tenant_id = tenant_id
        self._key = b""
        self._head: ChainHead | None = None
        self._unavailable: str | None = None

    async def on_start(self, ctx: ActorContext) -> None:
        secret = self._services.settings.effective_audit_secret
        tenant_id = self._tenant_id
        state: ChainState = await self._services.db.write(lambda conn: open_chain(conn, tenant_id, secret))
        self._key, self._head = state.key, state.head
        if not state.key_ok:
            self._unavailable = (
                "the audit trail cannot be written: the configured AUDIT_SECRET does not derive the key this "
                "tenant's chain was signed with (restore the previous secret)"
            )
            log.error("audit key mismatch; appends refused", extra=fields(tenant_id=tenant_id))

    async def handle(self, message: AuditMessage) -> AuditEntry:
        outcome = (await self.handle_batch([message]))[0]
        if isinstance(outcome, Failure):
            raise outcome.error
        entry: AuditEntry = outcome.value
        return entry

    async def handle_batch(self, messages: list[AuditMessage]) -> list[Outcome]:
        outcomes: list[Outcome | None] = [None] * len(messages)
        pending: list[PendingEntry] = []
        slots: list[int] = []
        for index, message in enumerate(messages):
            match message:
                case AppendEntry():
                    if self._unavailable is not None:
                        outcomes[index] = Failure(AuditUnavailable(self._unavailable))
                        continue
                    try:
                        pending.append(prepare(message))
                    except ValueError as exc:
                        outcomes[index] = Failure(exc)
                        continue
                    slots.append(index)
                case AppendPrepared(prepared):
                    if self._unavailable is not None:
                        outcomes[index] = Failure(AuditUnavailable(self._unavailable))
                        continue
                    pending.append(prepared)
                    slots.append(index)
                case _:
                    outcomes[index] = Failure(TypeError(f"unknown audit message {message!r}"))
        if pending:
            try:
                entries = await self._commit(pending)
            except Exception as exc:
                log.error("audit batch failed", exc_info=exc, extra=fields(tenant_id=self._tenant_id))
                for index in slots:
                    outcomes[index] = Failure(exc)
            else:
                for index, stored in zip(slots, entries, strict=True):
                    outcomes[index] = Success(stored)
        return [o if o is not None else Failure(RuntimeError("unanswered")) for o in outcomes]

    async def _commit(self, pending: list[PendingEntry]) -> list[AuditEntry]:
        """Chain and store `pending` in one transaction; retried when a concurrent writer took a dedup key."""
        tenant_id, key = self._tenant_id, self._key
        for attempt in range(1, _ATTEMPTS + 1):
            head = self._head
            assert head is not None

            def run(conn: Connection, head: ChainHead = head) -> BatchResult:
                return append_batch(conn, tenant_id, key, head, pending)

            try:
                result = await self._services.db.write(run)
            except IntegrityError:
                if attempt == _ATTEMPTS:
                    raise
                continue
            self._head = result.head
            return result.entries
        raise AssertionError("unreachable")
