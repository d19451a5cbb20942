"""SIEM forwarding status and test (platform-wide): `GET /siem/status`, `POST /siem/test`, each taking a Super
Admin's JWT or the `X-Admin-Key`. See docs/siem.md."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field
from quart import Blueprint
from quart_schema import document_response, tag

from agentgov.http.actor_calls import ask_actor
from agentgov.http.auth import Scheme, authorize, services
from agentgov.http.errors import ApiError
from agentgov.security.roles import Permission
from agentgov.siem.forwarder import LEASE, SendTest, siem_forwarder
from agentgov.siem.outbox import Flush, outbox_writer
from agentgov.storage.leases import LeaseRepo
from agentgov.storage.siem import SiemRepo
from agentgov.timeutil import now_iso

bp = Blueprint("siem", __name__)

_AUTH = (Scheme.BEARER, Scheme.ADMIN_KEY)


class SiemStatusOut(BaseModel):
    enabled: bool = Field(description="false while SIEM_TRANSPORT is unset")
    transport: str | None = Field(description="syslog-udp, syslog-tcp, syslog-tls or splunk-hec")
    format: str | None = Field(description="cef, leef or json")
    destination: str | None = Field(description="host:port, or the collector URL without credentials")
    batch_size: int
    flush_interval_seconds: float
    outbox_max: int = Field(description="recorded events kept at most; the oldest beyond it are dropped")
    outbox_depth: int = Field(description="events waiting: recorded events plus audit entries not yet sent")
    queued_events: int = Field(description="recorded events in the outbox (approvals, anomalies, sign-ins, ...)")
    audit_backlog: int = Field(description="audit entries of every tenant not yet accepted by the SIEM")
    sent: int = Field(description="events the destination accepted (every process, since installation)")
    failed: int = Field(description="events of batches the destination did not take (each attempt counted)")
    dropped: int = Field(description="events lost to the outbox bound or to an unavailable database")
    last_success_at: str | None
    last_error: str | None
    last_error_at: str | None
    forwarding_since: str | None = Field(description="when forwarding first started; the trail is sent from then")
    delivering_instance: str | None = Field(description="the process holding the delivery lease, if any")


class SiemTestOut(BaseModel):
    accepted: bool
    event_id: str
    destination: str
    flushed: int = Field(description="pending events delivered before the test event")
    latency_ms: float


@bp.get("/siem/status")
@authorize(*_AUTH, permission=Permission.SIEM_MANAGE, tenant_scoped=False)
@tag(["siem"])
@document_response(SiemStatusOut)
async def siem_status() -> dict[str, Any]:
    """SIEM forwarding: configuration (no secrets), outbox depth, delivery counters, last success and error."""
    svc = services()
    siem = svc.settings.siem
    state = await SiemRepo(svc.db).state()
    holder = await LeaseRepo(svc.db).holder(LEASE)
    delivering = holder[0] if holder is not None and holder[2] > now_iso() else None
    return SiemStatusOut(
        enabled=siem.enabled,
        transport=siem.transport or None,
        format=siem.format if siem.enabled else None,
        destination=siem.destination or None,
        batch_size=siem.batch_size,
        flush_interval_seconds=siem.flush_interval,
        outbox_max=siem.outbox_max,
        outbox_depth=state.outbox_depth + state.audit_backlog,
        queued_events=state.outbox_depth,
        audit_backlog=state.audit_backlog,
        sent=state.sent,
        failed=state.failed,
        dropped=state.dropped + svc.siem.unrecorded,
        last_success_at=state.last_success_at,
        last_error=state.last_error,
        last_error_at=state.last_error_at,
        forwarding_since=state.started_at,
        delivering_instance=delivering,
    ).model_dump()


@bp.post("/siem/test")
@authorize(*_AUTH, permission=Permission.SIEM_MANAGE, tenant_scoped=False)
@tag(["siem"])
@document_response(SiemTestOut)
async def siem_test() -> dict[str, Any]:
    """Store this process's recorded events, deliver a batch of pending events now, then a test event;
    502 with the transport's error if the destination did not take them."""
    svc = services()
    siem = svc.settings.siem
    if not siem.enabled:
        raise ApiError(409, "SIEM forwarding is not configured: set SIEM_TRANSPORT (see docs/siem.md)")
    await ask_actor(outbox_writer(svc), Flush(), what="The SIEM outbox")  # this process's events are stored
    result = await ask_actor(
        siem_forwarder(svc), SendTest(), what="The SIEM forwarder", late=" (a delivery to a slow SIEM is under way)"
    )
    if not result.accepted:
        raise ApiError(502, f"The SIEM did not accept the test event: {result.error}")
    return SiemTestOut(
        accepted=True,
        event_id=result.event_id,
        destination=siem.destination,
        flushed=result.flushed,
        latency_ms=result.latency_ms,
    ).model_dump()
