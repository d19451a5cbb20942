"""Audit trail: append entries, list and read them, verify the tenant's chain.

Writes need `audit:write` (Developer and above), reads `audit:read`, verification `audit:verify`
(Security Analyst and above). Appends go through the tenant's audit actor (`agentgov.actors.audit`), which
batches them; a 201 means the entry is committed. A request abandoned after its entry was queued (client
gone, 503 after `ASK_TIMEOUT`) may still have stored it: retry with the same `Idempotency-Key` to be
sure of one entry. Reads and verification query storage directly (verification in one read snapshot).
An unknown entry id, or one of another tenant, is a 404; a malformed id a 422. Exports are elsewhere.
"""

from __future__ import annotations

import re
import uuid
from datetime import datetime, timedelta
from typing import Annotated, Any

import trio
from pydantic import AfterValidator, AwareDatetime, BaseModel, BeforeValidator, Field, StrictBool
from quart import Blueprint, request
from quart_schema import document_headers, document_response, tag

from agentgov.actors.audit import AppendEntry, AuditUnavailable, EntryRejected, audit
from agentgov.actors.registry import AgentNotFound, lookup_agent
from agentgov.http.actor_calls import ASK_TIMEOUT, ask_actor
from agentgov.http.auth import Scheme, authorize, principal, services, tenant_id
from agentgov.http.errors import ApiError
from agentgov.http.ids import parse_uuid
from agentgov.http.schemas import (
    DEFAULT_PAGE_SIZE,
    MAX_PAGE_SIZE,
    AnomalyOut,
    RequestModel,
    bounded_name,
    page,
    storable_json,
)
from agentgov.http.validation import json_body, query
from agentgov.integrations.usage import note_use
from agentgov.security.roles import Permission
from agentgov.storage.audit import AuditEntry, AuditRepo
from agentgov.timeutil import now

bp = Blueprint("audit", __name__)

#: Seconds a request waits for the registry or the audit actor before answering 503.
MAX_JSON_BYTES = 64 * 1024
_IDEMPOTENCY_KEY = re.compile(r"^[\x21-\x7e]{1,200}$")


def _storable(value: Any) -> Any:
    """Reject JSON the trail cannot store exactly (NaN, infinities) or that is too large."""
    return None if value is None else storable_json(value, MAX_JSON_BYTES, "the object")


JsonObject = Annotated[dict[str, Any], AfterValidator(_storable)]
Step = Annotated[str, Field(max_length=4000)]
RiskScore = Annotated[float, Field(strict=True, ge=0.0, le=1.0, allow_inf_nan=False, description="0.0 to 1.0")]


#: How far in the future an event time may be (clock skew between the agent and the service).
MAX_FUTURE_SKEW = timedelta(minutes=5)


def _not_far_future(value: datetime) -> datetime:
    if value - now() > MAX_FUTURE_SKEW:
        raise ValueError("must not be more than 5 minutes in the future")
    if value.year < 2000:
        raise ValueError("must be in the year 2000 or later")
    return value


def _iso_text(value: Any) -> Any:
    if not isinstance(value, str):
        raise ValueError("must be an ISO 8601 date and time with a timezone, as a string")
    return value


EventTime = Annotated[
    AwareDatetime,
    BeforeValidator(_iso_text),
    AfterValidator(_not_far_future),
    Field(
        description="when the action happened (ISO 8601 with a time zone); default: when the service received "
        "it; at most 5 minutes in the future. Used by the anomaly detector; lets history be back-filled"
    ),
]


class AuditLogCreate(RequestModel):
    agent_id: uuid.UUID = Field(description="a registered agent of the tenant")
    action: bounded_name(200)  # type: ignore[valid-type]
    resource: bounded_name(2000)  # type: ignore[valid-type]
    input: JsonObject | None = Field(default=None, description="action input data")
    output: JsonObject | None = Field(default=None, description="action output data")
    reasoning: list[Step] | None = Field(default=None, max_length=200, description="reasoning steps")
    risk_score: RiskScore | None = None
    is_approved: StrictBool | None = Field(default=None, description="approval status")
    timestamp: EventTime | None = None


class IdempotencyHeaders(BaseModel):
    idempotency_key: str | None = Field(
        default=None,
        alias="Idempotency-Key",
        description="optional; repeating a request with the same key returns the first entry instead of "
        "storing a second one (header Idempotent-Replayed: true)",
    )


class AuditEntryOut(BaseModel):
    id: str
    sequence: int = Field(description="position in the tenant's chain (1, 2, 3, ...)")
    kind: str = Field(
        description="action (logged actions, webhook), policy_check (policy decisions) or guard (prompt guard blocks)"
    )
    agent_id: str
    action: str
    resource: str
    input: dict[str, Any] | None
    output: dict[str, Any] | None
    reasoning: list[str] | None
    risk_score: float | None
    is_approved: bool | None
    decision: dict[str, Any] | None = Field(description="the policy decision, for kind policy_check")
    actor: str = Field(description="who recorded it: user:<id>, key:<id>, webhook/key:<id>, ...")
    timestamp: str = Field(description="when the action happened: the event time given, else created_at")
    created_at: str = Field(description="when the service received and stored the entry")
    anomaly: AnomalyOut | None = Field(
        description="the anomaly detector's verdict on this action (null before a model is active or while it "
        "is being scored, within about 2 seconds)"
    )
    prev_signature: str = Field(description="signature of the previous entry (64 zeros for the first)")
    signature: str = Field(description="hex HMAC-SHA256 over the entry and prev_signature (tenant key)")


class AuditPageOut(BaseModel):
    items: list[AuditEntryOut]
    total: int
    limit: int
    offset: int


class AuditListQuery(BaseModel):
    agent_id: uuid.UUID | None = None
    action: str | None = Field(default=None, min_length=1, max_length=200)
    skip: int = Field(default=0, ge=0, description="entries to skip (reported as offset)")
    limit: int = Field(default=DEFAULT_PAGE_SIZE, ge=1, le=MAX_PAGE_SIZE)


class FindingOut(BaseModel):
    kind: str = Field(description="modified, deleted, inserted, reordered, head or key")
    detail: str
    sequence: int | None = Field(description="where: the (first) sequence concerned")
    last_sequence: int | None = Field(description="last sequence of a range, e.g. deleted entries")
    entry_id: str | None


class ChainHeadOut(BaseModel):
    sequence: int
    signature: str


class VerifyOut(BaseModel):
    tenant_id: str
    intact: bool = Field(description="true when no finding was made")
    checked: int = Field(description="entries checked")
    head: ChainHeadOut | None = Field(description="the recorded end of the chain; keep a copy elsewhere")
    findings: list[FindingOut]
    truncated: bool = Field(description="more findings exist than are listed")


def parse_entry_id(raw: str) -> str:
    """The canonical form of the `log_id` path parameter. Raises `ApiError` 422 (`parse_uuid`)."""
    return parse_uuid(raw, "log_id")


async def require_agent(agent_id: str) -> None:
    """Raise `ApiError` 404 "Agent not found" unless the agent is registered in the caller's tenant."""
    try:
        with trio.fail_after(ASK_TIMEOUT):
            await lookup_agent(services(), tenant_id(), agent_id)
    except AgentNotFound:
        raise ApiError(404, "Agent not found") from None
    except trio.TooSlowError:
        raise ApiError(503, "The agent registry did not answer in time", headers={"Retry-After": "1"}) from None


async def append_action(data: Any, *, actor: str, dedup_key: str | None) -> AuditEntry:
    """Append an agent action (`AuditLogCreate` or the webhook's payload: same fields) once the agent is known.

    Raises `ApiError` 404 "Agent not found", or as `append`.
    """
    agent_id = str(data.agent_id)
    await require_agent(agent_id)
    return await append(
        AppendEntry(
            agent_id=agent_id,
            action=data.action,
            resource=data.resource,
            input=data.input,
            output=data.output,
            reasoning=data.reasoning,
            risk_score=data.risk_score,
            is_approved=data.is_approved,
            actor=actor,
            dedup_key=dedup_key,
            occurred_at=data.timestamp,
        )
    )


async def append(message: AppendEntry) -> AuditEntry:
    """Append through the tenant's audit actor; the entry is committed when this returns.

    Raises `ApiError` 422 (invalid entry) or 503 (chain unavailable, no answer in time).
    """
    entry: AuditEntry = await ask_actor(
        audit(services(), tenant_id()),
        message,
        what="The audit trail",
        late="; the entry may still be stored",
        errors={
            EntryRejected: lambda exc: ApiError(422, f"Invalid audit entry: {exc}"),
            AuditUnavailable: lambda exc: ApiError(503, str(exc)),
        },
    )
    return entry


def _idempotency_key() -> str | None:
    raw = request.headers.get("Idempotency-Key")
    if raw is None:
        return None
    if not _IDEMPOTENCY_KEY.match(raw):
        raise ApiError(
            422,
            "Invalid header: Idempotency-Key: 1 to 200 visible ASCII characters",
            errors=[{"field": "Idempotency-Key", "message": "1 to 200 visible ASCII characters", "type": "value"}],
        )
    return raw


@bp.post("/audit/log")
@authorize(Scheme.API_KEY, permission=Permission.AUDIT_WRITE)
@tag(["audit"])
@json_body(AuditLogCreate)
@document_headers(IdempotencyHeaders)
@document_response(AuditEntryOut, 201)
async def create_entry(data: AuditLogCreate) -> tuple[dict[str, Any], int, dict[str, str]]:
    """Append an entry to the tenant's tamper-evident audit trail; 201 once it is durably stored."""
    dedup = _idempotency_key()
    entry = await append_action(
        data, actor=principal().actor_label, dedup_key=None if dedup is None else f"api:{dedup}"
    )
    headers = {"Idempotent-Replayed": "true"} if entry.duplicate else {}
    if not entry.duplicate:
        note_use(services(), entry.tenant_id, "actions", entry.agent_id)
    return entry.to_public(), 201, headers


@bp.get("/audit")
@authorize(Scheme.API_KEY, permission=Permission.AUDIT_READ)
@tag(["audit"])
@query(AuditListQuery)
@document_response(AuditPageOut)
async def list_entries(query: AuditListQuery) -> dict[str, Any]:
    """List the tenant's audit entries, newest first; filter by agent_id and action."""
    entries, total = await AuditRepo(services().db).list_entries(
        tenant_id(),
        agent_id=None if query.agent_id is None else str(query.agent_id),
        action=query.action,
        limit=query.limit,
        offset=query.skip,
    )
    return page([e.to_public() for e in entries], total, query.limit, query.skip)


@bp.get("/audit/verify")
@authorize(Scheme.API_KEY, permission=Permission.AUDIT_VERIFY)
@tag(["audit"])
@document_response(VerifyOut)
async def verify_chain() -> dict[str, Any]:
    """Check the tenant's whole chain: reports each modified, deleted, inserted or reordered entry and
    where it is (sequence, entry id). 200 in both cases; `intact` says whether anything was found."""
    svc = services()
    report = await AuditRepo(svc.db).verify(tenant_id(), svc.settings.effective_audit_secret)
    return report.to_public()


@bp.get("/audit/<log_id>")
@authorize(Scheme.API_KEY, permission=Permission.AUDIT_READ)
@tag(["audit"])
@document_response(AuditEntryOut)
async def get_entry(log_id: str) -> dict[str, Any]:
    """One audit entry of the tenant."""
    entry = await AuditRepo(services().db).get(tenant_id(), parse_entry_id(log_id))
    if entry is None:
        raise ApiError(404, "Audit entry not found")
    return entry.to_public()
