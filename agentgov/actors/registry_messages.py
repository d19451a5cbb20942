"""The registry actor's messages and replies (the actor is `agentgov.actors.registry`, which re-exports them)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from agentgov.actors.runtime import Request
from agentgov.storage.agents import ActivityCounts, Agent, EmbeddingSummary


class AgentNotFound(Exception):
    """No agent with this id in this tenant."""

    def __init__(self, agent_id: str) -> None:
        super().__init__(f"agent {agent_id} not found")
        self.agent_id = agent_id


# ------------------------------------------------------------------------------------------- messages


@dataclasses.dataclass(frozen=True)
class RegisterAgent(Request[Agent]):
    """Register a new agent (status `active` unless given) -> `Agent`."""

    name: str
    type: str
    description: str = ""
    capabilities: tuple[str, ...] = ()
    owner: str | None = None
    metadata: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    status: str = "active"
    #: Register under this id (a UUID string) instead of a fresh one. Idempotent: if the tenant already
    #: has an agent with this id, that agent is returned unchanged (so a retried registration cannot
    #: create a second agent).
    agent_id: str | None = None


@dataclasses.dataclass(frozen=True)
class GetAgent(Request[Agent]):
    """-> `Agent`; raises `AgentNotFound`."""

    agent_id: str


@dataclasses.dataclass(frozen=True)
class Heartbeat(Request[Agent]):
    """Record a heartbeat, optionally with a new status -> the updated `Agent`.

    Raises `AgentNotFound`, or `ValueError` when `status` is not one of active, inactive, error.
    """

    agent_id: str
    status: str | None = None


@dataclasses.dataclass(frozen=True)
class UpdateAgent(Request[Agent]):
    """Change some fields (keys of `UPDATABLE_FIELDS`) -> the updated `Agent`; raises `AgentNotFound`."""

    agent_id: str
    changes: Mapping[str, Any]


@dataclasses.dataclass(frozen=True)
class DeleteAgent(Request[None]):
    """Delete the agent and its embedding -> None; raises `AgentNotFound`."""

    agent_id: str


@dataclasses.dataclass(frozen=True)
class ListAgents(Request["AgentPage"]):
    """A page of agents, oldest first -> `AgentPage`."""

    agent_type: str | None = None
    status: str | None = None
    limit: int = 50
    offset: int = 0


@dataclasses.dataclass(frozen=True)
class SearchAgents(Request[list["SearchHit"]]):
    """Rank the tenant's agents by meaning against `query` -> up to `limit` `SearchHit`s, best first."""

    query: str
    limit: int = 10


@dataclasses.dataclass(frozen=True)
class GetAgentDetails(Request["AgentDetails"]):
    """-> `AgentDetails`; raises `AgentNotFound`."""

    agent_id: str


@dataclasses.dataclass(frozen=True)
class SetRiskScore(Request[Agent]):
    """Store the agent's current risk score (0..1, or None to clear) -> the updated `Agent`."""

    agent_id: str
    risk_score: float | None


RegistryMessage = (
    RegisterAgent
    | GetAgent
    | Heartbeat
    | UpdateAgent
    | DeleteAgent
    | ListAgents
    | SearchAgents
    | GetAgentDetails
    | SetRiskScore
)


# -------------------------------------------------------------------------------------------- replies


@dataclasses.dataclass(frozen=True)
class AgentPage:
    items: list[Agent]
    total: int


@dataclasses.dataclass(frozen=True)
class SearchHit:
    agent: Agent
    score: float


@dataclasses.dataclass(frozen=True)
class AgentDetails:
    agent: Agent
    embedding: EmbeddingSummary
    activity: ActivityCounts
