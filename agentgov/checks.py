"""The policy check use case: decide an agent's action, record the decision, and tell who needs to know.

It runs in the caller's task (the HTTP hot path, or any other entry point) and uses the actors through their
published views and messages:

* `await check_action(services, tenant_id, agent_id, action, resource, context, actor=...)` -> `CheckResult`:
  the agent's attributes from the registry's published view, the evaluation of the tenant's published
  policy set, a `policy.violated` event for a deny, a human-approval request when the decision requires
  one, and the decision-log entry (`record_decision`: with `DECISION_LOG=sync`, the default, returned only
  once the entry is committed; with `async`, once it is queued).
* `CheckResult` is the one typed result: the HTTP layer serialises it (`to_response`, the `POST
  /policies/check` body), the decision log records `audit_record()`, the notifier publishes
  `violation_event()`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from agentgov.actors.audit import AppendPrepared, audit
from agentgov.actors.hitl import RequestApproval, hitl
from agentgov.actors.policy import policy_view
from agentgov.actors.registry import lookup_agent
from agentgov.actors.relay import publish_event
from agentgov.actors.runtime import ActorStopped, MailboxFull
from agentgov.audit_chain import canonical_json
from agentgov.detection.anomaly import anomaly_scorer, scoring_view
from agentgov.ids import random_uuid
from agentgov.logs import fields, request_id_var
from agentgov.policy import AgentAttributes, Decision
from agentgov.storage.agents import Agent
from agentgov.storage.audit import PendingEntry
from agentgov.timeutil import now, now_iso

if TYPE_CHECKING:
    from agentgov.services import Services

log = logging.getLogger("agentgov.policy")


@dataclasses.dataclass(frozen=True, slots=True)
class CheckResult:
    """One decided check: the evaluation and what the check path added to it."""

    decision: Decision
    decision_id: str
    evaluated_at: str
    approval_id: str | None = None
    anomaly: dict[str, Any] | None = None  # the detector's verdict on the action (None: no model active)

    def to_response(self) -> dict[str, Any]:
        """The `POST /policies/check` answer (`CheckResponse` in the OpenAPI document)."""
        body = self.decision.to_response()
        body["anomaly"] = self.anomaly
        body["approval_id"] = self.approval_id
        body["decision_id"] = self.decision_id
        body["default_applied"] = self.decision.default_applied
        body["evaluated_at"] = self.evaluated_at
        return body

    def audit_record(self) -> dict[str, Any]:
        """The decision as the audit entry records it (`details` of a `policy_check` entry)."""
        decision = self.decision
        return {
            "decision_id": self.decision_id,
            "allowed": decision.allowed,
            "reason": decision.reason,
            "severity": decision.severity,
            "required_approval": decision.required_approval,
            "risk_score": decision.risk_score,
            "risk": decision.risk.to_dict(),
            "determining_policies": list(decision.determining_policies),
            "default_applied": decision.default_applied,
            "errors": [e.to_dict() for e in decision.errors],
            "approval_id": self.approval_id,
            "evaluated_at": self.evaluated_at,
        }

    def violation_event(self, agent: Agent, action: str, resource: str) -> dict[str, Any]:
        """The `policy.violated` event's data."""
        decision = self.decision
        return {
            "decision_id": self.decision_id,
            "agent_id": agent.id,
            "agent_name": agent.name,
            "action": action,
            "resource": resource,
            "reason": decision.reason,
            "severity": decision.severity,
            "risk_score": decision.risk_score,
            "determining_policies": list(decision.determining_policies),
            "default_applied": decision.default_applied,
        }


def agent_attributes(agent: Agent) -> AgentAttributes:
    """The Cedar principal attributes of a registry agent. Raises `InvalidRequestError` if the record holds
    a value the policy schema does not know (an unknown type or status)."""
    return AgentAttributes(
        id=agent.id,
        name=agent.name,
        type=agent.type,
        status=agent.status,
        capabilities=frozenset(agent.capabilities),
        risk_score=agent.risk_score,
    )


async def check_action(
    services: Services,
    tenant_id: str,
    agent_id: str,
    action: str,
    resource: str,
    context: Mapping[str, Any],
    *,
    actor: str,
) -> CheckResult:
    """Decide an agent's action (module docstring for the steps).

    Raises `AgentNotFound` (unknown agent in this tenant), `InvalidRequestError` (malformed request),
    `MailboxFull` / `ActorStopped` (registry, policy or audit actor busy or stopping: the HTTP answer is a
    503 with Retry-After), and what `record_decision` raises when the decision cannot be recorded (then no
    decision is answered). It waits on an actor when the registry's view cannot answer the lookup, on the
    first use of the tenant's policy set, to open an approval request, and (sync mode) for the audit commit.
    Cancellation before the evaluation leaves no trace; after it, the decision may already be queued for
    the audit trail and will then be committed.
    """
    agent = await lookup_agent(services, tenant_id, agent_id)
    view = await policy_view(services, tenant_id)
    anomaly = score_check(services, tenant_id, agent.id, action, resource)
    decision = view.evaluate(
        agent_attributes(agent),
        action,
        resource,
        context,
        anomaly_score=None if anomaly is None else float(anomaly["score"]),
    )
    result = CheckResult(decision=decision, decision_id=random_uuid(), evaluated_at=now_iso(), anomaly=anomaly)
    if not decision.allowed:
        notify_violation(services, tenant_id, agent, action, resource, result)
    if decision.required_approval:
        approval_id = await request_approval(services, tenant_id, agent, action, resource, context, result, actor)
        result = dataclasses.replace(result, approval_id=approval_id)
    await record_decision(services, tenant_id, agent, action, resource, context, result, actor)
    return result


def score_check(services: Services, tenant_id: str, agent_id: str, action: str, resource: str) -> dict[str, Any] | None:
    """The anomaly detector's verdict on the checked action, in the agent's recent context (not added to it:
    the action is scored again when it is logged). None while no model is active here; the first check of a
    tenant starts its scorer, so later checks are scored within about a second."""
    scoring = scoring_view(services, tenant_id)
    if scoring is None:
        with contextlib.suppress(ActorStopped):
            anomaly_scorer(services, tenant_id)
        return None
    return scoring.peek(agent_id, action, resource, now())


async def record_decision(
    services: Services,
    tenant_id: str,
    agent: Agent,
    action: str,
    resource: str,
    context: Mapping[str, Any],
    result: CheckResult,
    actor: str,
) -> None:
    """Record the decision in the tenant's audit chain (`kind="policy_check"`).

    `DECISION_LOG=sync` (the default): ask the tenant's audit actor and return once the entry is committed.
    Concurrent checks are group-committed: while one transaction commits, the next decisions queue and go
    into the next batch. `DECISION_LOG=async`: return once the entry is queued (the audit actor commits it
    within its linger window); a crash of the process loses what is queued and not yet committed.

    In both modes a full audit mailbox raises `MailboxFull` and a stopping actor `ActorStopped` (answered
    503 with Retry-After): a decision is never answered without its entry being at least queued. In sync
    mode it also raises `EntryRejected` (a 422: the entry holds text the database cannot store),
    `AuditUnavailable` (the chain's key does not match AUDIT_SECRET), `DatabaseError` (commit failed) and
    `ActorCrashed`. A context the chain cannot represent as JSON (NaN, infinities) is recorded as a note
    saying so. Cancellation while waiting for the commit abandons the wait, not the entry.
    """
    decision = result.decision
    pending_approval = decision.allowed and decision.required_approval
    try:
        recorded_input = canonical_json({"context": context})
    except ValueError as exc:
        recorded_input = canonical_json({"context": {"unrecordable": str(exc)}})
    entry = PendingEntry(
        id=random_uuid(),
        kind="policy_check",
        agent_id=agent.id,
        actor=actor,
        action=action,
        resource=resource,
        input=recorded_input,
        output=None,
        reasoning=None,
        risk_score=float(decision.risk_score),
        is_approved=None if pending_approval else decision.allowed,
        decision=canonical_json(result.audit_record()),
        dedup_key=None,
        request_id=request_id_var.get(),
    )
    ref = audit(services, tenant_id)
    if services.settings.decision_log == "async":
        ref.tell(AppendPrepared(entry))
    else:
        await ref.ask(AppendPrepared(entry))


def notify_violation(
    services: Services, tenant_id: str, agent: Agent, action: str, resource: str, result: CheckResult
) -> None:
    """Publish `policy.violated` for a denied check (fire-and-forget to the tenant's notifier).

    A full or stopped notifier mailbox never fails the check: it is logged.
    """
    publish_event(services, tenant_id, "policy.violated", result.violation_event(agent, action, resource))


async def request_approval(
    services: Services,
    tenant_id: str,
    agent: Agent,
    action: str,
    resource: str,
    context: Mapping[str, Any],
    result: CheckResult,
    actor: str,
) -> str | None:
    """Open a human-approval request for an allowed action that requires one; return its id.

    An identical request still pending is reused by the HITL actor (same id). If the HITL actor is busy or
    stopping the check still answers, with `approval_id` null (logged): the client may then ask for approval
    itself with `POST /hitl/request`.
    """
    decision = result.decision
    request = RequestApproval(
        agent_id=agent.id,
        action=action,
        resource=resource,
        context=dict(context),
        policy_ids=list(decision.determining_policies),
        reason=decision.reason,
        requested_by=actor,
        risk_score=decision.risk_score,
    )
    try:
        record = await hitl(services, tenant_id).ask(request)
    except (MailboxFull, ActorStopped) as exc:
        log.error(
            "approval request not opened for a check that requires one",
            extra=fields(tenant_id=tenant_id, decision_id=result.decision_id, error=str(exc)),
        )
        return None
    return str(record.id)
