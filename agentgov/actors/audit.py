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

`ref.tell(AppendEntry(...))` also works (fire and forget: the policy check's asynchronous decision log).
A told append refused for its content (`EntryRejected`) is logged and counted, never a crash of the actor;
a told append whose transaction fails for the database (`DatabaseError`) is a crash (logged; the actor
restarts and reloads the head).

`ask` raises `EntryRejected` (a `ValueError`) for an invalid message (risk score outside 0..1, JSON that
cannot be represented exactly, blank action/resource/kind) or one holding text the database cannot store
(a NUL character, a lone surrogate: refused on every backend alike), `AuditUnavailable` when the configured
AUDIT_SECRET does not derive the key the tenant's chain was signed with (appending would break the chain),
`DatabaseError` when the batch could not be committed, and the runtime's `MailboxFull` / `ActorStopped`.

Isolation. One entry never fails the others queued with it. Entries are checked for unstorable text before
the transaction; if the transaction still fails for a reason other than the database itself (any error but
`DatabaseError`, e.g. a value the driver or the chain's signing refuses), the batch is split in halves and
each half committed in order, down to the failing entry alone, which is answered with `EntryRejected`. So
the others commit, in mailbox (chain) order. Every refused entry is logged with the tenant and entry id and
counted: `AuditActor.rejected`, the runtime's `rejected` stat of the actor, and the process-wide
`rejected_entries.total` (shown as `actors.audit_rejected` by `GET /api/v1/status`).

State and batching. The actor owns the chain head (last sequence and signature), loaded in `on_start`.
Queued appends are handled together (`max_batch`): one transaction chains and inserts all of them in
mailbox order and advances the head; every caller is answered only after that transaction committed,
so an answer means the entry is durable. While one transaction commits, new appends queue; the next batch
takes all of them (group commit), so concurrent asks such as the policy check's synchronous decision log
cost one transaction per batch, not per entry. A batch made only of told appends (the asynchronous decision
log) waits up to `LINGER` (20 ms) for more before committing, which turns a steady stream of checks into a
few large transactions; an `ask` arriving meanwhile is committed at once with them.
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
from datetime import datetime
from typing import TYPE_CHECKING, Any

from outcome import Error, Value

from agentgov.actors.runtime import Actor, ActorContext, ActorRef, Outcome, Rejected, Request
from agentgov.audit_chain import ChainHead, canonical_json
from agentgov.detection.anomaly import ScoringBacklog, prescore, score_committed
from agentgov.logs import fields, request_id_var
from agentgov.storage.audit import (
    AuditEntry,
    BatchResult,
    ChainState,
    PendingEntry,
    append_batch,
    open_chain,
    unstorable_field,
)
from agentgov.storage.database import Connection, DatabaseError, IntegrityError
from agentgov.timeutil import to_iso

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


class EntryRejected(Rejected, ValueError):
    """This entry was refused for what it holds (invalid, or a value the database cannot store); entries
    queued with it are not affected. A `ValueError`, and a runtime `Rejected`: a told entry refused this way
    is logged and counted, never a crash of the actor."""

    def __init__(self, message: str, *, entry_id: str | None) -> None:
        Exception.__init__(self, message)
        self.entry_id = entry_id


@dataclasses.dataclass
class RejectedEntries:
    """Process-wide count of audit entries refused by every tenant's audit actor (see `EntryRejected`)."""

    total: int = 0


rejected_entries = RejectedEntries()


@dataclasses.dataclass(frozen=True)
class AppendEntry(Request[AuditEntry]):
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
    occurred_at: datetime | None = None  # the event time (timezone-aware); None: the receipt time
    # The API request that asked for the entry: by default the one being served by the task building it.
    request_id: str | None = dataclasses.field(default_factory=request_id_var.get)


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
    occurred = message.occurred_at
    if occurred is not None and (not isinstance(occurred, datetime) or occurred.utcoffset() is None):
        raise ValueError("timestamp must be a date and time with a time zone")
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
        occurred_at=None if occurred is None else to_iso(occurred),
        request_id=message.request_id,
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
        self.rejected = 0
        self._scoring = ScoringBacklog()

    async def on_start(self, ctx: ActorContext) -> None:
        secret = self._services.settings.effective_audit_secret
        tenant_id = self._tenant_id
        state: ChainState = await self._services.db.write(lambda conn: open_chain(conn, tenant_id, secret))
        self._key, self._head = state.key, state.head
        if state.orphaned_entries:
            self._unavailable = (
                f"the audit trail cannot be written: this tenant's chain record is missing while "
                f"{state.orphaned_entries} entries exist (the database was altered or damaged: restore it from a "
                "backup; GET /audit/verify names the finding)"
            )
            log.error("audit chain record missing; appends refused", extra=fields(tenant_id=tenant_id))
        elif not state.key_ok:
            self._unavailable = (
                "the audit trail cannot be written: the configured AUDIT_SECRET does not derive the key this "
                "tenant's chain was signed with (restore the previous secret)"
            )
            log.error("audit key mismatch; appends refused", extra=fields(tenant_id=tenant_id))

    async def handle(self, message: AuditMessage) -> AuditEntry:
        entry: AuditEntry = (await self.handle_batch([message]))[0].unwrap()
        return entry

    async def handle_batch(self, messages: list[AuditMessage]) -> list[Outcome]:
        outcomes: list[Outcome | None] = [None] * len(messages)
        pending: list[PendingEntry] = []
        slots: list[int] = []
        for index, message in enumerate(messages):
            match message:
                case AppendEntry():
                    if self._unavailable is not None:
                        outcomes[index] = Error(AuditUnavailable(self._unavailable))
                        continue
                    try:
                        item = prepare(message)
                    except ValueError as exc:
                        outcomes[index] = Error(EntryRejected(str(exc), entry_id=None))
                        continue
                case AppendPrepared(item):
                    if self._unavailable is not None:
                        outcomes[index] = Error(AuditUnavailable(self._unavailable))
                        continue
                case _:
                    outcomes[index] = Error(EntryRejected(f"unknown audit message {message!r}", entry_id=None))
                    continue
            unstorable = unstorable_field(item)
            if unstorable is not None:
                name, why = unstorable
                outcomes[index] = Error(self._reject(item, f"{name} {why}"))
                continue
            pending.append(item)
            slots.append(index)
        if pending:
            pending, prescored = prescore(self._services, self._tenant_id, pending, self._scoring)
            await self._commit_isolating(pending, slots, outcomes)
            committed = [o.value for o in outcomes if isinstance(o, Value) and o.value.kind == "action"]
            if committed:
                score_committed(self._services, self._tenant_id, committed, prescored, self._scoring)
        return [o if o is not None else Error(RuntimeError("unanswered")) for o in outcomes]

    async def _commit_isolating(
        self, pending: list[PendingEntry], slots: list[int], outcomes: list[Outcome | None]
    ) -> None:
        """Commit `pending` in chain order, answering `outcomes[slots[i]]` for `pending[i]`.

        A `DatabaseError` (the database is unreachable or failed as a whole) fails every entry. Any other
        error comes from an entry's content (a value the database or the chain refuses): the batch is split
        in halves, committed in order, until each failing entry is alone; it is answered with
        `EntryRejected`, counted and logged, and every other entry commits.
        """
        try:
            entries = await self._commit(pending)
        except DatabaseError as exc:
            log.error("audit batch failed", exc_info=exc, extra=fields(tenant_id=self._tenant_id, entries=len(pending)))
            for index in slots:
                outcomes[index] = Error(exc)
            return
        except Exception as exc:
            if len(pending) == 1:
                outcomes[slots[0]] = Error(self._reject(pending[0], f"could not be stored: {exc}"))
                return
            middle = len(pending) // 2
            await self._commit_isolating(pending[:middle], slots[:middle], outcomes)
            await self._commit_isolating(pending[middle:], slots[middle:], outcomes)
            return
        for index, stored in zip(slots, entries, strict=True):
            outcomes[index] = Value(stored)

    def _reject(self, entry: PendingEntry, why: str) -> EntryRejected:
        """Count and log an entry that cannot be stored; the error that answers it."""
        self.rejected += 1
        rejected_entries.total += 1
        log.error(
            "audit entry refused: it cannot be stored",
            extra=fields(tenant_id=self._tenant_id, entry_id=entry.id, kind=entry.kind, error=why),
        )
        return EntryRejected(f"the audit entry cannot be stored: {why}", entry_id=entry.id)

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
