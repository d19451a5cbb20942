"""The per-tenant agent registry actor (`registry:<tenant_id>`).

Interface used by other modules:

* `registry(services, tenant_id) -> ActorRef` - the tenant's registry actor, started on first use.
* `await ref.ask(GetAgent(agent_id))` -> `Agent`; raises `AgentNotFound` for an id unknown in this tenant.
* `await ref.ask(Heartbeat(agent_id, status=None))` -> the updated `Agent`; raises `AgentNotFound`, or
  `ValueError` when `status` is not one of active, inactive, error.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from agentgov.actors.runtime import Actor, ActorRef
from agentgov.storage.agents import Agent

if TYPE_CHECKING:
    from agentgov.services import Services


class AgentNotFound(Exception):
    """No agent with this id in this tenant."""

    def __init__(self, agent_id: str) -> None:
        super().__init__(f"agent {agent_id} not found")
        self.agent_id = agent_id


@dataclasses.dataclass(frozen=True)
class GetAgent:
    agent_id: str


@dataclasses.dataclass(frozen=True)
class Heartbeat:
    agent_id: str
    status: str | None = None


class RegistryActor(Actor[Any]):
    """Placeholder; the full actor follows."""


def registry(services: Services, tenant_id: str) -> ActorRef[Any]:
    """The tenant's registry actor (`registry:<tenant_id>`), spawned on first use."""
    raise NotImplementedError


__all__ = ["Agent", "AgentNotFound", "GetAgent", "Heartbeat", "registry"]
