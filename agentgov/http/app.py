"""The Quart-Trio application factory."""

from __future__ import annotations

import time
from typing import Any

from pydantic import BaseModel
from quart import Response, g, request
from quart_schema import APIKeySecurityScheme, HttpSecurityScheme, Info, QuartSchema
from quart_trio import QuartTrio

from agentgov import __version__
from agentgov.actors.relay import event_relay
from agentgov.duties import duties
from agentgov.http import docs
from agentgov.http.auth import check_all_routes_declared
from agentgov.http.errors import install_error_handlers
from agentgov.http.header_limit import limit_headers
from agentgov.http.hot_path import HotPath, HotRoute
from agentgov.http.openapi import CompleteOpenAPIProvider
from agentgov.http.request_log import log_request, start_request
from agentgov.http.routes import (
    agents,
    anomalies,
    api_keys,
    audit,
    auth,
    discovery,
    exports,
    guard,
    hitl,
    integrations,
    policies,
    siem,
    sso,
    stats,
    system,
    tenants,
    users,
    webhooks,
    ws,
)
from agentgov.http.ws_frames import expose_send
from agentgov.integrations.catalogue import HEADER as INTEGRATION_HEADER
from agentgov.integrations.catalogue import integration_var, named_by
from agentgov.services import Services
from agentgov.siem.forwarder import siem_forwarder

API_PREFIX = "/api/v1"
MAX_BODY_BYTES = 1024 * 1024


def create_app(services: Services, *, hot_path: bool = True) -> QuartTrio:
    """Build the app around already-started `services` (the caller owns their lifetime).

    With SIEM forwarding configured, this process's forwarder starts here (`agentgov.siem.forwarder`).
    `hot_path` serves the policy check straight from ASGI (`agentgov.http.hot_path`); without it every
    route goes through Quart (same answers, more CPU per check).
    """
    app = QuartTrio("agentgov")
    app.url_map.merge_slashes = False  # "//x" is no route (404 JSON), not a redirect with an HTML body
    app.config.update(
        MAX_CONTENT_LENGTH=MAX_BODY_BYTES,
        JSON_SORT_KEYS=False,
    )
    app.extensions["agentgov"] = services
    QuartSchema(
        app,
        info=Info(title="agentgov", version=__version__, description="Control plane that governs AI agents"),
        swagger_ui_path=None,  # served by agentgov.http.docs (Swagger UI 5, offline)
        redoc_ui_path=None,
        scalar_ui_path=None,
        openapi_path=docs.OPENAPI_URL,
        openapi_provider_class=CompleteOpenAPIProvider,
        security_schemes={
            "ApiKey": APIKeySecurityScheme(in_="header", name="X-API-Key"),
            "BearerJWT": HttpSecurityScheme(scheme="bearer", bearer_format="JWT"),
            "AdminKey": APIKeySecurityScheme(in_="header", name="X-Admin-Key"),
        },
    )
    app.json.sort_keys = False  # type: ignore[attr-defined]
    _use_plain_response_conversion(app)
    install_error_handlers(app)
    _install_request_context(app)

    app.register_blueprint(system.root)
    docs.install(app)
    app.register_blueprint(webhooks.bp)
    app.register_blueprint(ws.root)
    for blueprint in (
        system.api,
        tenants.bp,
        auth.bp,
        users.bp,
        api_keys.bp,
        policies.bp,
        agents.bp,
        discovery.bp,
        sso.bp,
        audit.bp,
        exports.bp,
        hitl.bp,
        anomalies.bp,
        guard.bp,
        stats.bp,
        siem.bp,
        integrations.bp,
        ws.api,
    ):
        app.register_blueprint(blueprint, url_prefix=API_PREFIX)

    check_all_routes_declared(app)
    duties(services)  # platform-wide duties under leases (approval expiry)
    if services.settings.redis_url:
        event_relay(services)  # events of other processes reach this one's WebSocket subscribers
    if services.settings.siem.enabled:
        siem_forwarder(services)  # delivers what is pending (also after a restart) and what comes
    app.asgi_app = expose_send(app.asgi_app)  # type: ignore[method-assign]
    if hot_path:
        app.asgi_app = HotPath(  # type: ignore[method-assign]
            app,
            [
                HotRoute("POST", f"{API_PREFIX}/policies/check", "policies.check", policies.run_check),
                HotRoute("POST", f"{API_PREFIX}/guard/validate", "guard.validate_prompt", guard.run_validate),
            ],
        )
    app.asgi_app = limit_headers(app.asgi_app)  # type: ignore[method-assign]
    return app


def _install_request_context(app: QuartTrio) -> None:
    @app.before_request
    async def _start() -> None:
        g.request_id = start_request(request.headers.get("X-Request-ID"))
        integration_var.set(named_by(request.headers.get(INTEGRATION_HEADER)))
        g.started = time.perf_counter()

    @app.after_request
    async def _finish(response: Response) -> Response:
        request_id = getattr(g, "request_id", None) or start_request(None)
        response.headers["X-Request-ID"] = request_id
        started = g.get("started", time.perf_counter())
        log_request(request_id, request.method, request.path, response.status_code, started)
        return response


def _use_plain_response_conversion(app: QuartTrio) -> None:
    """Replace quart-schema's response hook, which builds a pydantic TypeAdapter for every dict it sees
    (a large per-request cost), with one that only dumps pydantic models; dicts and lists go straight
    to Quart's JSON encoder."""
    original = QuartTrio.make_response.__get__(app)

    async def make_response(result: Any) -> Response:
        if isinstance(result, tuple) and result and isinstance(result[0], BaseModel):
            result = (result[0].model_dump(mode="json"), *result[1:])
        elif isinstance(result, BaseModel):
            result = result.model_dump(mode="json")
        return await original(result)

    app.make_response = make_response  # type: ignore[method-assign]
