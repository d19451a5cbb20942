"""Platform info, liveness, readiness and status."""

from __future__ import annotations

from typing import Any

import trio
from pydantic import BaseModel, Field
from quart import Blueprint, Response, current_app, jsonify
from quart_schema import document_response, tag

from agentgov import __version__
from agentgov.actors.audit import rejected_entries
from agentgov.http.auth import Scheme, authorize, principal, public, services
from agentgov.policy import canary_ok
from agentgov.security.roles import Permission

root = Blueprint("root", __name__)
api = Blueprint("system", __name__)

CHECK_TIMEOUT = 2.0
STATUS_CACHE_SECONDS = 2.0


class ComponentStatus(BaseModel):
    status: str
    detail: str | None = None


class Readiness(BaseModel):
    status: str
    components: dict[str, ComponentStatus]
    detail: str | None = None


class StatusOut(BaseModel):
    status: str
    version: str
    environment: str
    started_at: float
    uptime_seconds: float
    tenant_id: str | None
    instance: str = Field(description="the process that answered (host:pid:random), as in `system.status`")
    components: dict[str, ComponentStatus]
    actors: dict[str, Any]


@root.get("/")
@public
@tag(["system"])
async def platform_info() -> dict[str, Any]:
    """Platform info and links."""
    return {
        "name": "agentgov",
        "description": "Self-hosted control plane that governs AI agents",
        "version": __version__,
        "api": "/api/v1",
        "links": {
            "docs": "/docs",
            "openapi": "/openapi.json",
            "health": "/api/v1/health",
            "ready": "/api/v1/health/ready",
            "status": "/api/v1/status",
            "webhook": "/webhooks/agent",
        },
    }


@api.get("/")
@public
@tag(["system"])
async def api_platform_info() -> dict[str, Any]:
    """Platform info and links (the same as `/`)."""
    return await platform_info()


@api.get("/health")
@public
@tag(["system"])
async def health() -> dict[str, str]:
    """Liveness: the process is up and serving."""
    return {"status": "ok"}


async def _check(name: str, probe: Any) -> tuple[str, ComponentStatus]:
    try:
        with trio.fail_after(CHECK_TIMEOUT):
            await probe()
    except trio.TooSlowError:
        return name, ComponentStatus(status="down", detail=f"no answer within {CHECK_TIMEOUT:g}s")
    except Exception as exc:
        return name, ComponentStatus(status="down", detail=f"{type(exc).__name__}: {exc}"[:300])
    return name, ComponentStatus(status="ok")


async def _policy_engine() -> None:
    if not await trio.to_thread.run_sync(canary_ok):
        raise RuntimeError("canary policy gave the wrong decision")


async def component_statuses() -> dict[str, ComponentStatus]:
    """Probe the database, the cache and the policy engine concurrently, each within `CHECK_TIMEOUT`."""
    svc = services()
    probes = {"database": svc.db.ping, "cache": svc.cache.ping, "policy_engine": _policy_engine}
    results: dict[str, ComponentStatus] = {}

    async def run(name: str, probe: Any) -> None:
        key, status = await _check(name, probe)
        results[key] = status

    async with trio.open_nursery() as nursery:
        for name, probe in probes.items():
            nursery.start_soon(run, name, probe)
    return {name: results[name] for name in probes}


class _StatusCache:
    """`/status` answers from probe results at most `STATUS_CACHE_SECONDS` old (one probe at a time), so a
    dashboard polling it cannot turn into a load on the database. `/health/ready` always probes afresh."""

    def __init__(self) -> None:
        self.lock = trio.Lock()
        self.at = -float("inf")
        self.value: dict[str, ComponentStatus] = {}

    async def get(self) -> dict[str, ComponentStatus]:
        async with self.lock:
            if trio.current_time() - self.at > STATUS_CACHE_SECONDS:
                self.value = await component_statuses()
                self.at = trio.current_time()
            return self.value


def _status_cache() -> _StatusCache:
    """The app's status cache (one per app, created on first use)."""
    cache = current_app.extensions.get("agentgov.status_cache")
    if not isinstance(cache, _StatusCache):
        cache = current_app.extensions["agentgov.status_cache"] = _StatusCache()
    return cache


@api.get("/health/ready")
@public
@tag(["system"])
@document_response(Readiness, 200)
@document_response(Readiness, 503)
async def ready() -> Response:
    """Readiness: 200 when the database, cache and policy engine all answer; 503 naming what is down."""
    components = await component_statuses()
    down = [name for name, c in components.items() if c.status != "ok"]
    if services().shutting_down.is_set():
        down.append("service (shutting down)")
    body = Readiness(
        status="ready" if not down else "unavailable",
        components=components,
        detail=None if not down else "not ready: " + ", ".join(down) + " down",
    )
    response = jsonify(body.model_dump(exclude_none=True))
    response.status_code = 200 if not down else 503
    return response


@api.get("/status")
@authorize(Scheme.API_KEY, permission=Permission.STATUS_READ)
@tag(["system"])
@document_response(StatusOut)
async def status() -> dict[str, Any]:
    """Platform health and uptime."""
    svc = services()
    components = await _status_cache().get()
    actors = svc.actors.stats()
    return StatusOut(
        status="ok" if all(c.status == "ok" for c in components.values()) else "degraded",
        version=__version__,
        environment=svc.settings.env,
        started_at=svc.started_at,
        uptime_seconds=round(svc.uptime_seconds, 3),
        tenant_id=principal().tenant_id,
        instance=svc.instance_id,
        components=components,
        actors={
            "count": len(actors),
            "queued": sum(a["queued"] for a in actors),
            "audit_rejected": rejected_entries.total,
        },
    ).model_dump(exclude_none=True)
