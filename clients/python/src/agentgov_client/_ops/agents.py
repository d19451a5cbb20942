"""Agents: registration, heartbeats, listing, semantic search, update and deletion."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from agentgov_client._core import ClientCore
from agentgov_client._flow import Call, Flow
from agentgov_client._ops._common import (
    DEFAULT_PAGE_SIZE,
    UNSET,
    Pager,
    as_list,
    body,
    changes,
    model,
    nothing,
    page_of,
    page_query,
    seg,
)
from agentgov_client.models import Agent, AgentDetails, Page


def register_agent(
    core: ClientCore,
    name: str,
    type: str,
    *,
    description: str = "",
    capabilities: Iterable[str] = (),
    owner: str | None = None,
    metadata: Mapping[str, Any] | None = None,
) -> Flow[Agent]:
    """``POST /agents/register`` (Developer+): a new agent (status active) of `type` llm, tool, workflow or
    custom. Raises `ValidationError` for invalid fields. Not retried."""
    payload = body(
        name=name,
        type=type,
        description=description,
        capabilities=as_list(capabilities),
        owner=owner,
        metadata=None if metadata is None else dict(metadata),
    )
    return core.execute(Call("POST", "/agents/register", model(Agent), json=payload))


def get_agent(core: ClientCore, agent_id: str) -> Flow[Agent]:
    """``GET /agents/{id}``. Raises `NotFoundError`, `ValidationError` for a malformed id. Retried."""
    return core.execute(Call("GET", f"/agents/{seg(agent_id)}", model(Agent)))


def get_agent_details(core: ClientCore, agent_id: str) -> Flow[AgentDetails]:
    """``GET /agents/{id}/details``: the agent with its audit activity counts and embedding summary."""
    return core.execute(Call("GET", f"/agents/{seg(agent_id)}/details", model(AgentDetails)))


def list_agents(
    core: ClientCore, *, type: str | None = None, status: str | None = None, limit: int = 50, offset: int = 0
) -> Flow[Page[Agent]]:
    """``GET /agents``: the tenant's agents, oldest first, filtered by `type` and `status`. Retried."""
    query = page_query("offset", offset, limit, type=type, status=status)
    return core.execute(Call("GET", "/agents", page_of(Agent), params=query))


def iter_agents(
    core: ClientCore, *, type: str | None = None, status: str | None = None, page_size: int = DEFAULT_PAGE_SIZE
) -> Pager[Agent]:
    """Every agent matching the filters, page after page (see `list_agents`)."""
    return Pager(
        lambda offset, limit: list_agents(core, type=type, status=status, limit=limit, offset=offset), page_size
    )


def search_agents(core: ClientCore, q: str, *, limit: int = 10) -> Flow[list[Agent]]:
    """``GET /agents/search``: agents ranked by meaning (best first), each with its `score`. Retried."""
    call = Call("GET", "/agents/search", page_of(Agent), params={"q": q, "limit": limit})
    found: Page[Agent] = yield from core.execute(call)
    return found.items


def update_agent(
    core: ClientCore,
    agent_id: str,
    *,
    name: Any = UNSET,
    type: Any = UNSET,
    description: Any = UNSET,
    capabilities: Any = UNSET,
    owner: Any = UNSET,
    metadata: Any = UNSET,
    status: Any = UNSET,
) -> Flow[Agent]:
    """``PUT /agents/{id}``: change the given fields (`description` and `owner` may be None to clear them).
    Raises `NotFoundError`, `ValidationError` (nothing to change, invalid values). Not retried."""
    payload = changes(
        name=name,
        type=type,
        description=description,
        capabilities=capabilities if capabilities is UNSET else as_list(capabilities),
        owner=owner,
        metadata=metadata,
        status=status,
    )
    return core.execute(Call("PUT", f"/agents/{seg(agent_id)}", model(Agent), json=payload))


def delete_agent(core: ClientCore, agent_id: str) -> Flow[None]:
    """``DELETE /agents/{id}``: the agent and its embedding. Raises `NotFoundError`. Not retried."""
    return core.execute(Call("DELETE", f"/agents/{seg(agent_id)}", nothing))


def heartbeat(core: ClientCore, agent_id: str, *, status: str | None = None) -> Flow[Agent]:
    """``POST /agents/{id}/heartbeat``: record a heartbeat, optionally setting `status` (active, inactive or
    error); refreshes a stale search embedding. Raises `NotFoundError`. Not retried."""
    payload = body(status=status) or None
    return core.execute(Call("POST", f"/agents/{seg(agent_id)}/heartbeat", model(Agent), json=payload))
