"""The signed inbound webhook `POST /webhooks/agent` (outside /api/v1) for external agents.

Checks, in this order (the first failing one answers):

1. ``X-Webhook-Signature``: the hex HMAC-SHA256 of the raw body bytes keyed with WEBHOOK_SECRET, compared
   in constant time. Missing: 401 "Missing X-Webhook-Signature header"; wrong: 401 "Invalid webhook
   signature". It is checked before anything else, credentials included, so an unsigned request learns
   nothing about keys, tenants or agents.
2. ``X-API-Key`` resolves the tenant (401 missing/invalid; 403 without `audit:write`).
3. Content-Type application/json (415), valid JSON (400), a JSON object with a string ``event`` and an
   object ``payload`` (422 naming the field); an event other than agent.action / agent.heartbeat:
   400 "Unknown event type"; payload fields as in the spec (422 naming ``payload.<field>``).
4. The agent must be registered in the tenant: 404 "Agent not found".

``agent.action`` appends an audit entry (defaults: action "webhook_action", resource "webhook",
is_approved true; actor "webhook/<principal>"). Deliveries may repeat: each is identified by its
``X-Webhook-Id`` (or ``X-Delivery-Id``) header when the sender sends one, else by the SHA-256 of the raw
body; that identity is stored with the entry (unique per tenant), so a repeated delivery, even after a
restart or on another process, stores nothing new and answers with the first entry
(``duplicate: true``). Senders who send the same action twice on purpose give each delivery its own id.
``agent.heartbeat`` sets the agent's status (active, inactive or error) and heartbeat time.

Success is 200 with ``{"status": "accepted", "event", "duplicate", "entry_id", "sequence"}`` for
agent.action and ``{"status": "accepted", "event", "duplicate": false, "agent_id", "agent_status"}`` for
agent.heartbeat. A 200 for agent.action means the entry is durably stored.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import re
import uuid
from collections.abc import Callable
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, Field, StrictBool, ValidationError
from quart import Blueprint, request
from quart_schema import document_headers, document_request, document_response, tag

from agentgov.actors.registry import AgentNotFound, Heartbeat, registry
from agentgov.actors.runtime import InvalidMessage
from agentgov.http.actor_calls import ask_actor
from agentgov.http.auth import Scheme, authorize, principal, services, tenant_id
from agentgov.http.errors import ApiError, validation_error
from agentgov.http.routes.agents import REGISTRY
from agentgov.http.routes.audit import EventTime, JsonObject, RiskScore, Step, append_action
from agentgov.http.schemas import RequestModel, bounded_name
from agentgov.http.validation import read_json
from agentgov.security.roles import Permission

bp = Blueprint("webhooks", __name__)

F = TypeVar("F", bound=Callable[..., Any])
SIGNATURE_HEADER = "X-Webhook-Signature"
DELIVERY_HEADERS = ("X-Webhook-Id", "X-Delivery-Id")
_DELIVERY_ID = re.compile(r"^[\x21-\x7e]{1,200}$")


class WebhookHeaders(BaseModel):
    signature: str = Field(
        alias="X-Webhook-Signature", description="hex HMAC-SHA256 of the raw body, keyed with WEBHOOK_SECRET"
    )
    webhook_id: str | None = Field(
        default=None, alias="X-Webhook-Id", description="optional delivery id; repeats of one id are stored once"
    )
    delivery_id: str | None = Field(default=None, alias="X-Delivery-Id", description="same as X-Webhook-Id")


class WebhookEnvelope(RequestModel):
    event: Literal["agent.action", "agent.heartbeat"]
    payload: dict[str, Any]


class ActionPayload(RequestModel):
    agent_id: uuid.UUID = Field(description="a registered agent of the tenant")
    action: bounded_name(200) = "webhook_action"  # type: ignore[valid-type]
    resource: bounded_name(2000) = "webhook"  # type: ignore[valid-type]
    input: JsonObject | None = None
    output: JsonObject | None = None
    reasoning: list[Step] | None = Field(default=None, max_length=200)
    risk_score: RiskScore | None = None
    is_approved: StrictBool = True
    timestamp: EventTime | None = None


class HeartbeatPayload(RequestModel):
    agent_id: uuid.UUID = Field(description="a registered agent of the tenant")
    status: Literal["active", "inactive", "error"] | None = None


class WebhookAccepted(BaseModel):
    status: Literal["accepted"] = "accepted"
    event: str
    duplicate: bool = Field(description="agent.action: this delivery was already stored (entry_id is the first)")
    entry_id: str | None = Field(default=None, description="agent.action: the audit entry")
    sequence: int | None = Field(default=None, description="agent.action: its position in the audit chain")
    agent_id: str | None = Field(default=None, description="agent.heartbeat: the agent")
    agent_status: str | None = Field(default=None, description="agent.heartbeat: its status now")


async def raw_body() -> bytes:
    """The request body exactly as received (cached by Quart; over 1 MiB is a 413)."""
    data = await request.get_data(as_text=False)
    return data if isinstance(data, bytes) else data.encode()


def signature_required(func: F) -> F:
    """Verify X-Webhook-Signature over the raw body before the wrapped view (and its credential check)."""

    @functools.wraps(func)
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        provided = request.headers.get(SIGNATURE_HEADER)
        if provided is None:
            raise ApiError(401, "Missing X-Webhook-Signature header")
        body = await raw_body()
        secret = services().settings.webhook_secret.encode()
        expected = hmac.new(secret, body, hashlib.sha256).hexdigest().encode()
        if not hmac.compare_digest(expected, provided.strip().lower().encode("utf-8", "replace")):
            raise ApiError(401, "Invalid webhook signature")
        return await func(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


def _parse(model: type[Any], data: Any, prefix: str) -> Any:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        error = validation_error(exc, "request body")
        for item in error.extra["errors"]:
            item["field"] = f"{prefix}{item['field']}"
        summary = "; ".join(f"{e['field']}: {e['message']}" for e in error.extra["errors"])
        raise ApiError(422, f"Invalid request body: {summary}", errors=error.extra["errors"]) from None


def _delivery_key(body: bytes) -> str:
    for name in DELIVERY_HEADERS:
        value = request.headers.get(name)
        if value is not None:
            if not _DELIVERY_ID.match(value):
                raise ApiError(
                    422,
                    f"Invalid header: {name}: 1 to 200 visible ASCII characters",
                    errors=[{"field": name, "message": "1 to 200 visible ASCII characters", "type": "value"}],
                )
            return f"webhook:id:{value}"
    return f"webhook:sha256:{hashlib.sha256(body).hexdigest()}"


@bp.post("/webhooks/agent")
@signature_required  # before @authorize: the signature is checked first (see the module docstring)
@authorize(Scheme.API_KEY, permission=Permission.AUDIT_WRITE)
@tag(["webhooks"])
@document_request(WebhookEnvelope)
@document_headers(WebhookHeaders)
@document_response(WebhookAccepted, 200)
async def agent_webhook() -> dict[str, Any]:
    """Inbound agent events (signed): agent.action logs an audit entry, agent.heartbeat sets the status."""
    body = await read_json()
    if not isinstance(body, dict):
        raise ApiError(422, "Invalid request body: expected a JSON object with event and payload", errors=[])
    for key in body:
        if key not in WebhookEnvelope.model_fields:
            raise ApiError(
                422,
                f"Invalid request body: {key}: Extra inputs are not permitted",
                errors=[{"field": key, "message": "Extra inputs are not permitted", "type": "extra_forbidden"}],
            )
    event = body.get("event")
    if not isinstance(event, str):
        raise ApiError(
            422,
            "Invalid request body: event: a string is required (agent.action or agent.heartbeat)",
            errors=[{"field": "event", "message": "a string is required", "type": "missing"}],
        )
    if event not in ("agent.action", "agent.heartbeat"):
        raise ApiError(400, "Unknown event type")
    payload = body.get("payload")
    if not isinstance(payload, dict):
        raise ApiError(
            422,
            "Invalid request body: payload: a JSON object is required",
            errors=[{"field": "payload", "message": "a JSON object is required", "type": "dict_type"}],
        )
    if event == "agent.action":
        return await _action(_parse(ActionPayload, payload, "payload."), await raw_body())
    return await _heartbeat(_parse(HeartbeatPayload, payload, "payload."))


async def _action(data: ActionPayload, raw: bytes) -> dict[str, Any]:
    entry = await append_action(data, actor=f"webhook/{principal().actor_label}", dedup_key=_delivery_key(raw))
    return WebhookAccepted(
        event="agent.action", duplicate=entry.duplicate, entry_id=entry.id, sequence=entry.sequence
    ).model_dump(exclude_none=True)


async def _heartbeat(data: HeartbeatPayload) -> dict[str, Any]:
    agent = await ask_actor(
        registry(services(), tenant_id()),
        Heartbeat(str(data.agent_id), status=data.status),
        what=REGISTRY,
        errors={
            AgentNotFound: lambda _: ApiError(404, "Agent not found"),
            InvalidMessage: lambda exc: ApiError(422, f"Invalid request body: payload.status: {exc}"),
        },
    )
    return WebhookAccepted(
        event="agent.heartbeat", duplicate=False, agent_id=agent.id, agent_status=agent.status
    ).model_dump(exclude_none=True)
