"""Agents: registration, heartbeats, listing, semantic search, details, update and deletion.

Thin handlers: they validate, then ask the tenant's registry actor (`agentgov.actors.registry`).
Reads need `agents:read`, writes `agents:write` (Developer and above). An unknown agent id, or one of
another tenant, is a 404; a malformed id a 422.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, Field, model_validator
from quart import Blueprint, request
from quart_schema import document_request, document_response, tag

from agentgov.actors.registry import (
    AgentDetails,
    AgentNotFound,
    AgentPage,
    DeleteAgent,
    GetAgent,
    GetAgentDetails,
    Heartbeat,
    ListAgents,
    RegisterAgent,
    SearchAgents,
    SearchHit,
    UpdateAgent,
    registry,
)
from agentgov.actors.runtime import InvalidMessage
from agentgov.http.actor_calls import ask_actor
from agentgov.http.auth import Scheme, authorize, services, tenant_id
from agentgov.http.errors import ApiError
from agentgov.http.ids import parse_uuid
from agentgov.http.schemas import DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, RequestModel, bounded_name, page, storable_json
from agentgov.http.validation import json_body, parse_model, query, read_json
from agentgov.security.roles import Permission
from agentgov.storage.agents import Agent

bp = Blueprint("agents", __name__)

#: Seconds a request waits for the registry before answering 503 (a first search may embed many agents).
REGISTRY = "The agent registry"
REGISTRY_ERRORS = {
    AgentNotFound: lambda _: ApiError(404, "Agent not found"),
    InvalidMessage: lambda exc: ApiError(422, f"Invalid request: {exc}"),
}
MAX_METADATA_BYTES = 16 * 1024

AgentType = Literal["llm", "tool", "workflow", "custom"]
AgentStatus = Literal["active", "inactive", "error"]
Capability = Annotated[str, Field(min_length=1, max_length=200)]


def _metadata_size(value: dict[str, Any] | None) -> dict[str, Any] | None:
    return None if value is None else storable_json(value, MAX_METADATA_BYTES, "metadata")


Metadata = Annotated[dict[str, Any], AfterValidator(_metadata_size)]


class AgentRegister(RequestModel):
    name: bounded_name(200)  # type: ignore[valid-type]
    type: AgentType
    description: str = Field(default="", max_length=4000)
    capabilities: list[Capability] = Field(default_factory=list, max_length=100)
    owner: str | None = Field(default=None, max_length=200)
    metadata: Metadata = Field(default_factory=dict)


class AgentUpdate(RequestModel):
    """Fields to change; the others keep their values. `owner` and `description` may be null to clear."""

    name: bounded_name(200) | None = None  # type: ignore[valid-type]
    type: AgentType | None = None
    description: str | None = Field(default=None, max_length=4000)
    capabilities: list[Capability] | None = Field(default=None, max_length=100)
    owner: str | None = Field(default=None, max_length=200)
    metadata: Metadata | None = None
    status: AgentStatus | None = None

    @model_validator(mode="after")
    def _some_field(self) -> AgentUpdate:
        if not self.model_fields_set:
            raise ValueError("give at least one field to change")
        for key in ("name", "type", "capabilities", "metadata", "status"):
            if key in self.model_fields_set and getattr(self, key) is None:
                raise ValueError(f"{key} may not be null")
        return self


class HeartbeatIn(RequestModel):
    status: AgentStatus | None = None


class ListQuery(BaseModel):
    type: AgentType | None = None
    status: AgentStatus | None = None
    limit: int = Field(default=DEFAULT_PAGE_SIZE, ge=1, le=MAX_PAGE_SIZE)
    offset: int = Field(default=0, ge=0)


class SearchQuery(BaseModel):
    q: str = Field(min_length=1, max_length=1000, description="what the agent does, in plain words")
    limit: int = Field(default=10, ge=1, le=MAX_PAGE_SIZE)

    @model_validator(mode="after")
    def _not_blank(self) -> SearchQuery:
        if not self.q.strip():
            raise ValueError("q must not be blank")
        return self


class AgentOut(BaseModel):
    id: str
    name: str
    type: str
    description: str
    capabilities: list[str]
    owner: str | None
    metadata: dict[str, Any]
    status: str
    predicted_type: str | None
    predicted_type_confidence: float | None
    risk_score: float | None
    last_heartbeat_at: str | None
    created_at: str
    updated_at: str


class AgentPageOut(BaseModel):
    items: list[AgentOut]
    total: int
    limit: int
    offset: int


class SearchHitOut(AgentOut):
    score: float = Field(description="cosine similarity to the query, -1..1 (higher is closer)")


class SearchOut(BaseModel):
    items: list[SearchHitOut]
    total: int
    limit: int
    offset: int


class EmbeddingOut(BaseModel):
    model: str | None
    dimension: int | None
    updated: str | None
    stale: bool
    content_hash: str | None


class ActivityOut(BaseModel):
    available: bool = Field(description="false while the audit trail is not set up")
    total: int
    last_24h: int
    last_7d: int
    last_activity_at: str | None


class AgentDetailsOut(AgentOut):
    activity: ActivityOut
    embedding: EmbeddingOut


async def ask_registry(message: Any) -> Any:
    """Ask the caller's tenant registry (`ask_actor`): `AgentNotFound` is a 404, an invalid message a 422."""
    return await ask_actor(registry(services(), tenant_id()), message, what=REGISTRY, errors=REGISTRY_ERRORS)


@bp.post("/agents/register")
@authorize(Scheme.API_KEY, permission=Permission.AGENTS_WRITE)
@tag(["agents"])
@json_body(AgentRegister)
@document_response(AgentOut, 201)
async def register_agent(data: AgentRegister) -> tuple[dict[str, Any], int]:
    """Register an agent; it starts `active`. Its predicted type is filled in from its description."""
    agent: Agent = await ask_registry(
        RegisterAgent(
            name=data.name,
            type=data.type,
            description=data.description,
            capabilities=tuple(data.capabilities),
            owner=data.owner,
            metadata=data.metadata,
        )
    )
    return agent.to_public(), 201


@bp.get("/agents")
@authorize(Scheme.API_KEY, permission=Permission.AGENTS_READ)
@tag(["agents"])
@query(ListQuery)
@document_response(AgentPageOut, 200)
async def list_agents(query: ListQuery) -> dict[str, Any]:
    """List the tenant's agents, oldest first; filter by `type` and `status`."""
    result: AgentPage = await ask_registry(
        ListAgents(agent_type=query.type, status=query.status, limit=query.limit, offset=query.offset)
    )
    return page([a.to_public() for a in result.items], result.total, query.limit, query.offset)


@bp.get("/agents/search")
@authorize(Scheme.API_KEY, permission=Permission.AGENTS_READ)
@tag(["agents"])
@query(SearchQuery)
@document_response(SearchOut, 200)
async def search_agents(query: SearchQuery) -> dict[str, Any]:
    """Rank the tenant's agents by meaning (sentence embeddings); each item carries its `score`."""
    hits: list[SearchHit] = await ask_registry(SearchAgents(query.q, query.limit))
    items = [{**hit.agent.to_public(), "score": hit.score} for hit in hits]
    return page(items, len(items), query.limit, 0)


@bp.get("/agents/<agent_id>")
@authorize(Scheme.API_KEY, permission=Permission.AGENTS_READ)
@tag(["agents"])
@document_response(AgentOut, 200)
async def get_agent(agent_id: str) -> dict[str, Any]:
    """One agent."""
    agent: Agent = await ask_registry(GetAgent(parse_uuid(agent_id, "agent_id")))
    return agent.to_public()


@bp.get("/agents/<agent_id>/details")
@authorize(Scheme.API_KEY, permission=Permission.AGENTS_READ)
@tag(["agents"])
@document_response(AgentDetailsOut, 200)
async def agent_details(agent_id: str) -> dict[str, Any]:
    """The agent with its audit activity counts and a summary of its search embedding."""
    details: AgentDetails = await ask_registry(GetAgentDetails(parse_uuid(agent_id, "agent_id")))
    return {
        **details.agent.to_public(),
        "activity": details.activity.to_public(),
        "embedding": details.embedding.to_public(),
    }


@bp.post("/agents/<agent_id>/heartbeat")
@authorize(Scheme.API_KEY, permission=Permission.AGENTS_WRITE)
@tag(["agents"])
@document_request(HeartbeatIn)
@document_response(AgentOut, 200)
async def heartbeat(agent_id: str) -> dict[str, Any]:
    """Record a heartbeat; the body (optional) may set `status`. Refreshes the embedding if stale."""
    checked = parse_uuid(agent_id, "agent_id")
    body = HeartbeatIn()
    if await request.get_data(as_text=False):
        body = parse_model(HeartbeatIn, await read_json())
    agent: Agent = await ask_registry(Heartbeat(checked, body.status))
    return agent.to_public()


@bp.put("/agents/<agent_id>")
@authorize(Scheme.API_KEY, permission=Permission.AGENTS_WRITE)
@tag(["agents"])
@json_body(AgentUpdate)
@document_response(AgentOut, 200)
async def update_agent(agent_id: str, data: AgentUpdate) -> dict[str, Any]:
    """Change some of the agent's fields; fields not sent keep their values."""
    checked = parse_uuid(agent_id, "agent_id")
    changes = {key: getattr(data, key) for key in data.model_fields_set}
    agent: Agent = await ask_registry(UpdateAgent(checked, changes))
    return agent.to_public()


@bp.delete("/agents/<agent_id>")
@authorize(Scheme.API_KEY, permission=Permission.AGENTS_WRITE)
@tag(["agents"])
async def delete_agent(agent_id: str) -> tuple[str, int]:
    """Delete the agent and its embedding (204)."""
    await ask_registry(DeleteAgent(parse_uuid(agent_id, "agent_id")))
    return "", 204
