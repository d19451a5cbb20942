"""Dashboard figures: `GET /stats` (`stats:read`, Developer+). See docs/stats.md."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field
from quart import Blueprint
from quart_schema import document_response, tag

from agentgov.http.auth import Scheme, authorize, services, tenant_id
from agentgov.security.roles import Permission
from agentgov.storage.dashboard import DashboardRepo
from agentgov.timeutil import now_iso

bp = Blueprint("stats", __name__)


class AgentFigures(BaseModel):
    total: int
    by_status: dict[str, int] = Field(description="registered agents per status (active, inactive, ...)")
    by_type: dict[str, int] = Field(description="registered agents per type")


class DecisionFigures(BaseModel):
    allowed: int
    denied: int
    approval_required: int = Field(description="decisions that asked for a human approval")
    total: int


class AuditFigures(BaseModel):
    total: int = Field(description="entries in the tenant's audit chain")
    last_24h: int = Field(description="entries received in the current hour and the 23 before it")


class AnomalyFigures(BaseModel):
    last_24h: int = Field(description="anomaly reports created in the last 24 hours")
    total: int


class ApprovalFigures(BaseModel):
    pending: int = Field(description="approval requests waiting for a decision")


class DiscoveryFigures(BaseModel):
    candidates: int = Field(description="discovered shadow-agent candidates in all")
    by_status: dict[str, int]


class GuardFigures(BaseModel):
    validations: int = Field(description="prompt guard validations in the last 24 hours, every process")
    blocks: int
    blocks_by_category: dict[str, int] = Field(description="blocks per category: injection, jailbreak, leakage")


class StatsOut(BaseModel):
    generated_at: str
    agents: AgentFigures
    decisions_24h: DecisionFigures = Field(description="policy decisions received in the current hour and 23 before")
    audit: AuditFigures
    anomalies: AnomalyFigures
    approvals: ApprovalFigures
    discovery: DiscoveryFigures
    guard: GuardFigures = Field(description="the prompt guard's last 24 hours (each process adds its counts every 2 s)")


@bp.get("/stats")
@authorize(Scheme.API_KEY, permission=Permission.STATS_READ)
@tag(["stats"])
@document_response(StatsOut)
async def stats() -> dict[str, Any]:
    """The tenant's dashboard figures (Developer+): agents by status and type, policy decisions of the last 24
    hours by outcome, audit entries (in all and in the last 24 hours), anomaly reports, pending approvals,
    discovery candidates, and the prompt guard's counters. Read from counters and indexes, never by scanning
    the audit trail."""
    figures = await DashboardRepo(services().db).figures(tenant_id())
    return {"generated_at": now_iso(), **figures}
