"""Human-in-the-loop approvals: request, read, list, decide, and wait for a decision."""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from typing import Any

from agentgov_client._core import ClientCore
from agentgov_client._flow import Call, Flow, Sleep
from agentgov_client._ops._common import DEFAULT_PAGE_SIZE, Pager, as_list, body, model, page_of, page_query, seg
from agentgov_client.errors import ApprovalTimeout
from agentgov_client.models import ApprovalRequest, Page

#: Polling of `wait_for_decision`: the first wait, the growth factor and the longest wait, in seconds.
POLL_FIRST, POLL_GROWTH, POLL_MAX = 0.25, 1.5, 5.0


def request_approval(
    core: ClientCore,
    agent_id: str,
    action: str,
    resource: str,
    *,
    context: Mapping[str, Any] | None = None,
    reason: str = "",
    risk_score: float | None = None,
    policy_ids: Iterable[str] = (),
) -> Flow[ApprovalRequest]:
    """``POST /hitl/request`` (Developer+): ask a human to approve an action. An identical request still
    pending (same agent, action, resource and context) is returned instead of a new one. Raises
    `NotFoundError` for an unknown agent. Not retried."""
    payload = body(
        agent_id=str(agent_id),
        action=action,
        resource=resource,
        context=dict(context or {}),
        reason=reason,
        risk_score=risk_score,
        policy_ids=as_list(policy_ids),
    )
    return core.execute(Call("POST", "/hitl/request", model(ApprovalRequest), json=payload))


def get_approval(core: ClientCore, approval_id: str) -> Flow[ApprovalRequest]:
    """``GET /hitl/status/{id}``: the request and its status. Raises `NotFoundError`. Retried."""
    return core.execute(Call("GET", f"/hitl/status/{seg(approval_id)}", model(ApprovalRequest)))


def list_pending_approvals(
    core: ClientCore, *, agent_id: str | None = None, limit: int = 50, offset: int = 0
) -> Flow[Page[ApprovalRequest]]:
    """``GET /hitl/pending``: pending requests, oldest first, optionally of one agent. Retried."""
    query = page_query("offset", offset, limit, agent_id=agent_id)
    return core.execute(Call("GET", "/hitl/pending", page_of(ApprovalRequest), params=query))


def iter_pending_approvals(
    core: ClientCore, *, agent_id: str | None = None, page_size: int = DEFAULT_PAGE_SIZE
) -> Pager[ApprovalRequest]:
    """Every pending request, page after page (see `list_pending_approvals`)."""
    return Pager(
        lambda offset, limit: list_pending_approvals(core, agent_id=agent_id, limit=limit, offset=offset), page_size
    )


def _decide(core: ClientCore, verb: str, approval_id: str, comment: str | None) -> Flow[ApprovalRequest]:
    payload = None if comment is None else {"comment": comment}
    return core.execute(Call("POST", f"/hitl/{verb}/{seg(approval_id)}", model(ApprovalRequest), json=payload))


def approve(core: ClientCore, approval_id: str, *, comment: str | None = None) -> Flow[ApprovalRequest]:
    """``POST /hitl/approve/{id}`` (Security Analyst+). Raises `ConflictError` when the request is no longer
    pending (decided or expired; ``body["current_status"]``), `NotFoundError`. Not retried."""
    return _decide(core, "approve", approval_id, comment)


def reject(core: ClientCore, approval_id: str, *, comment: str | None = None) -> Flow[ApprovalRequest]:
    """``POST /hitl/reject/{id}`` (Security Analyst+). Raises as `approve`. Not retried."""
    return _decide(core, "reject", approval_id, comment)


def wait_for_decision(
    core: ClientCore, approval_id: str, timeout: float | None = 300.0, *, poll_interval: float = POLL_FIRST
) -> Flow[ApprovalRequest]:
    """Poll ``GET /hitl/status/{id}`` until the request is no longer pending and return it: `status`
    approved, rejected or expired (`approved` says which way it went). Polls after `poll_interval` seconds,
    then 1.5 times longer each time, at most every 5 s. `timeout` None waits until the service decides (it
    expires requests after its ``HITL_TIMEOUT``).

    Raises `ApprovalTimeout` (with the last `approval` seen) when `timeout` seconds pass while it is pending,
    `NotFoundError` for an unknown id, and the errors of `get_approval` (each poll is retried as a GET)."""
    deadline = None if timeout is None else time.monotonic() + timeout
    interval = max(poll_interval, 0.01)
    while True:
        approval: ApprovalRequest = yield from get_approval(core, approval_id)
        if not approval.pending:
            return approval
        wait = interval
        if deadline is not None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise ApprovalTimeout(
                    f"approval {approval_id} still pending after {timeout:g}s",
                    approval_id=approval_id,
                    approval=approval,
                )
            wait = min(wait, remaining)
        yield Sleep(wait)
        interval = min(interval * POLL_GROWTH, POLL_MAX)
