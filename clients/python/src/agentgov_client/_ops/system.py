"""Health, readiness, status, dashboard figures and SIEM forwarding."""

from __future__ import annotations

from typing import Any

from agentgov_client._core import ClientCore
from agentgov_client._flow import Call, Flow
from agentgov_client._ops._common import model, raw_object, seg
from agentgov_client.models import Readiness


def platform_info(core: ClientCore) -> Flow[dict[str, Any]]:
    """``GET /``: the service's name, version and links. No credentials needed. Retried."""
    return core.execute(Call("GET", "/", raw_object, root=True))


def health(core: ClientCore) -> Flow[dict[str, Any]]:
    """``GET /health``: liveness (``{"status": "ok"}``). No credentials needed. Retried."""
    return core.execute(Call("GET", "/health", raw_object))


def ready(core: ClientCore) -> Flow[Readiness]:
    """``GET /health/ready``: whether the database, cache and policy engine work. A 503 is returned as a
    `Readiness` whose `ready` is False (naming what is down), not raised and not retried."""
    return core.execute(Call("GET", "/health/ready", model(Readiness), accept=frozenset({503})))


def status(core: ClientCore) -> Flow[dict[str, Any]]:
    """``GET /status`` (Developer+): platform health, version, uptime and actor figures. Retried."""
    return core.execute(Call("GET", "/status", raw_object))


def stats(core: ClientCore) -> Flow[dict[str, Any]]:
    """``GET /stats`` (Developer+): the tenant's dashboard figures (agents, decisions of the last 24 hours,
    audit entries, anomalies, pending approvals, discovery, guard counters). Retried."""
    return core.execute(Call("GET", "/stats", raw_object))


def siem_status(core: ClientCore) -> Flow[dict[str, Any]]:
    """``GET /siem/status`` (admin key or Super Admin token): SIEM forwarding configuration and counters.
    Retried."""
    return core.execute(Call("GET", "/siem/status", raw_object, auth="admin"))


def siem_test(core: ClientCore) -> Flow[dict[str, Any]]:
    """``POST /siem/test`` (admin key or Super Admin token): send a test event now. Raises `ConflictError`
    when forwarding is not configured, `APIStatusError` 502 when the SIEM refused it. Not retried."""
    return core.execute(Call("POST", "/siem/test", raw_object, auth="admin"))


def integration_status(core: ClientCore, integration: str) -> Flow[dict[str, Any]]:
    """``GET /integrations/{integration}/status``: public facts of a framework integration (``langchain``,
    ``openai-agents``) and, with an API key, the tenant's use of it (counted from ``X-Agentgov-Integration``).
    Raises `NotFoundError` for an unknown integration. Retried."""
    return core.execute(Call("GET", f"/integrations/{seg(integration)}/status", raw_object))
