"""`guarded`: check an action, wait for its approval if needed, run it, and log what it did."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from typing import Any, Literal

from agentgov_client._core import ClientCore
from agentgov_client._flow import Flow, Invoke
from agentgov_client._ops._common import MAX_JSON_CHARS, error_output, json_object
from agentgov_client._ops.approvals import request_approval, wait_for_decision
from agentgov_client._ops.audit import log_action
from agentgov_client._ops.policies import check
from agentgov_client.errors import UNREACHABLE_ERRORS as _UNREACHABLE
from agentgov_client.errors import (
    ActionDenied,
    AgentgovError,
    ApprovalTimeout,
    ServiceUnreachable,
)
from agentgov_client.models import ApprovalRequest, PolicyDecision

log = logging.getLogger("agentgov_client")

OnUnreachable = Literal["fail_closed", "fail_open"]


def _output(result: Any) -> dict[str, Any]:
    output = json_object(result)
    text = json.dumps(output, default=repr)
    if len(text) > MAX_JSON_CHARS:
        return {"result": text[:MAX_JSON_CHARS], "truncated": True}
    return output


def guarded(
    core: ClientCore,
    agent_id: str,
    action: str,
    resource: str,
    context: Mapping[str, Any] | None,
    run: Callable[[], Any],
    *,
    approval_timeout: float | None = 300.0,
    on_unreachable: OnUnreachable = "fail_closed",
) -> Flow[Any]:
    """Run `run()` only if the policy allows the agent's action, and record what it did.

    1. `check` the action (retried as any check).
    2. Denied: raise `ActionDenied` (its `decision`); `run` is not called.
    3. Allowed with ``required_approval``: wait for a human decision (`wait_for_decision`, at most
       `approval_timeout` seconds; an approval request is opened if the check could not open one). Rejected,
       expired or timed out: raise `ActionDenied` (with the `approval`).
    4. Call `run()` (the async client awaits it when it returns an awaitable).
    5. `log_action` with ``input`` the context and ``output`` the result (a dict as is, else
       ``{"result": value}``, or its ``repr`` when it is not JSON; an exception of `run` is logged as
       ``{"error": ...}`` and raised again). An error of this log is raised after `run` succeeded.
    6. Return what `run()` returned.

    When the service cannot be asked (`APIConnectionError`, or 503 after the retries):
    ``on_unreachable="fail_closed"`` (default) raises `ServiceUnreachable` and `run` is not called;
    ``"fail_open"`` calls `run` anyway, tries to log the action, and returns its result (an error of that log
    is only reported as a warning on the ``agentgov_client`` logger). Losing the service while waiting for an
    approval raises `ServiceUnreachable` in both modes: the policy asked for a human.
    """
    if on_unreachable not in ("fail_closed", "fail_open"):
        raise ValueError("on_unreachable must be 'fail_closed' or 'fail_open'")
    context = dict(context or {})
    try:
        decision: PolicyDecision = yield from check(core, agent_id, action, resource, context)
    except _UNREACHABLE as exc:
        if on_unreachable == "fail_closed":
            raise ServiceUnreachable(f"{action} on {resource} not run: the policy service is unreachable") from exc
        log.warning(
            "policy service unreachable; running %s on %s without a decision (fail-open): %s", action, resource, exc
        )
        return (
            yield from _run_and_log(core, agent_id, action, resource, context, run, approved=None, best_effort=True)
        )
    if not decision.allowed:
        raise ActionDenied(f"{action} on {resource} denied: {decision.reason}", decision=decision)
    if decision.required_approval:
        approval = yield from _approval(core, agent_id, action, resource, context, decision, approval_timeout)
        if not approval.approved:
            raise ActionDenied(
                f"{action} on {resource} not approved: approval {approval.id} is {approval.status}",
                decision=decision,
                approval=approval,
            )
    return (yield from _run_and_log(core, agent_id, action, resource, context, run, approved=True, best_effort=False))


def _approval(
    core: ClientCore,
    agent_id: str,
    action: str,
    resource: str,
    context: dict[str, Any],
    decision: PolicyDecision,
    timeout: float | None,
) -> Flow[ApprovalRequest]:
    """The human decision on the checked action (opening the request when the check could not)."""
    try:
        approval_id = decision.approval_id
        if approval_id is None:
            opened: ApprovalRequest = yield from request_approval(
                core,
                agent_id,
                action,
                resource,
                context=context,
                reason=decision.reason,
                risk_score=decision.risk_score,
                policy_ids=decision.determining_policies,
            )
            approval_id = opened.id
        return (yield from wait_for_decision(core, approval_id, timeout))
    except ApprovalTimeout as exc:
        raise ActionDenied(
            f"{action} on {resource} not approved within {timeout:g}s", decision=decision, approval=exc.approval
        ) from exc
    except _UNREACHABLE as exc:
        raise ServiceUnreachable(
            f"{action} on {resource} not run: the service became unreachable while waiting for approval",
            decision=decision,
        ) from exc


def _run_and_log(
    core: ClientCore,
    agent_id: str,
    action: str,
    resource: str,
    context: dict[str, Any],
    run: Callable[[], Any],
    *,
    approved: bool | None,
    best_effort: bool,
) -> Flow[Any]:
    try:
        result = yield Invoke(run)
    except Exception as exc:
        output = error_output(exc)
        yield from _log(core, agent_id, action, resource, context, output, approved, best_effort=True)
        raise
    yield from _log(core, agent_id, action, resource, context, _output(result), approved, best_effort=best_effort)
    return result


def _log(
    core: ClientCore,
    agent_id: str,
    action: str,
    resource: str,
    context: dict[str, Any],
    output: dict[str, Any],
    approved: bool | None,
    *,
    best_effort: bool,
) -> Flow[None]:
    try:
        yield from log_action(
            core, agent_id, action, resource, input=context or None, output=output, is_approved=approved
        )
    except AgentgovError as exc:
        if not best_effort:
            raise
        log.warning("could not log %s on %s to the audit trail: %s", action, resource, exc)
