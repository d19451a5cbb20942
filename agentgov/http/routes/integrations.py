"""`GET /integrations/{integration}/status`: what is public about a framework integration, and with an
`X-API-Key` the caller's tenant's use of it. See docs/integrations.md."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field
from quart import Blueprint, request
from quart_schema import document_response, tag

from agentgov.http.auth import RouteRule, Scheme, admit, public, services
from agentgov.http.errors import ApiError
from agentgov.integrations.catalogue import HEADER, INTEGRATIONS
from agentgov.security.roles import Permission
from agentgov.storage.integrations import IntegrationRepo

bp = Blueprint("integrations", __name__)

_USAGE_RULE = RouteRule((Scheme.API_KEY,), Permission.STATS_READ, tenant_scoped=True)


class IntegrationUsageOut(BaseModel):
    tenant_id: str
    agents: int = Field(description="the tenant's agents ever checked or logged through the integration")
    agents_last_24h: int = Field(description="of those, the ones seen in the last 24 hours")
    checks_last_24h: int = Field(description="policy checks made through it, current UTC hour and the 23 before")
    actions_last_24h: int = Field(description="actions logged through it, same window")
    last_seen_at: str | None


class IntegrationStatusOut(BaseModel):
    integration: str
    title: str
    enabled: bool = Field(description="the service accepts and counts the integration's calls")
    framework: str = Field(description="the framework's package")
    supported_versions: str = Field(description="framework versions the integration is tested with (PEP 440)")
    install: str
    module: str
    header: str = Field(description="the request header the integration identifies itself with")
    usage: IntegrationUsageOut | None = Field(description="with an X-API-Key: the key's tenant's use of it")


@bp.get("/integrations/<integration>/status")
@public
@tag(["integrations"])
@document_response(IntegrationStatusOut)
async def integration_status(integration: str) -> dict[str, Any]:
    """One framework integration (`langchain`, `openai-agents`): public facts; with an `X-API-Key` (Developer
    or above) also the tenant's usage. An invalid key is a 401, never ignored."""
    known = INTEGRATIONS.get(integration)
    if known is None:
        names = ", ".join(sorted(INTEGRATIONS))
        raise ApiError(404, f"Unknown integration {integration!r}; the integrations are: {names}")
    usage = None
    if request.headers.get(Scheme.API_KEY.value) is not None:
        svc = services()
        who = await admit(_USAGE_RULE, request.headers.get, svc)
        assert who.tenant_id is not None
        figures = await IntegrationRepo(svc.db).usage(who.tenant_id, known.name)
        usage = IntegrationUsageOut(tenant_id=who.tenant_id, **figures.__dict__)
    return IntegrationStatusOut(
        integration=known.name,
        title=known.title,
        enabled=True,
        framework=known.framework,
        supported_versions=known.supported_versions,
        install=known.install,
        module=known.module,
        header=HEADER,
        usage=usage,
    ).model_dump()
