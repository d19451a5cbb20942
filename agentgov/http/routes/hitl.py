"""Human-in-the-loop approvals: request, approve, reject, status, pending list.

Statuses: `pending`, then exactly one of `approved`, `rejected` or `expired`. A request nobody decides
within `HITL_TIMEOUT` seconds (default 3600) expires; `expired` counts as a rejection (`approved` is false).
Deciding a request that is no longer pending (decided before, or expired) is a 409.
"""

from __future__ import annotations

import json
import logging
import uuid
from typing import Annotated, Any

from pydantic import BaseModel, Field, field_validator
from quart import Blueprint, request
from quart_schema import document_request, document_response, tag

from agentgov.actors.hitl import (
    AlreadyResolved,
    ApprovalNotFound,
    Decide,
    GetApproval,
    ListPending,
    RequestApproval,
    hitl,
    start_pending_timers,
)
from agentgov.actors.registry import AgentNotFound, lookup_agent
from agentgov.http.actor_calls import ask_actor
from agentgov.http.auth import Scheme, authorize, principal, services, tenant_id
from agentgov.http.errors import ApiError
from agentgov.http.ids import parse_uuid
from agentgov.http.schemas import DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, Page, RequestModel, bounded_name, page
from agentgov.http.validation import json_body, parse_model, query, read_json
from agentgov.logs import fields
from agentgov.security.roles import Permission
from agentgov.storage.hitl import ApprovalRequest

HITL = "The approval service"

bp = Blueprint("hitl", __name__)
log = logging.getLogger("agentgov.hitl")

MAX_TEXT = 2000
MAX_POLICY_IDS = 50


class ApprovalCreate(RequestModel):
    agent_id: uuid.UUID = Field(description="The agent asking to act; it must be registered in this tenant.")
    action: bounded_name(200)  # type: ignore[valid-type]
    resource: bounded_name(1000)  # type: ignore[valid-type]
    context: dict[str, Any] = Field(default_factory=dict, description="Free-form context shown to reviewers.")
    reason: str = Field("", max_length=MAX_TEXT, description="Why approval is needed.")
    risk_score: float | None = Field(None, strict=True, ge=0.0, le=1.0, allow_inf_nan=False)
    policy_ids: list[Annotated[str, Field(min_length=1, max_length=200)]] = Field(
        default_factory=list, max_length=MAX_POLICY_IDS, description="Policies that asked for the approval."
    )

    @field_validator("context")
    @classmethod
    def _json_context(cls, value: dict[str, Any]) -> dict[str, Any]:
        try:
            json.dumps(value, allow_nan=False)
        except ValueError:
            raise ValueError("must not contain NaN or infinite numbers") from None
        return value


class Decision(RequestModel):
    comment: str | None = Field(None, max_length=MAX_TEXT, description="The reviewer's note, kept with the decision.")


class ApprovalOut(BaseModel):
    id: str
    agent_id: str
    action: str
    resource: str
    context: dict[str, Any]
    policy_ids: list[str]
    reason: str
    risk_score: float | None
    requested_by: str
    status: str = Field(description="pending, approved, rejected or expired (expired counts as rejected)")
    approved: bool | None = Field(description="null while pending; true only when approved")
    created_at: str
    expires_at: str
    decided_at: str | None
    decided_by: str | None = Field(description="The reviewer (user:<id> or key:<id>), or system:timeout")
    comment: str | None


class PendingQuery(BaseModel):
    limit: int = Field(DEFAULT_PAGE_SIZE, ge=1, le=MAX_PAGE_SIZE)
    offset: int = Field(0, ge=0)
    agent_id: uuid.UUID | None = None


@bp.before_app_serving
async def _start_timers() -> None:
    """Start the expiry timers of every tenant with pending requests when the service starts.

    A failure is logged, not fatal: a tenant's timers then start with its next HITL request or read.
    """
    try:
        started = await start_pending_timers(services())
    except Exception:
        log.exception("could not start the expiry timers of pending approval requests")
        return
    if started:
        log.info("approval expiry timers started", extra=fields(tenants=started))


def parse_approval_id(text: str) -> str:
    """The canonical form of the `approval_id` path parameter. Raises `ApiError` 422 (`parse_uuid`)."""
    return parse_uuid(text, "approval_id")


def _public(record: ApprovalRequest) -> dict[str, Any]:
    return ApprovalOut(**record.to_public()).model_dump()


@bp.post("/hitl/request")
@authorize(Scheme.API_KEY, permission=Permission.HITL_REQUEST)
@tag(["hitl"])
@json_body(ApprovalCreate)
@document_response(ApprovalOut, 201)
async def request_approval(data: ApprovalCreate) -> tuple[dict[str, Any], int]:
    """Create an approval request (201), or answer the identical one still pending (200): same agent, action,
    resource and context. Publishes `hitl.requested`. 404 when the agent is not registered in this tenant."""
    tid = tenant_id()
    agent_id = str(data.agent_id)
    try:
        await lookup_agent(services(), tid, agent_id)
    except AgentNotFound:
        raise ApiError(404, "Agent not found") from None
    record: ApprovalRequest = await ask_actor(
        hitl(services(), tid),
        RequestApproval(
            agent_id=agent_id,
            action=data.action,
            resource=data.resource,
            context=data.context,
            policy_ids=list(data.policy_ids),
            reason=data.reason,
            requested_by=principal().actor_label,
            risk_score=data.risk_score,
        ),
        what=HITL,
    )
    return _public(record), 200 if record.reused else 201


async def _decision() -> Decision:
    """The optional decision body: empty means no comment; otherwise a JSON object."""
    raw = await request.get_data(as_text=False)
    if not raw.strip():
        return Decision(comment=None)
    return parse_model(Decision, await read_json())


async def _decide(raw_id: str, approve: bool) -> dict[str, Any]:
    request_id = parse_approval_id(raw_id)
    body = await _decision()
    record: ApprovalRequest = await ask_actor(
        hitl(services(), tenant_id()),
        Decide(request_id, approve=approve, reviewer=principal().actor_label, comment=body.comment),
        what=HITL,
        errors={
            ApprovalNotFound: lambda _: ApiError(404, "Approval request not found"),
            AlreadyResolved: lambda exc: ApiError(409, f"Conflict: {exc}", current_status=exc.request.status),
        },
    )
    return _public(record)


@bp.post("/hitl/approve/<approval_id>")
@authorize(Scheme.API_KEY, permission=Permission.HITL_DECIDE)
@tag(["hitl"])
@document_request(Decision)
@document_response(ApprovalOut)
async def approve(approval_id: str) -> dict[str, Any]:
    """Approve a pending request (Security Analyst+). The body is optional: `{"comment": "..."}`. 409 when it
    was already decided or has expired. Publishes `hitl.resolved`."""
    return await _decide(approval_id, approve=True)


@bp.post("/hitl/reject/<approval_id>")
@authorize(Scheme.API_KEY, permission=Permission.HITL_DECIDE)
@tag(["hitl"])
@document_request(Decision)
@document_response(ApprovalOut)
async def reject(approval_id: str) -> dict[str, Any]:
    """Reject a pending request (Security Analyst+). The body is optional: `{"comment": "..."}`. 409 when it
    was already decided or has expired. Publishes `hitl.resolved`."""
    return await _decide(approval_id, approve=False)


@bp.get("/hitl/status/<approval_id>")
@authorize(Scheme.API_KEY, permission=Permission.HITL_READ)
@tag(["hitl"])
@document_response(ApprovalOut)
async def status(approval_id: str) -> dict[str, Any]:
    """One request and its status: pending, approved, rejected or expired."""
    request_id = parse_approval_id(approval_id)
    record: ApprovalRequest = await ask_actor(
        hitl(services(), tenant_id()),
        GetApproval(request_id),
        what=HITL,
        errors={ApprovalNotFound: lambda _: ApiError(404, "Approval request not found")},
    )
    return _public(record)


@bp.get("/hitl/pending")
@authorize(Scheme.API_KEY, permission=Permission.HITL_READ)
@tag(["hitl"])
@query(PendingQuery)
@document_response(Page[ApprovalOut])
async def pending(query: PendingQuery) -> dict[str, Any]:
    """Pending requests, oldest first (optionally of one agent), paginated."""
    records, total = await ask_actor(
        hitl(services(), tenant_id()),
        ListPending(
            limit=query.limit,
            offset=query.offset,
            agent_id=None if query.agent_id is None else str(query.agent_id),
        ),
        what=HITL,
    )
    return page([_public(r) for r in records], total, query.limit, query.offset)
