"""The per-tenant human-in-the-loop actor (`hitl:<tenant_id>`): approval requests and their expiry.

Interface used by other modules:

* `hitl(services, tenant_id) -> ActorRef` - the tenant's HITL actor, started on first use.
* `await ref.ask(RequestApproval(agent_id, action, resource, context, policy_ids, reason, requested_by,
  risk_score=None))` -> `ApprovalRequest` (`id`, `status`, `to_public()`). An identical request (same agent,
  action, resource and canonical context) that is still pending is answered instead of a new one
  (`record.reused` is then true). The actor does not check that the agent exists: callers do (the HTTP
  route asks the registry). Raises `ValueError` for a malformed message.
* `await ref.ask(Decide(request_id, approve, reviewer, comment))` -> the decided `ApprovalRequest`; raises
  `ApprovalNotFound` (unknown in this tenant) or `AlreadyResolved` (approved, rejected or expired before:
  `exc.request` is the current record).
* `await ref.ask(GetApproval(request_id))` -> `ApprovalRequest`; raises `ApprovalNotFound`.
* `await ref.ask(ListPending(limit, offset, agent_id=None))` -> `(records, total)`.

Creating a request publishes `hitl.requested`; approving, rejecting and expiring publish `hitl.resolved`
(both through the tenant's notifier, best effort: a full or stopped notifier loses the event, never the
request).

Expiry: a request expires `HITL_TIMEOUT` seconds after it was created. Deadlines are kept on the trio clock
(`trio.current_time()`), so a mock clock drives them in tests; the wall-clock `expires_at` is stored for
display and for reloading. A timer task in the actor's nursery sleeps until the earliest deadline (it is
woken to reschedule when a request is added) and then sends the actor a `_Tick`; every message is handled
after expiring whatever is due, so no answer ever shows a request pending past its deadline, and a decision
arriving at or after the deadline is refused (409) because the request has expired. While requests are
pending the timer also ticks at least every third of the idle timeout, so the actor does not idle-stop.

Restart: `on_start` reloads the tenant's pending requests; those already past `expires_at` are expired at
once, the others get a deadline for their remaining time. At service start (`start_pending_timers`, run when
the app starts serving) the actor of every tenant with pending requests is started, so expiry does not wait
for the tenant's next request. Several processes may expire the same request: transitions are conditional
updates, so only one wins and publishes.

Cancellation: cancelling the actor (service stop, idle stop) cancels the timer task; a database write in
progress completes or rolls back (storage never abandons a statement), so a request is never half-decided.
Requests whose deadline passes while no actor runs are expired when the actor next starts.
"""

from __future__ import annotations

import dataclasses
import heapq
import logging
import math
from datetime import timedelta
from typing import TYPE_CHECKING, Any

import trio

from agentgov.actors.relay import publish_event
from agentgov.actors.runtime import Actor, ActorContext, ActorRef, InvalidMessage, Request
from agentgov.actors.ticker import SelfTicker
from agentgov.logs import fields
from agentgov.siem import outbox as siem
from agentgov.siem.events import approval_event
from agentgov.storage.hitl import (
    APPROVED,
    EXPIRED,
    PENDING,
    REJECTED,
    ApprovalRequest,
    HitlRepo,
    NewApproval,
)
from agentgov.timeutil import now, now_iso, parse_iso, to_iso

if TYPE_CHECKING:
    from agentgov.services import Services

log = logging.getLogger("agentgov.hitl")

DEFAULT_TIMEOUT = 3600.0


class ApprovalNotFound(Exception):
    """No approval request with this id in this tenant."""

    def __init__(self, request_id: str) -> None:
        super().__init__(f"approval request {request_id} not found")
        self.request_id = request_id


class AlreadyResolved(Exception):
    """The request was approved, rejected or expired before this decision; `request` is its current state."""

    def __init__(self, request: ApprovalRequest) -> None:
        what = "has expired" if request.status == EXPIRED else f"was already {request.status}"
        super().__init__(f"approval request {request.id} {what}")
        self.request = request


# ---- messages -------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class RequestApproval(Request[ApprovalRequest]):
    """Ask reviewers to approve an agent's action. Raises `ValueError` (when built) if malformed."""

    agent_id: str
    action: str
    resource: str
    context: dict[str, Any]
    policy_ids: list[str]
    reason: str
    requested_by: str
    risk_score: float | None = None

    def __post_init__(self) -> None:
        for name in ("agent_id", "requested_by"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value.strip():
                raise InvalidMessage(f"{name} must be a non-blank string")
        for name in ("action", "resource"):  # as the policy check accepts them (the HTTP API is stricter)
            if not isinstance(getattr(self, name), str):
                raise InvalidMessage(f"{name} must be a string")
        if not isinstance(self.context, dict):
            raise InvalidMessage("context must be an object")
        if not isinstance(self.policy_ids, list | tuple) or not all(isinstance(p, str) for p in self.policy_ids):
            raise InvalidMessage("policy_ids must be a list of strings")
        if not isinstance(self.reason, str):
            raise InvalidMessage("reason must be a string")
        if self.risk_score is not None and not (0.0 <= float(self.risk_score) <= 1.0):
            raise InvalidMessage("risk_score must be between 0.0 and 1.0")


@dataclasses.dataclass(frozen=True)
class Decide(Request[ApprovalRequest]):
    """Approve (`approve=True`) or reject a pending request as `reviewer`, with an optional comment."""

    request_id: str
    approve: bool
    reviewer: str
    comment: str | None = None


@dataclasses.dataclass(frozen=True)
class GetApproval(Request[ApprovalRequest]):
    request_id: str


@dataclasses.dataclass(frozen=True)
class ListPending(Request[tuple[list[ApprovalRequest], int]]):
    limit: int
    offset: int
    agent_id: str | None = None


@dataclasses.dataclass(frozen=True)
class _Tick:
    """Sent by the actor's own timer when a deadline is due (and to keep the actor alive)."""


HitlMessage = RequestApproval | Decide | GetApproval | ListPending | _Tick


# ---- the actor ------------------------------------------------------------------------------------------


class HitlActor(Actor[HitlMessage]):
    """Owns the expiry timers of one tenant's pending requests; the requests themselves live in storage."""

    def __init__(self, services: Services, tenant_id: str) -> None:
        self.services = services
        self.tenant_id = tenant_id
        self.repo = HitlRepo(services.db)
        self.timeout = float(services.settings.hitl_timeout)
        self._deadlines: dict[str, float] = {}
        self._heap: list[tuple[float, str]] = []
        self._keepalive = math.inf
        self._ticker = SelfTicker(
            _Tick(), self._next_wake, lambda: min(1.0, self._keepalive)
        )  # when busy, queued messages expire what is due

    async def on_start(self, ctx: ActorContext) -> None:
        self._keepalive = ctx.system.idle_timeout / 3
        overdue = []
        wall = now()
        for record in await self.repo.all_pending(self.tenant_id):
            remaining = (parse_iso(record.expires_at) - wall).total_seconds()
            if remaining <= 0:
                overdue.append(record.id)
            else:
                self._track(record.id, trio.current_time() + remaining)
        if overdue:
            await self._expire(overdue)
        if self._deadlines or overdue:
            log.info(
                "pending approvals reloaded",
                extra=fields(tenant_id=self.tenant_id, pending=len(self._deadlines), expired=len(overdue)),
            )
        self._ticker.start(ctx)

    async def handle(self, message: HitlMessage) -> Any:
        await self._expire_due()
        match message:
            case RequestApproval():
                return await self._request(message)
            case Decide(request_id=request_id, approve=approve, reviewer=reviewer, comment=comment):
                return await self._decide(request_id, approve, reviewer, comment)
            case GetApproval(request_id=request_id):
                return await self._get(request_id)
            case ListPending(limit=limit, offset=offset, agent_id=agent_id):
                return await self.repo.list_pending(
                    self.tenant_id, now=now_iso(), limit=limit, offset=offset, agent_id=agent_id
                )
            case _Tick():
                self._ticker.poke()
                return None
            case _:
                raise TypeError(f"unexpected message {message!r}")

    # -- operations --

    async def _request(self, message: RequestApproval) -> ApprovalRequest:
        created_at = now()
        outcome = await self.repo.create(
            self.tenant_id,
            NewApproval(
                agent_id=message.agent_id,
                action=message.action,
                resource=message.resource,
                context=dict(message.context),
                policy_ids=tuple(message.policy_ids),
                reason=message.reason,
                risk_score=None if message.risk_score is None else float(message.risk_score),
                requested_by=message.requested_by,
            ),
            now=to_iso(created_at),
            expires_at=to_iso(created_at + timedelta(seconds=self.timeout)),
        )
        if outcome.expired is not None:
            self._forget(outcome.expired.id)
            self._publish("hitl.resolved", outcome.expired)
        record = outcome.request
        if outcome.created:
            self._track(record.id, trio.current_time() + self.timeout)
            self._publish("hitl.requested", record)
            log.info(
                "approval requested",
                extra=fields(tenant_id=self.tenant_id, request_id=record.id, agent_id=record.agent_id),
            )
        else:
            self._adopt(record)
        return record

    async def _decide(self, request_id: str, approve: bool, reviewer: str, comment: str | None) -> ApprovalRequest:
        status = APPROVED if approve else REJECTED
        changed, record = await self.repo.decide(
            self.tenant_id, request_id, status, by=reviewer, comment=comment, now=now_iso()
        )
        if record is None:
            raise ApprovalNotFound(request_id)
        if not changed:
            if record.status == PENDING:  # past its wall-clock expiry, timer not run here (another process)
                record = await self._expire_one(record)
            self._forget(request_id)
            raise AlreadyResolved(record)
        self._forget(request_id)
        self._publish("hitl.resolved", record)
        log.info(
            "approval decided",
            extra=fields(tenant_id=self.tenant_id, request_id=request_id, status=status, reviewer=reviewer),
        )
        return record

    async def _get(self, request_id: str) -> ApprovalRequest:
        record = await self.repo.get(self.tenant_id, request_id)
        if record is None:
            raise ApprovalNotFound(request_id)
        if record.status == PENDING:
            if record.expires_at <= now_iso() and request_id not in self._deadlines:
                return await self._expire_one(record)
            self._adopt(record)
        else:
            self._forget(request_id)
        return record

    # -- expiry --

    def _track(self, request_id: str, deadline: float) -> None:
        self._deadlines[request_id] = deadline
        heapq.heappush(self._heap, (deadline, request_id))
        self._ticker.poke()

    def _adopt(self, record: ApprovalRequest) -> None:
        """Track a pending request this actor did not create (another process, or before a restart)."""
        if record.id not in self._deadlines:
            remaining = (parse_iso(record.expires_at) - now()).total_seconds()
            self._track(record.id, trio.current_time() + max(0.0, remaining))

    def _forget(self, request_id: str) -> None:
        self._deadlines.pop(request_id, None)  # its heap entry is skipped when popped

    async def _expire_due(self) -> None:
        clock = trio.current_time()
        due = []
        while self._heap and self._heap[0][0] <= clock:
            deadline, request_id = heapq.heappop(self._heap)
            if self._deadlines.get(request_id) == deadline:
                due.append(request_id)
        if due:
            await self._expire(due)

    async def _expire(self, request_ids: list[str]) -> None:
        for request_id in request_ids:
            self._forget(request_id)
        expired = await self.repo.expire(self.tenant_id, request_ids, now=now_iso())
        for record in expired:
            self._publish("hitl.resolved", record)
        if expired:
            log.info("approvals expired", extra=fields(tenant_id=self.tenant_id, count=len(expired)))

    async def _expire_one(self, record: ApprovalRequest) -> ApprovalRequest:
        await self._expire([record.id])
        return await self.repo.get(self.tenant_id, record.id) or record

    def _publish(self, event: str, record: ApprovalRequest) -> None:
        announce(self.services, event, record)

    def _next_wake(self) -> float:
        """The earliest deadline (and every third of the idle timeout while any is pending)."""
        if not self._deadlines:
            return math.inf
        return min(self._heap[0][0], trio.current_time() + self._keepalive)


def announce(services: Services, event: str, record: ApprovalRequest) -> None:
    """Tell subscribers (`hitl.requested` / `hitl.resolved`) and the SIEM about `record`. Never raises."""
    siem.record(services, approval_event(record))
    publish_event(services, record.tenant_id, event, record.to_public())


def hitl(services: Services, tenant_id: str) -> ActorRef[HitlMessage]:
    """The tenant's HITL actor (`hitl:<tenant_id>`), started on first use. Raises `ActorStopped` while the
    service is stopping."""
    return services.actors.get_or_spawn(f"hitl:{tenant_id}", lambda: HitlActor(services, tenant_id))


async def start_pending_timers(services: Services) -> int:
    """Start the HITL actor of every tenant with pending requests; returns how many were started."""
    tenants = await HitlRepo(services.db).tenants_with_pending()
    for tenant_id in tenants:
        hitl(services, tenant_id)
    return len(tenants)


__all__ = [
    "AlreadyResolved",
    "ApprovalNotFound",
    "ApprovalRequest",
    "Decide",
    "GetApproval",
    "ListPending",
    "RequestApproval",
    "hitl",
    "start_pending_timers",
]
